"""The repository's own checks, run with the tests so that CI enforces them: ruff's lint and
format rules on every file, mypy (strict) on the packages pyproject.toml lists, and the
benchmark tables READMEs quote against the results files they come from."""

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


#: benchmarks whose ``--markdown`` table a README quotes, from the results files kept in
#: benchmarks/results/ (a new run changes the files and must change the README with them)
QUOTED_TABLES = [
    ("wgpu_fft_solve", "packages/ruda-wgpu/README.md"),
    ("wgpu_small_linalg", "packages/ruda-wgpu/README.md"),
    ("wgpu_sort", "packages/ruda-wgpu/README.md"),
    ("wgpu_large", "packages/ruda-wgpu/README.md"),
    ("wgpu_reduce", "packages/ruda-wgpu/README.md"),
    ("wgpu_matmul", "packages/ruda-wgpu/README.md"),
    ("wgpu_accuracy", "packages/ruda-wgpu/README.md"),
    ("wgpu_overhead", "packages/ruda-wgpu/README.md"),
    ("wgpu_startup", "packages/ruda-wgpu/README.md"),
    ("wgpu_solver", "packages/ruda-wgpu/README.md"),
    ("wgpu_calls", "packages/ruda-wgpu/README.md"),
    ("cuda_bandwidth", "packages/ruda-cuda/README.md"),
    ("cuda_launch", "packages/ruda-cuda/README.md"),
    ("cuda_fusion", "packages/ruda-cuda/README.md"),
    ("cubed_scale", "README.md"),
]


@pytest.mark.parametrize(("script", "readme"), QUOTED_TABLES, ids=[b for b, _ in QUOTED_TABLES])
def test_readme_tables_are_the_results_files(script: str, readme: str) -> None:
    pytest.importorskip("ruda_wgpu", reason="ruda-wgpu is not installed")
    done = _run(sys.executable, f"benchmarks/{script}.py", "--markdown")
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout.strip()
    assert table.count("\n") >= 2, f"{script} --markdown printed no rows: {table!r}"
    assert table in (ROOT / readme).read_text(), (
        f"{readme} does not quote `python3 benchmarks/{script}.py --markdown` as it prints now:\n{table}"
    )


#: the READMEs' first Python examples that run on any machine (the others need a GPU, a server
#: or Cubed's executors), with the backends they compute on
RUNNABLE_EXAMPLES = [
    ("README.md", ()),
    ("packages/ruda-core/README.md", ("wgpu",)),
    ("packages/ruda-torch/README.md", ("torch",)),
    ("packages/ruda-wgpu/README.md", ("wgpu",)),
]


@pytest.mark.parametrize(("readme", "needs"), RUNNABLE_EXAMPLES, ids=[r for r, _ in RUNNABLE_EXAMPLES])
def test_readme_examples_run(readme: str, needs: tuple[str, ...]) -> None:
    """The example a README opens with runs as written (the core's had used an undefined name)."""
    import ruda

    status = {b.name: b for b in ruda.backends()}
    for name in needs:
        if name not in status or not status[name].available:
            pytest.skip(f"backend {name} cannot run here")
    text = (ROOT / readme).read_text()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    done = _run(sys.executable, "-c", example)
    assert done.returncode == 0, f"{readme}'s example failed:\n{example}\n{done.stderr[-3000:]}"
