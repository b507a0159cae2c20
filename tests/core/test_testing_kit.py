"""The testing kit must catch wrong results: each comparison is shown to fail when it should."""

from __future__ import annotations

import numpy as np
import pytest
import ruda
from ruda.testing import (
    assert_matches_numpy,
    backend_params,
    parametrize_backends,
    python_output,
    tolerance_for,
)


def test_matching_results_pass() -> None:
    x = ruda.host.asarray([1.0, 2.0, float("nan")], dtype=ruda.host.float32)
    assert_matches_numpy(x, np.array([1.0, 2.0 + 1e-7, np.nan], dtype=np.float32))


@pytest.mark.parametrize(
    ("got", "want", "message"),
    [
        (np.array([1, 2], dtype=np.int32), np.array([1, 2], dtype=np.int64), "dtype int32 != expected int64"),
        (np.zeros((2, 1)), np.zeros((2,)), "shape"),
        (np.array([1, 2], dtype=np.int8), np.array([1, 3], dtype=np.int8), "Mismatch"),
        (np.array([1.0], dtype=np.float32), np.array([1.001], dtype=np.float32), "Not equal to tolerance"),
        (np.array([np.nan]), np.array([0.0]), "nan"),
        (np.array([np.inf]), np.array([-np.inf]), "inf"),
    ],
)
def test_mismatches_fail(got: np.ndarray, want: np.ndarray, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        assert_matches_numpy(got, want)


def test_tolerances_follow_the_dtype() -> None:
    assert tolerance_for("int64") == (0.0, 0.0)
    assert tolerance_for("float16")[0] > tolerance_for("float32")[0] > tolerance_for("float64")[0]


def test_backend_params_skips_missing_backends_with_the_reason() -> None:
    params = {p.id: p for p in backend_params(["host", "gpux"])}
    assert params["host"].values == (ruda.host,) and not params["host"].marks
    (mark,) = params["gpux"].marks
    assert mark.name == "skip" and "unknown backend 'gpux'" in mark.kwargs["reason"]


def test_backend_params_respects_the_environment_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUDA_TEST_BACKENDS", "nothing")
    assert backend_params() == []


@parametrize_backends()
def test_every_available_backend_sums_like_numpy(xp) -> None:  # type: ignore[no-untyped-def]
    x = xp.reshape(xp.arange(12, dtype=xp.float32), (3, 4))
    assert_matches_numpy(xp.sum(x, axis=0), np.arange(12, dtype=np.float32).reshape(3, 4).sum(axis=0))


def test_the_kit_without_pytest_says_what_installs_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['pytest'] = None  # (as if it were not installed)\n"
        "try:\n"
        "    import ruda.testing\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    assert 'pip install "ruda[testing]"' in python_output(code)
