"""ruda_cuda's fusion without a GPU: what a chain records and the CUDA source it generates.

These tests need CuPy importable, not a GPU: the arrays are CuPy arrays over memory that is
never touched (nothing here launches a kernel), so CI checks the recording, the choice of
loops, the chain walk and the code generation; tests/cuda/test_cuda_fusion.py runs the kernels.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

cupy = pytest.importorskip("cupy", reason="CuPy is not installed (CI installs it without a GPU)")

import ruda_cuda as xp  # noqa: E402
from ruda_cuda import _fused_kernels, _fusion, _kernels  # noqa: E402
from ruda_cuda._array import Array  # noqa: E402
from ruda_cuda._fusion import LazyArray  # noqa: E402


def _array(shape: tuple[int, ...], dtype: Any, offset: int = 0) -> Array:
    """An Array over device memory that is never read or written (an allocation of its own at a
    made-up address): shape, dtype, strides and device, no data."""
    memory = cupy.cuda.UnownedMemory((1 << 30) + offset, 1 << 30, None, device_id=0)
    return Array(shape, dtype=dtype, memptr=cupy.cuda.MemoryPointer(memory, 0))


@pytest.fixture(autouse=True)
def fused() -> Iterator[None]:
    previous = _fusion.set_enabled(True)
    yield
    _fusion.set_enabled(previous)


def test_calls_and_operators_are_recorded_with_their_result_types():
    f32, i8 = _array((1000,), np.float32), _array((3, 1), np.int8, 1 << 20)
    y = xp.sqrt(xp.sin(f32 * 0.5) + 1.0)
    assert isinstance(y, LazyArray) and (y.shape, y.dtype, y.ndim, y.size, len(y)) == (
        (1000,),
        np.float32,
        1,
        1000,
        1000,
    )
    assert y.device == f32.device and y.__array_namespace__() is xp
    # weak Python scalars keep the array's dtype unless their kind is higher, as CuPy decides
    assert (i8 + 1).dtype == np.int8 and (i8 * 0.5).dtype == np.float64 and (f32 * 2).dtype == np.float32
    assert (f32 + np.float64(1)).dtype == np.float64  # a NumPy scalar is strong
    assert (i8 + _array((4,), np.uint8, 1 << 21)).shape == (3, 4)
    assert (i8 + _array((4,), np.uint8, 1 << 21)).dtype == np.int16
    assert (f32 > 0).dtype == np.bool_ and (-f32).dtype == np.float32 and abs(i8).dtype == np.int8


def test_what_is_not_fused_is_left_to_the_unfused_function():
    f32 = _array((8,), np.float32)
    eager = _unary_marker()
    assert _fusion.record(cupy.add, (f32, _array((3,), np.float32, 64)), eager) is None  # shapes
    assert _fusion.record(cupy.bitwise_and, (f32, f32), eager) is None  # no loop for floats
    assert _fusion.record(cupy.add, (1, 2), eager) is None  # no array
    assert _fusion.record(cupy.real, (f32,), eager) is None  # a Python function, not a ufunc
    assert _fusion.record(cupy.add, (_array((8,), np.uint8), -1), eager) is None  # out of range
    assert _fusion.record(cupy.add, (f32, "text"), eager) is None


def _unary_marker() -> Any:
    def eager(*args: Any) -> Any:
        raise AssertionError("nothing may run here")

    return eager


def test_the_chain_walk_shares_intermediates_and_leaves():
    a, b = _array((3, 4), np.float64), _array((4,), np.float32, 1 << 20)
    t = xp.exp(a)
    u = t + b
    result = t * u - xp.sin(u)
    chain, leaves = _fusion._chain(result._node)
    assert leaves == [a, b] and chain.scalar_leaves == (False, False)
    names = [step.ufunc.name for step in chain.steps]
    assert names == ["cupy_exp", "cupy_add", "cupy_multiply", "cupy_sin", "cupy_subtract"]
    # values: a=0, b=1, exp=2, add=3, multiply=4, sin=5, subtract=6
    assert [step.args for step in chain.steps] == [(0,), (2, 1), (2, 3), (3,), (4, 5)]
    assert chain.dtype == np.float64


def test_scalars_are_kernel_parameters_of_the_loop_type_and_kernels_ignore_their_values():
    x = _array((8,), np.float32)
    first, leaves = _fusion._chain((xp.exp(x * 0.1) + 3)._node)
    assert leaves[1] == np.float32(0.1) and type(leaves[1]) is np.float32 and leaves[2] == np.float32(3)
    again, _ = _fusion._chain((xp.exp(x * 2.5) + 7)._node)
    assert first == again  # one compiled kernel for both


def test_generated_source_runs_cupys_loops_with_a_barrier_between_steps():
    flags = _array((16,), np.bool_)
    y = xp.exp(flags * 1.5) * 2.0 - 1.0  # bool * float: the float64 loop
    chain, _ = _fusion._chain(y._node)
    source = _fused_kernels.device_function(chain)
    assert "ruda_fused(const bool v0, const double v1, const double v2, const double v3)" in source
    assert "out0 = exp(in0)" in source and "out0 = in0 * in1" in source
    assert "? 1 : 0" in source  # bool to number, as CuPy's kernels cast
    # after each step but the last (stored) and the sums (never contracted as a product)
    assert source.count("ruda_rounded(out0)") == 3
    sums = _fusion._chain(((y + 1.0) * 3.0 + 2.0)._node)[0]
    assert _fused_kernels.device_function(sums).count("ruda_rounded(out0)") == 4  # of 7 steps
    assert "add.rn.f32" in source and "add.rn.f64" in source


def test_the_vectorised_source_takes_arrays_and_scalars_in_order():
    source = _kernels.stream_source("// prelude", "f", [None, "const float s1", None], "float32")
    assert "const float* __restrict__ a0, const float s1, const float* __restrict__ a2" in source
    assert "f(x0_0.x, s1, x0_2.x)" in source and "out[j] = f(a0[j], s1, a2[j]);" in source


def test_long_chains_are_cut_and_wide_ones_too():
    x = _array((8,), np.float32)
    t = x
    for _ in range(_fusion.MAX_STEPS):
        t = t + 1.0
    assert t._node.steps == _fusion.MAX_STEPS
    leaves = [_array((8,), np.float32, 64 * k) for k in range(_fusion.MAX_LEAVES)]
    w = leaves[0] * 1.0
    for leaf in leaves[1:]:
        w = w + leaf
    assert w._node.leaves == _fusion.MAX_LEAVES


def test_pending_readers_of_a_written_array_are_found_through_views():
    x, other = _array((10,), np.float32), _array((10,), np.float32, 1 << 20)
    reads_view = x[2:] + 1.0
    reads_other = other * 2.0
    memory = x.data.mem
    assert reads_view._node.reads(memory) and not reads_other._node.reads(memory)


def test_ruda_cuda_functions_pause_fusion_while_they_run():
    seen = []

    @_fusion.realizing
    def inner() -> None:
        seen.append(_fusion.enabled())

    inner()
    assert seen == [False] and _fusion.enabled()


def test_operator_powers_follow_cupys_operator():
    f32, i16 = _array((8,), np.float32), _array((8,), np.int16, 64)
    assert [s.ufunc.name for s in _fusion._chain(((f32 + 0) ** 2)._node)[0].steps][-1] == "cupy_square"
    assert [s.ufunc.name for s in _fusion._chain(((f32 + 0) ** 0.5)._node)[0].steps][-1] == "cupy_sqrt"
    assert [s.ufunc.name for s in _fusion._chain(((f32 + 0) ** -1.0)._node)[0].steps][-1] == "cupy_reciprocal"
    assert [s.ufunc.name for s in _fusion._chain(((f32 + 0) ** 3)._node)[0].steps][-1] == "cupy_power"
    assert [s.ufunc.name for s in _fusion._chain(((i16 + 0) ** 2)._node)[0].steps][-1] == "cupy_square"


def test_operators_called_from_libraries_that_take_cupy_arrays_do_not_record():
    def records_in(module: str) -> bool:
        scope = {"__name__": module, "records": _fusion.records_for_caller}
        exec("result = records(1)", scope)  # code run as if it were in ``module``
        return bool(scope["result"])

    assert not any(records_in(m) for m in ("scipy.stats._stats_py", "sklearn.utils", "cupyx.scipy"))
    assert records_in("__main__") and records_in("scipy_user_code")
    _fusion.set_enabled(False)
    assert not records_in("__main__")
