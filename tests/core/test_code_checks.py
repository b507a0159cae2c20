"""The repository's own checks, run with the tests so that CI enforces them: ruff's lint and
format rules on every file, and mypy (strict) on the packages pyproject.toml lists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


NO_RUFF = "ruff is not installed (requirements-dev.txt has it)"


@pytest.mark.skipif(shutil.which("ruff") is None, reason=NO_RUFF)
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff(command: list[str]) -> None:
    done = _run("ruff", *command)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (requirements-dev.txt has it)")
    done = _run(sys.executable, "-m", "mypy")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
