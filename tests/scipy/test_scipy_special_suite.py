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
from pathlib import Path

import pytest

from tests.scipy.ruda_namespaces import NAMES

ROOT = Path(__file__).resolve().parents[2]

#: SciPy takes float64 as the default float of every namespace but torch's; ruda_wgpu's is
#: float32 (what ``xp.asarray(1.0)`` gives, as on most GPUs), which SciPy's tests expect of
#: integer input where SciPy's functions return float64
_SCIPY_DEFAULT_FLOAT = (
    "SciPy computes integer input in float64; its test expects the namespace's default, float32"
)

#: node ids (relative to scipy/special) that fail on a namespace, and why
KNOWN_FAILURES: dict[str, dict[str, str]] = {name: {} for name in NAMES} | {
    "wgpu": {
        f"tests/test_{test}": _SCIPY_DEFAULT_FLOAT
        for test in (
            "logsumexp.py::TestLogSumExp::test_logsumexp[ruda-wgpu]",
            "logsumexp.py::TestLogSumExp::test_logsumexp_sign[ruda-wgpu]",
            "logsumexp.py::TestLogSumExp::test_logsumexp_b_zero[ruda-wgpu]",
            "logsumexp.py::TestLogSumExp::test_dtypes_a[ruda-wgpu-int32]",
            "logsumexp.py::TestLogSumExp::test_dtypes_a[ruda-wgpu-int64]",
            "support_alternative_backends.py::test_support_alternative_backends_mismatched_dtypes[ruda-wgpu-rel_entr]",
            "support_alternative_backends.py::test_support_alternative_backends_mismatched_dtypes[ruda-wgpu-xlogy]",
        )
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


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_scipy_special_array_api_suite(name):
    result = run_scipy_suite(name)
    output = result.stdout + result.stderr
    counts = summary_counts(output)
    assert counts.get("passed", 0) > 1000, output[-3000:]
    failing = set(re.findall(r"^(?:FAILED|ERROR) (\S+)", output, flags=re.MULTILINE))
    known = set(KNOWN_FAILURES[name])
    assert not failing - known, f"new failures on {name}: {sorted(failing - known)}\n{output[-3000:]}"
    fixed = sorted(known - failing)
    assert not fixed, f"now passing on {name}, remove from KNOWN_FAILURES: {fixed}"
