"""Compare a backend's result with NumPy's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ruda._array import dlpack_flags
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
    consumer may write into, a versioned capsule saying it is a copy (``IS_COPIED``);
    ``copy=False`` and another DLPack device raise ``BufferError``
    (``np.asarray(x, copy=False)``: ``ValueError``), and so does a stream (only None is taken
    on a device without streams: ``ValueError``)."""
    import pytest

    assert x.__dlpack_device__() == (1, 0)
    for host in (np.from_dlpack(x), np.asarray(x)):
        np.testing.assert_array_equal(host, expected, strict=True)
        host[(0,) * host.ndim] = 1 - host[(0,) * host.ndim]  # the consumer owns its copy
    np.testing.assert_array_equal(np.asarray(x), expected)
    assert dlpack_flags(x.__dlpack__(max_version=(1, 0))).value & 2, "DLPACK_FLAG_BITMASK_IS_COPIED unset"
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
    ``ruda._array.HostCopyExport``) convert to Python scalars as NumPy's (2.4 on) do: ``bool``
    of one element of any rank (``ValueError`` for more or none); ``int``, ``float``, ``complex``
    and ``operator.index`` of 0-D arrays only (``operator.index`` of integer ones); ``int`` of a
    non-finite float refused as Python refuses it; and ``format`` with a spec of 0-D arrays only
    (``f"{x:.3f}"``)."""
    import operator

    import pytest

    assert bool(xp.asarray(True)) is True and bool(xp.asarray([0.0])) is False
    assert bool(xp.asarray([[1]])) is True
    assert int(xp.asarray(-7, dtype=xp.int8)) == -7 and int(xp.asarray(2.9)) == 2
    assert float(xp.asarray(2.5)) == 2.5 and complex(xp.asarray(1.5)) == 1.5 + 0j
    assert operator.index(xp.asarray(3, dtype=xp.uint16)) == 3
    with pytest.raises(TypeError, match="only integer arrays"):
        operator.index(xp.asarray(3.0))
    with pytest.raises(TypeError, match="only a 0-D array"):
        operator.index(xp.asarray([3]))  # NumPy refuses it too: a 1-D index is a fancy index
    for convert in (int, float, complex):
        with pytest.raises(TypeError, match="only a 0-D array"):
            convert(xp.ones((1,)))  # NumPy 2.4 refuses it too
    for shape in ((2,), (0, 3)):
        with pytest.raises(ValueError, match="ambiguous"):
            bool(xp.ones(shape))
    with pytest.raises(OverflowError):
        int(xp.asarray(float("inf")))
    with pytest.raises(ValueError):
        int(xp.asarray(float("nan")))
    assert f"{xp.asarray(2.5):.3f}" == "2.500" and f"{xp.asarray(7, dtype=xp.int32):>3}" == "  7"
    assert f"{xp.ones((2,))}" == str(xp.ones((2,)))
    with pytest.raises(TypeError, match="format"):
        f"{xp.ones((2,)):.3f}"


def assert_numpy_ufuncs_run_in_namespace(xp: Any, device: Any = None) -> None:
    """Assert that NumPy's ufuncs on arrays of namespace ``xp`` (an array type built on
    ``ruda._ufuncs.NumpyUfuncs``) on ``device`` are computed by ``xp`` and give its arrays on
    that device, equal to NumPy's:
    elementwise functions, ``matmul``, NumPy scalars as operands (on either side of a
    comparison), and the reductions ``np.sum``,
    ``np.prod``, ``np.max``, ``np.min``, ``np.all``, ``np.any``; and that what ``xp`` has no
    function for raises TypeError rather than copy to the host."""
    import pytest

    a = np.array([1.5, -2.0, np.inf, np.nan], np.float32)
    x = xp.asarray(a, device=device)
    for got, want in [
        (np.abs(x), np.abs(a)),
        (np.isfinite(x), np.isfinite(a)),
        (np.arctan2(x, x), np.arctan2(a, a)),
        (np.multiply(2.0, x), 2.0 * a),
        (np.float32(2.0) * x, np.float32(2.0) * a),
        # NumPy hands a scalar on the left of a comparison as a 0-d array
        (np.float32(1.5) < x, np.float32(1.5) < a),
        (np.int64(-2) == x, np.int64(-2) == a),
        (np.asin(xp.asarray(np.array([0.5], np.float32), device=device)), np.asin(np.float32(0.5))[None]),
        (np.matmul(x[:2, None], x[None, :2]), np.matmul(a[:2, None], a[None, :2])),
    ]:
        assert type(got) is type(x) and got.device == x.device
        assert_matches_numpy(got, want)
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = xp.asarray(h, device=device)
    for got, want in [
        (np.sum(m), np.sum(h)),
        (np.sum(m, axis=1, keepdims=True), np.sum(h, axis=1, keepdims=True)),
        (np.add.reduce(m), np.add.reduce(h)),  # the first axis, as NumPy's
        (np.prod(m[:, :2], axis=0), np.prod(h[:, :2], axis=0)),
        (np.max(m, axis=(0, 1)), np.max(h)),
        (np.min(m, axis=0), np.min(h, axis=0)),
        (np.all(m > 0, axis=1), np.all(h > 0, axis=1)),
        (np.any(m > 10), np.any(h > 10)),
    ]:
        assert type(got) is type(x) and got.device == x.device
        assert_matches_numpy(got, want)
    with pytest.raises(TypeError, match=r"numpy.add.reduce\(\) with where= does not run"):
        np.sum(m, axis=0, where=np.ones((3, 4), bool))  # keywords the namespace has not
    with pytest.raises(TypeError, match="has no reduction of subtract"):
        np.subtract.reduce(m)
    with pytest.raises(TypeError, match="numpy.add.accumulate"):
        np.add.accumulate(m)  # other ufunc methods: no silent host copy
    with pytest.raises(TypeError, match="out="):
        np.add(x, x, out=x)
    with pytest.raises(TypeError, match="numpy.cbrt"):
        np.cbrt(x)  # not one of the standard's functions
    # no silent transfer; each type's own error says how to move the data
    with pytest.raises(TypeError):
        np.add(a, x)
    with pytest.raises(TypeError):
        a + x
    with pytest.raises(TypeError):
        a @ x
