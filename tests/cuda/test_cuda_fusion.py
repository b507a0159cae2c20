"""ruda_cuda's fusion: pending elementwise chains, one generated kernel each, computed when read;
every elementwise function on every dtype gives the bits it gives unfused."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import ruda
from ruda import spec
from ruda.testing import assert_same_bits, edge_operands, python_output, switched

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)

import cupy  # noqa: E402
import ruda_cuda as xp  # noqa: E402
from ruda_cuda import _fused_kernels, _fusion  # noqa: E402
from ruda_cuda._fusion import LazyArray  # noqa: E402
from ruda_cuda._kernels import STREAM_MIN_SIZE  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture
def fused() -> Iterator[None]:
    previous = _fusion.set_enabled(True)
    yield
    _fusion.set_enabled(previous)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each computed chain ran: "eager" (one call, unfused) or "fused" (a generated kernel)."""
    log: list[str] = []
    original = _fusion._run

    def run(node: Any) -> Any:
        single = not any(isinstance(a, _fusion.Node) and a.value is None for a in node.args)
        log.append("eager" if single else "fused")
        return original(node)

    monkeypatch.setattr(_fusion, "_run", run)
    return log


def _unfused(fn: Callable[[], Any]) -> Any:
    return switched(_fusion.set_enabled, False, fn)


def _host(x: Any) -> np.ndarray:
    return np.asarray(x)


def test_a_chain_waits_and_runs_as_one_kernel(fused, runs):
    host = np.linspace(-3, 3, 1001, dtype=np.float32)
    x = xp.asarray(host)
    y = xp.sqrt(xp.exp(xp.sin(x) * 0.5) + 1.0)
    assert isinstance(y, LazyArray) and not runs
    assert (y.shape, y.dtype, y.device, y.ndim, y.size) == ((1001,), xp.float32, x.device, 1, 1001)
    assert y.__array_namespace__() is xp
    got = _host(y)
    assert runs == ["fused"]
    np.testing.assert_allclose(got, np.sqrt(np.exp(np.sin(host) * 0.5) + 1), rtol=2e-6)
    assert type(xp.asarray(y)) is xp.Array  # computed once, then the same array
    assert runs == ["fused"]


def test_one_call_runs_the_unfused_function(fused, runs):
    x = xp.asarray(np.arange(5.0))
    assert _host(xp.exp(x)).tolist() == np.exp(np.arange(5.0)).tolist()
    assert runs == ["eager"]


def test_switched_off_functions_compute_at_once():
    x = xp.asarray([1.0, 2.0])
    assert type(_unfused(lambda: xp.exp(x) + 1)) is xp.Array


def test_operators_wait_too_and_cupy_runs_at_once_inside_functions(fused, runs):
    x = xp.asarray([1.0, 2.0, 3.0])
    pending = x * 2 + 1
    assert isinstance(pending, LazyArray) and isinstance(-x, LazyArray)
    assert isinstance(xp.asarray([3, 4]) // 2, LazyArray)  # integers: a plain ufunc
    assert isinstance(pending * np.float64(2), LazyArray) and isinstance(2 - pending, LazyArray)
    assert isinstance(x + pending, LazyArray) and isinstance(cupy.asarray(x) + pending, LazyArray)
    assert _host(x + pending).tolist() == [4.0, 7.0, 10.0]
    assert _host(abs(-pending) ** 2).tolist() == [9.0, 25.0, 49.0]
    assert _host(pending < 4).tolist() == [True, False, False]
    # inside a namespace function (here CuPy's norm, which uses operators) nothing waits
    assert isinstance(xp.linalg.vector_norm(x * 1.0), xp.Array)


def test_bad_input_is_reported_at_the_call(fused):
    a, b = xp.ones((3,)), xp.ones((4,))
    with pytest.raises(ValueError):
        xp.add(xp.exp(a), b)
    with pytest.raises(TypeError):
        xp.bitwise_and(xp.exp(a), a)
    with pytest.raises(TypeError):
        xp.add(xp.exp(a), "text")
    with pytest.raises(TypeError, match=r"for \*: 'LazyArray' and 'str'"):  # not an index error
        xp.exp(a) * "text"


def test_pending_arrays_computed_where_they_are_used(fused):
    host = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(host)
    t = x * 2 + 1
    assert _host(xp.sum(t, axis=0)).tolist() == (host * 2 + 1).sum(axis=0).tolist()
    assert _host(xp.reshape(x * 2, (4, 3))).tolist() == (host * 2).reshape(4, 3).tolist()
    assert _host(xp.stack([x + 1, x - 1])).shape == (2, 3, 4)
    assert _host((x + 1)[1, 2:]).tolist() == [7.0, 8.0]
    assert float((x * 0.5)[2, 3]) == 5.5 and int(xp.sum(x > 5)) == 6 and bool(xp.all(x >= 0))
    assert cupy.asarray(x + 1).shape == (3, 4)  # CuPy takes it through __cuda_array_interface__
    assert ruda.to_numpy(x - 1).tolist() == (host - 1).tolist()
    assert "11." in repr(x + 0) and xp.matmul(x + 0, xp.ones((4,))).shape == (3,)
    assert xp.result_type(x + 1, xp.float32) == xp.float64 and xp.finfo(x + 1).bits == 64


def test_writes_wait_for_pending_readers(fused):
    x = xp.asarray([1.0, 2.0, 3.0])
    doubled, view_sum = x * 2, x[1:] + 0  # the second reads a view of x's memory
    x[0] = 100.0
    x += 1.0
    assert _host(doubled).tolist() == [2.0, 4.0, 6.0] and _host(view_sum).tolist() == [2.0, 3.0]
    assert _host(x).tolist() == [101.0, 3.0, 4.0]


def test_a_raw_kernel_launch_waits_for_pending_readers_of_its_arguments(fused):
    """A kernel of ruda_cuda.kernel may write any array it is given: a pending result that read
    one (``expected = 2 * x + y`` before a SAXPY kernel wrote y) had been computed after it."""
    from ruda_cuda.kernel import Module

    source = 'extern "C" __global__ void bump(float* y, float* z) { y[threadIdx.x]++; z[threadIdx.x] = 7; }'
    module = Module.compile(source)
    y = xp.asarray([1.0, 2.0], dtype=xp.float32)
    before, pending = y * 2, xp.asarray([0.0, 0.0], dtype=xp.float32) + 1  # the second is passed
    assert isinstance(pending, LazyArray) and before._node.value is None
    module.bump[1, 2](y, pending)
    assert _host(before).tolist() == [2.0, 4.0] and _host(y).tolist() == [2.0, 3.0]
    assert _host(pending).tolist() == [7.0, 7.0]


def test_a_write_into_a_computed_operand_waits_for_its_pending_readers(fused):
    """``y = t + 0`` recorded while ``t`` was pending reads ``t``'s node; once ``t`` is computed
    (a view of it made), a write into it must compute ``y`` first. It had not: the check looked
    only through pending operands, and ``y`` then read the written values (found by the random
    programs: ``t *= t[::-1]`` squared ``y``)."""
    t = xp.asarray([1, 2, 3], dtype=xp.int32) - 5
    y, z = t + 0, t[None, :] * 1  # (the second broadcasts: a node over another shape reads it too)
    assert _host(t[::-1]).tolist() == [-2, -3, -4]  # a view: computes t
    assert t._node.value is not None and y._node.value is None
    t *= 2
    t[0] = 100
    assert _host(y).tolist() == [-4, -3, -2] and _host(z).tolist() == [[-4, -3, -2]]
    assert _host(t).tolist() == [100, -6, -4]


def test_in_place_operators_on_pending_arrays(fused):
    x = xp.asarray([1, 2, 3], dtype=xp.int32)
    t = x * 2
    t += 1
    assert isinstance(t, LazyArray) and t._node.value is None  # still pending: one chain
    assert _host(t).tolist() == [3, 5, 7]
    t //= 2  # computed now: in place on the computed array
    assert _host(t).tolist() == [1, 2, 3] and _host(x).tolist() == [1, 2, 3]
    with pytest.raises(TypeError):
        u = x * 2
        u /= 2  # would make an int32 array float


def test_long_loops_run_in_bounded_kernels(fused, runs):
    x = xp.asarray(np.linspace(0, 1, 100, dtype=np.float32))
    t = x
    for _ in range(100):
        t = t * 0.5 + 1.0
    got = _host(t)
    assert runs.count("fused") == -(-200 // _fusion.MAX_STEPS)
    want = _unfused(lambda: _loop(x))
    assert_same_bits(got, _host(want))


def _loop(x: Any) -> Any:
    t = x
    for _ in range(100):
        t = t * 0.5 + 1.0
    return t


def test_kernels_are_reused_whatever_the_scalars(fused):
    x = xp.asarray(np.arange(8.0))
    _host(xp.exp(x * 1.5) + 2.0)
    compiled = _fused_kernels.elementwise_kernel.cache_info().currsize
    for k in range(5):
        _host(xp.exp(x * (k + 0.25)) + float(k))
    assert _fused_kernels.elementwise_kernel.cache_info().currsize == compiled


def test_broadcast_operands_and_shared_intermediates(fused):
    a = xp.asarray(np.linspace(-1, 1, 3).reshape(3, 1))
    b = xp.asarray(np.linspace(0, 2, 4, dtype=np.float32))

    def run() -> Any:
        t = xp.exp(a)
        u = t + b
        return t * u - xp.sin(u)

    got, want = _host(run()), _host(_unfused(run))
    assert got.shape == (3, 4)
    assert_same_bits(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1000, 3 * STREAM_MIN_SIZE + 3])
def test_products_are_not_contracted_into_fma(fused, runs, dtype, n):
    rng = np.random.default_rng(3)
    x, y, z = (xp.asarray((rng.standard_normal(n) * 3).astype(dtype)) for _ in range(3))

    def run() -> Any:
        return (x * y + z) * (y - x * z) - x * x

    assert_same_bits(_host(run()), _host(_unfused(run)))
    assert runs == ["fused"]


def test_the_vectorised_kernel_takes_large_contiguous_chains(fused):
    n = 2 * STREAM_MIN_SIZE + 5
    x = xp.asarray(np.linspace(-2, 2, n, dtype=np.float32))

    def run(v: Any) -> Any:
        return xp.sqrt(xp.sin(v) * v + 2.5) - 1.0

    compiled = _fused_kernels.stream_kernel.cache_info().currsize
    assert_same_bits(_host(run(x)), _host(_unfused(lambda: run(x))))
    assert _fused_kernels.stream_kernel.cache_info().currsize == compiled + 1
    assert_same_bits(_host(run(x[1:])), _host(_unfused(lambda: run(x[1:]))))  # unaligned: generic kernel


def test_python_scalars_promote_weakly_as_unfused(fused):
    i8 = xp.asarray([1, -2, 100], dtype=xp.int8)
    f32 = xp.asarray([0.1, -2.5, 3.0], dtype=xp.float32)
    cases = [
        lambda: (i8 + 1) * 3,
        lambda: (f32 * 0.1 + 1) / 3,
        lambda: (2.5 - f32) ** 2,
        lambda: (i8 * 2) * 0.5,  # a float scalar above an integer array's kind: float64
        lambda: (f32 > 0.1) & True,
        lambda: (i8 + 0) == 100,
    ]
    for case in cases:
        got, want = case(), _unfused(case)
        assert got.dtype == want.dtype
        assert_same_bits(_host(got), _host(want))


def test_the_switch_and_ruda_info():
    code = (
        "import ruda_cuda as xp\n"
        "from ruda_cuda import _fusion\n"
        "print(_fusion.enabled(), type(xp.exp(xp.ones(3))).__name__)\n"
    )
    for value, want in (("0", "False Array"), ("1", "True LazyArray")):
        assert python_output(code, **{_fusion.FUSION_ENV: value}) == want
    from ruda_cuda._plugin import CudaBackend

    details = CudaBackend().probe().details
    assert details["fusion"].startswith("on" if _fusion.enabled() else "off")


def test_the_cuda_fusion_extra_makes_fusion_the_default(tmp_path):
    # what installing ruda-cuda-fusion adds: its entry point in the ruda_cuda.defaults group
    info = tmp_path / "ruda_cuda_fusion-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ruda-cuda-fusion\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[ruda_cuda.defaults]\nfusion = ruda_cuda_fusion\n")
    code = "from ruda_cuda import _fusion; print(_fusion.enabled(), _fusion.describe())"
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    unset = python_output(code, PYTHONPATH=path, **{_fusion.FUSION_ENV: None})
    assert unset.startswith("True on (the cuda-fusion extra is installed")
    off = python_output(code, PYTHONPATH=path, **{_fusion.FUSION_ENV: "0"})
    assert off == "False off (RUDA_CUDA_FUSION=0)"


# -- every elementwise function and dtype: fused bits == unfused bits ---------------------------

_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
_DTYPES += ["float32", "float64", "complex64", "complex128"]
_UNARY = {
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj", "cos",
    "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log", "log1p", "log2",
    "log10", "logical_not", "negative", "positive", "real", "reciprocal", "round", "sign", "signbit",
    "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc",
}  # fmt: skip


def _chain(name: str, a: Any, b: Any) -> Any:
    """``name`` on (a, b) between two other steps, so that it is a fused step reading a step."""
    fn = getattr(xp, name)
    if a.dtype != xp.bool:
        a = xp.positive(a)
    t = fn(a) if name in _UNARY else fn(a, b)
    if t.dtype == xp.bool:
        return xp.logical_xor(t, True)
    return t * t + t


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", sorted(set(spec.ELEMENTWISE_FUNCTIONS) - {"clip"}))
def test_fused_and_unfused_bits_agree(fused, name, dtype):
    dt = np.dtype(dtype)
    host_a, host_b = edge_operands(name, dt)
    a, b = xp.asarray(host_a), xp.asarray(host_b)
    try:
        want = _host(_unfused(lambda: _chain(name, a, b)))
    except Exception as err:  # CuPy's own refusal (a TypeError, or its compiler's error)
        with pytest.raises(type(err)):
            _host(_chain(name, a, b))
        return
    assert_same_bits(_host(_chain(name, a, b)), want)


# -- a trailing reduction ------------------------------------------------------------------------
_ORDER_FREE = ["bool", "int8", "int64", "uint16", "uint64"]  # every reduction is exact on these


def _reducible(dtype: str) -> tuple[Any, Any]:
    """Two (3, 4, 5) arrays of edge values."""
    host_a, host_b = edge_operands("multiply", np.dtype(dtype), n=60)
    return xp.asarray(host_a.reshape(3, 4, 5)), xp.asarray(host_b.reshape(3, 4, 5))


def _pending(a: Any, b: Any) -> Any:
    if a.dtype == xp.bool:
        return xp.logical_xor(a, b)
    if xp.isdtype(a.dtype, "integral"):
        return a * b + a  # wraps around, as unfused
    return xp.sin(a) * b


def _unfused_reduction(reduction: str, a: Any, b: Any, **kwargs: Any) -> np.ndarray:
    return _host(_unfused(lambda: getattr(xp, reduction)(_pending(a, b), **kwargs)))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=["all", "0", "-1", "0,2"])
@pytest.mark.parametrize("dtype", [*_ORDER_FREE, "float32", "complex64"])
@pytest.mark.parametrize("reduction", sorted(_fused_kernels.REDUCTIONS))
def test_a_trailing_reduction_ends_the_chains_kernel(fused, reduction, dtype, axis):
    a, b = _reducible(dtype)
    for keepdims in (False, True):
        want = _unfused_reduction(reduction, a, b, axis=axis, keepdims=keepdims)
        pending = _pending(a, b)
        got = getattr(xp, reduction)(pending, axis=axis, keepdims=keepdims)
        fusable = reduction in ("any", "all") or dtype in _ORDER_FREE
        assert (pending._node.value is None) == fusable, "fused: the chain's values are never stored"
        assert type(got) is xp.Array
        assert_same_bits(_host(got), want)


def test_reductions_that_depend_on_order_compute_the_chain_first(fused):
    a, b = _reducible("float64")
    for reduction in ("sum", "prod", "max", "mean"):
        pending = _pending(a, b)
        got = getattr(xp, reduction)(pending, axis=1)
        assert pending._node.value is not None  # CUB's order, as unfused: no fused float sum
        assert_same_bits(_host(got), _unfused_reduction(reduction, a, b, axis=1))


def test_fused_reductions_take_dtypes_broadcasting_scalars_and_empty_axes(fused):
    x, y = xp.arange(-20, 20, dtype=xp.int16), xp.arange(7, dtype=xp.int16)
    for dtype in (None, xp.int8, xp.uint32, xp.float64):
        pending = x[:, None] * y + 3
        got = xp.sum(pending, axis=0, dtype=dtype)
        assert (pending._node.value is None) == (dtype is not xp.float64)
        want = _unfused(lambda: xp.sum(x[:, None] * y + 3, axis=0, dtype=dtype))  # noqa: B023
        assert_same_bits(_host(got), _host(want))
    empty = xp.ones((0, 3), dtype=xp.int32)
    assert _host(xp.sum(empty * 2, axis=0)).tolist() == [0, 0, 0]
    assert bool(xp.all(empty > 1)) and not bool(xp.any(empty > 1))
    with pytest.raises(ValueError):  # as unfused: max of nothing
        xp.max(empty * 2, axis=0)
    with pytest.raises((ValueError, IndexError)):  # a bad axis is the unfused function's to report
        xp.sum(x * 2, axis=3)
