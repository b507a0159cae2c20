"""SciPy's own array-API tests of scipy.special, run on each ruda namespace through the plugin
ruda_scipy_plugin (SciPy's ``xp`` fixture given ruda namespaces), one subprocess per namespace.

Each run must fail exactly the tests listed in KNOWN_FAILURES, with the causes given there: a new
failure fails the test, and so does a listed one that passes (then remove it from the list).
Slow (about 15 s a namespace on two cores): run with ``pytest -m slow tests/scipy``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.scipy.ruda_namespaces import NAMES

ROOT = Path(__file__).resolve().parents[2]

#: ruda_wgpu promotes an integer with float32 to float32, as PyTorch does (NumPy's float64 would
#: ask for float64 on GPUs without it); SciPy's reference is NumPy's, and it allows for this only
#: on torch with a float32 default
_INT_WITH_FLOAT32 = "int64 with float32 gives float32 (as in PyTorch); SciPy's NumPy reference float64"

#: node ids (relative to scipy/special) that fail on a namespace, and why
KNOWN_FAILURES: dict[str, dict[str, str]] = {name: {} for name in NAMES} | {
    "wgpu": {
        "tests/test_support_alternative_backends.py::test_support_alternative_backends_mismatched_dtypes"
        f"[ruda-wgpu-{function}]": _INT_WITH_FLOAT32
        for function in ("rel_entr", "xlogy")
    }
}


def run_scipy_suite(name: str, package: str = "scipy.special") -> subprocess.CompletedProcess[str]:
    """SciPy's array-API tests of ``package`` on the ruda namespace ``name``, in a child pytest."""
    command = [
        sys.executable, "-m", "pytest", "--pyargs", package,
        "-p", "tests.scipy.ruda_scipy_plugin", "--ruda-backend", name,
        "-m", "array_api_backends", "-q", "-p", "no:cacheprovider", "-rfE", "--tb=line",
        "-W", "ignore",
    ]  # fmt: skip
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def summary_counts(output: str) -> dict[str, int]:
    """The counts of pytest's last summary line: {"passed": n, "failed": n, ...}."""
    last = output.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last)}


def assert_failures_are_known(
    output: str, name: str, known: set[str], about: Callable[[str], bool] = lambda node: True
) -> None:
    """Assert that a child pytest's ``output`` (run with ``-rfE``) passed more than 1000 tests and
    failed exactly the node ids ``known`` among those ``about`` selects, on namespace ``name``."""
    counts = summary_counts(output)
    assert counts.get("passed", 0) > 1000, output[-3000:]
    reported = re.findall(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, flags=re.MULTILINE)
    failing = {node for node in reported if about(node)}
    assert not failing - known, f"new failures on {name}: {sorted(failing - known)}\n{output[-3000:]}"
    fixed = sorted(known - failing)
    assert not fixed, f"now passing on {name}, remove from the known failures: {fixed}"


@pytest.mark.slow
@pytest.mark.timeout(960)  # the suite's own process has 900 s
@pytest.mark.parametrize("name", NAMES)
def test_scipy_special_array_api_suite(name):
    result = run_scipy_suite(name)
    assert_failures_are_known(result.stdout + result.stderr, name, set(KNOWN_FAILURES[name]))
