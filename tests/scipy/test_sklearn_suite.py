"""scikit-learn's own array-API tests (``-k array_api``: estimators, metrics, utilities) run on
ruda_wgpu, the router and ruda_remote through the plugin ruda_sklearn_plugin, one subprocess each.

Each run must fail exactly the tests of that namespace listed in KNOWN_FAILURES: a new failure
fails the test, and so does a listed one that passes (then remove it from the list). Failures of
tests that are not about the namespace (scikit-learn's own CuPy tests, where CuPy is installed
without a GPU) are not counted. Slow (about a minute a namespace on two cores): run with
``pytest -m slow tests/scipy``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.scipy.ruda_sklearn_plugin import BACKENDS
from tests.scipy.test_scipy_special_suite import ROOT, assert_failures_are_known

pytest.importorskip("sklearn")

#: the module name scikit-learn's test ids carry for each namespace (see ruda_sklearn_plugin)
MODULES = {"wgpu": "ruda_wgpu", "router": "ruda_router_namespace", "remote": "ruda_remote"}

#: node ids (relative to sklearn) that fail on a namespace, and why
KNOWN_FAILURES: dict[str, dict[str, str]] = {name: {} for name in BACKENDS} | {
    "router": {
        "linear_model/tests/test_ridge.py::test_array_api_error_and_warnings_for_solver_parameter"
        "[ruda_router_namespace]": "the test matches the namespace's __name__ as a regular expression, "
        "unescaped, and the router's, Router((ruda.host, ruda_torch)), has parentheses"
    }
}


def run_sklearn_suite(name: str) -> subprocess.CompletedProcess[str]:
    """scikit-learn's array-API tests on the ruda namespace ``name``, in a child pytest."""
    command = [
        sys.executable, "-m", "pytest", "--pyargs", "sklearn", "-k", "array_api",
        "-p", "tests.scipy.ruda_sklearn_plugin", "--ruda-backend", name,
        "-q", "-p", "no:cacheprovider", "-rfE", "--tb=line", "-W", "ignore",
    ]  # fmt: skip
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)


@pytest.mark.slow
@pytest.mark.timeout(1560)  # the suite's own process has 1500 s
@pytest.mark.parametrize("name", BACKENDS)
def test_sklearn_array_api_suite(name):
    result = run_sklearn_suite(name)
    output = result.stdout + result.stderr
    assert_failures_are_known(output, name, set(KNOWN_FAILURES[name]), lambda node: MODULES[name] in node)
