"""nansum, nanprod, nanmean, nanmin, nanmax on every namespace that binds them, against NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ruda.testing import assert_matches_numpy, parametrize_backends

NAN_FUNCTIONS = ["nansum", "nanprod", "nanmean", "nanmin", "nanmax"]


def _data() -> np.ndarray:
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    x[0, 1, :] = np.nan  # an all-NaN slice along the last axis
    x[1, :, 2] = np.nan
    x[2, 3, 4] = np.nan
    return x


@parametrize_backends("host", "torch", "wgpu", "cuda")
@pytest.mark.parametrize("name", NAN_FUNCTIONS)
def test_nan_reductions_match_numpy(xp, name):
    host = _data()
    x = xp.asarray(host)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on all-NaN slices
        for axis in (None, 0, -1, (0, 2)):
            for keepdims in (False, True):
                want = np.asarray(getattr(np, name)(host, axis=axis, keepdims=keepdims))
                got = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
                assert_matches_numpy(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} axis={axis}")


@parametrize_backends("host", "torch", "wgpu", "cuda")
def test_nan_reductions_of_integers_are_the_plain_ones(xp):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = xp.asarray(host)
    # NumPy sums int32 in int64; a namespace, in its default integer dtype (int32 on a WebGPU
    # device without 64-bit integers)
    total = xp.nansum(x, axis=0)
    assert total.dtype == xp.__array_namespace_info__().default_dtypes()["integral"]
    assert_matches_numpy(total, np.nansum(host, axis=0), check_dtype=False)
    assert_matches_numpy(xp.nanmax(x, axis=1), np.nanmax(host, axis=1))
    assert_matches_numpy(xp.nanmean(xp.asarray(host.astype(np.float32))), np.float32(5.5))


@parametrize_backends("host", "torch", "wgpu", "cuda")
@pytest.mark.parametrize("name", NAN_FUNCTIONS)
def test_nan_reductions_of_no_array_raise_type_error_naming_the_function(xp, name):
    """A list or a Python number raised AttributeError from reading its dtype; another library's
    array, an error from the first function called on it (isnan(), isdtype()), naming neither."""
    for value in ([1.0, float("nan")], 2.5):
        with pytest.raises(TypeError, match=rf"{name}\(\) takes an array of ruda\S*, not (list|float)"):
            getattr(xp, name)(value)
    if xp.__name__ == "ruda.host":  # (NumPy's arrays are its own)
        torch = pytest.importorskip("torch")
        other = torch.tensor([1.0, float("nan")])
    else:
        other = np.array([1.0, np.nan])
    with pytest.raises(
        TypeError, match=rf"^{name}\(\) takes an array of ruda\S*, not {type(other).__name__}"
    ):
        getattr(xp, name)(other)
