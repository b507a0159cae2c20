"""Compare a backend's result with NumPy's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ruda._tensordata import to_numpy

# (rtol, atol) by dtype kind and size: loose enough for GPU transcendental
# functions, tight enough that a wrong kernel fails.
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (2e-3, 1e-3),
    "float32": (2e-5, 1e-6),
    "float64": (1e-11, 1e-13),
    "complex64": (2e-5, 1e-6),
    "complex128": (1e-11, 1e-13),
}


def tolerance_for(dtype: Any) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing values of ``dtype``; ``(0, 0)`` for exact dtypes."""
    return _TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


def assert_matches_numpy(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    check_dtype: bool = True,
    err_msg: str = "",
) -> None:
    """Assert that a backend array equals NumPy's result.

    ``actual`` is an array of any backend (read back through DLPack or the
    buffer protocol); ``expected`` is what NumPy computed. The dtype names must
    be equal (unless ``check_dtype=False``), the shapes equal, integers and
    booleans exactly equal, floats equal within the dtype's tolerance, NaNs in
    the same places and signed infinities equal.
    """
    got = to_numpy(actual)
    want = np.asarray(expected)
    where = f" {err_msg}" if err_msg else ""
    if check_dtype and got.dtype.name != want.dtype.name:
        raise AssertionError(f"dtype {got.dtype.name} != expected {want.dtype.name}{where}")
    if got.shape != want.shape:
        raise AssertionError(f"shape {got.shape} != expected {want.shape}{where}")
    default_rtol, default_atol = tolerance_for(got.dtype)
    if got.dtype.kind in "fc" or want.dtype.kind in "fc":
        np.testing.assert_allclose(
            got,
            want,
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol,
            equal_nan=True,
            err_msg=err_msg,
        )
    else:
        np.testing.assert_array_equal(got, want, err_msg=err_msg, strict=False)


def assert_exports_host_copies(x: Any, expected: np.ndarray[Any, Any]) -> None:
    """Assert that ``x``, an array whose class exports host copies (``ruda._array.HostCopyExport``:
    ruda_wgpu's, ruda_remote's), holds ``expected`` and exports it as the standard asks of such
    an array: DLPack device ``(1, 0)``; ``np.from_dlpack`` and ``np.asarray`` give copies the
    consumer may write into; ``copy=False`` and another DLPack device raise ``BufferError``
    (``np.asarray(x, copy=False)``: ``ValueError``), and so does a stream (only None is taken
    on a device without streams: ``ValueError``)."""
    import pytest

    assert x.__dlpack_device__() == (1, 0)
    for host in (np.from_dlpack(x), np.asarray(x)):
        np.testing.assert_array_equal(host, expected, strict=True)
        host[(0,) * host.ndim] = 1 - host[(0,) * host.ndim]  # the consumer owns its copy
    np.testing.assert_array_equal(np.asarray(x), expected)
    with pytest.raises(BufferError, match="only a host copy"):
        x.__dlpack__(copy=False)
    with pytest.raises(ValueError, match="only as a copy"):
        np.asarray(x, copy=False)
    with pytest.raises(BufferError, match=r"device \(1, 0\), not \(2, 0\)"):
        x.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError, match="stream=None"):
        x.__dlpack__(stream=1)


def assert_python_scalar_conversions(xp: Any) -> None:
    """Assert that the arrays of namespace ``xp`` (one whose array class is a
    ``ruda._array.HostCopyExport``) convert to Python scalars as NumPy's do: ``bool``, ``int``,
    ``float`` and ``complex`` of one element of any rank, ``operator.index`` of 0-D integer
    arrays only, ``int`` of a non-finite float refused as Python refuses it, and ``format`` with
    a spec of 0-D arrays only (``f"{x:.3f}"``)."""
    import operator

    import pytest

    assert bool(xp.asarray(True)) is True and bool(xp.asarray([0.0])) is False
    assert int(xp.asarray(-7, dtype=xp.int8)) == -7 and int(xp.asarray([[2.9]])) == 2
    assert float(xp.asarray(2.5)) == 2.5 and complex(xp.asarray(1.5)) == 1.5 + 0j
    assert operator.index(xp.asarray(3, dtype=xp.uint16)) == 3
    with pytest.raises(TypeError, match="only integer arrays"):
        operator.index(xp.asarray(3.0))
    with pytest.raises(TypeError, match="only a 0-D array"):
        operator.index(xp.asarray([3]))  # NumPy refuses it too: a 1-D index is a fancy index
    with pytest.raises(TypeError, match="only a one-element array"):
        float(xp.ones((2,)))
    with pytest.raises(OverflowError):
        int(xp.asarray(float("inf")))
    with pytest.raises(ValueError):
        int(xp.asarray(float("nan")))
    assert f"{xp.asarray(2.5):.3f}" == "2.500" and f"{xp.asarray(7, dtype=xp.int32):>3}" == "  7"
    assert f"{xp.ones((2,))}" == str(xp.ones((2,)))
    with pytest.raises(TypeError, match="format"):
        f"{xp.ones((2,)):.3f}"
