"""Several GPUs: ruda_cuda and ruda_torch arrays moved between ``cuda:0`` and ``cuda:1``, every
function computing on its inputs' GPU, routers over two GPUs, and the kernel runtime's contexts
on each GPU. Skipped, with the reason, on a machine with fewer than two GPUs."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import ruda

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)
if len(_ROW.devices) < 2:
    pytest.skip(f"needs two GPUs, this machine has {len(_ROW.devices)}", allow_module_level=True)

import cupy  # noqa: E402
import ruda_cuda as xp  # noqa: E402
from ruda_cuda import _fusion  # noqa: E402
from ruda_router import DeviceMismatchError, Router  # noqa: E402

pytestmark = pytest.mark.gpu

GPU0, GPU1 = cupy.cuda.Device(0), cupy.cuda.Device(1)

# ~20 ms of work on an H200: long enough that a copy not ordered after it reads stale memory
_SLOW_FILL = cupy.RawKernel(
    r"""
extern "C" __global__ void slow_fill(float* out, float value, long long n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) out[i] = value;
}
""",
    "slow_fill",
)


@pytest.fixture(params=[False, True], ids=["unfused", "fused"])
def fusion(request: pytest.FixtureRequest) -> Iterator[bool]:
    previous = _fusion.set_enabled(request.param)
    yield request.param
    _fusion.set_enabled(previous)


@pytest.fixture
def no_peer_compute() -> Iterator[None]:
    """CuPy warns when a kernel on the current GPU reads another GPU's memory: here that is an
    error, so a function that computed on ``cuda:0`` with ``cuda:1`` inputs fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", cupy._util.PerformanceWarning)
        yield


# -- moving data ---------------------------------------------------------------------------------
MOVED_DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", MOVED_DTYPES)
@pytest.mark.parametrize(("source", "target"), [(0, 1), (1, 0)], ids=["0-to-1", "1-to-0"])
def test_to_device_moves_values_between_gpus(dtype: str, source: int, target: int) -> None:
    values = (np.arange(60).reshape(3, 4, 5) % 11 - 5).astype(dtype)
    x = xp.asarray(values, device=f"cuda:{source}")
    for moved in (
        x.to_device(f"cuda:{target}"),
        ruda.to_device(x, f"cuda:{target}"),
        xp.asarray(x, device=f"cuda:{target}"),
        xp.from_dlpack(x, device=f"cuda:{target}"),
    ):
        assert type(moved) is xp.Array and moved.device.id == target
        assert moved.dtype == values.dtype and moved.data.ptr != x.data.ptr
        np.testing.assert_array_equal(moved.get(), values)
    view = x[:, ::2, 1:].mT  # strided: copied through a contiguous block on the source GPU
    np.testing.assert_array_equal(view.to_device(f"cuda:{target}").get(), values[:, ::2, 1:].swapaxes(-1, -2))
    for shape in ((), (0, 3)):
        small = xp.asarray(np.ones(shape, dtype=dtype), device=f"cuda:{source}")
        moved = small.to_device(f"cuda:{target}")
        assert moved.device.id == target and moved.shape == shape


def test_to_device_waits_for_work_queued_on_the_source_gpu() -> None:
    """The copy is ordered after the kernel that writes the source, with no host wait between:
    a copy on the target GPU's stream alone would read the old zeros."""
    n = 1 << 20
    with GPU0:
        x = xp.zeros(n, dtype=xp.float32)
        with cupy.cuda.Stream(non_blocking=True):
            _SLOW_FILL((64,), (256,), (x, np.float32(7.0), np.int64(n), np.int64(40_000_000)))
            y = x.to_device("cuda:1")
    assert float(y.min()) == 7.0 and float(y.max()) == 7.0


def test_to_device_runs_on_the_given_stream_of_the_target() -> None:
    x = xp.arange(1 << 16, dtype=xp.float32, device="cuda:0")
    with GPU1:
        stream = cupy.cuda.Stream(non_blocking=True)
    for given in (stream, stream.ptr):
        y = x.to_device("cuda:1", stream=given)
        stream.synchronize()
        assert y.device.id == 1
        np.testing.assert_array_equal(y.get(), np.arange(1 << 16, dtype=np.float32))


def test_the_source_memory_is_not_reused_before_the_copy_reads_it() -> None:
    """A source dropped at once goes back to its GPU's memory pool; the source stream waits for
    the copy, so the next kernel there cannot overwrite the bytes still being copied."""
    n = 1 << 24
    for _ in range(5):
        with GPU0:
            x = xp.full(n, 3.0, dtype=xp.float32)
            y = x.to_device("cuda:1")
            del x
            xp.full(n, -1.0, dtype=xp.float32)  # likely the same block
        assert float(y.min()) == 3.0 and float(y.max()) == 3.0


def test_info_says_how_gpus_copy_to_each_other() -> None:
    runtime = cupy.cuda.runtime
    count = len(_ROW.devices)
    pairs = [(a, b) for a in range(count) for b in range(a + 1, count)]
    direct = [p for p in pairs if runtime.deviceCanAccessPeer(*p) and runtime.deviceCanAccessPeer(*p[::-1])]
    said = _ROW.details["between GPUs"]
    if len(direct) == len(pairs):
        assert said == "peer-to-peer"
    else:
        assert said.endswith(f"; {len(pairs) - len(direct)} pair(s) copy through the host")


# -- computing where the inputs are --------------------------------------------------------------
def _cases() -> dict[str, Callable[[Any, Any, Any], Any]]:
    """Namespace calls on (namespace, x, y) with x, y float arrays of shape (4, 4)."""
    return {
        "add": lambda ns, x, y: ns.add(x, y),
        "operators": lambda ns, x, y: (x * y - 2.0) / (y + 1.0) ** 2,
        "exp-chain": lambda ns, x, y: ns.sqrt(ns.exp(x) + ns.sin(y) ** 2),
        "in-place": lambda ns, x, y: _in_place(x, y),
        "sum": lambda ns, x, y: ns.sum(x, axis=0),
        "max": lambda ns, x, y: ns.max(x * y),
        "cumulative_sum": lambda ns, x, y: ns.cumulative_sum(x, axis=1),
        "matmul": lambda ns, x, y: x @ y,
        "tensordot": lambda ns, x, y: ns.tensordot(x, y, axes=1),
        "solve": lambda ns, x, y: ns.linalg.solve(x + 4 * ns.eye(4, dtype=x.dtype, device=x.device), y),
        "inv": lambda ns, x, y: ns.linalg.inv(x + 4 * ns.eye(4, dtype=x.dtype, device=x.device)),
        "fft": lambda ns, x, y: ns.fft.fft(x),
        "sort": lambda ns, x, y: ns.sort(x, axis=1),
        "argsort": lambda ns, x, y: ns.argsort(y, axis=0),
        "unique_values": lambda ns, x, y: ns.unique_values(ns.round(x)),
        "where": lambda ns, x, y: ns.where(x > y, x, y),
        "clip": lambda ns, x, y: ns.clip(x, min=y - 1.0, max=y + 1.0),
        "concat": lambda ns, x, y: ns.concat([x, y], axis=1),
        "stack": lambda ns, x, y: ns.stack([x, y]),
        "astype": lambda ns, x, y: ns.astype(x * 100.0, ns.int32),
        "take": lambda ns, x, y: ns.take(x, ns.asarray([3, 0, 1], device=x.device), axis=1),
        "mask": lambda ns, x, y: x[x > 0.0],
        "setitem": lambda ns, x, y: _set(x, y),
        "zeros_like": lambda ns, x, y: ns.zeros_like(x) + 1.0,
    }


def _in_place(x: Any, y: Any) -> Any:
    x = x * 1.0
    x += y
    x *= 2.0
    return x


def _set(x: Any, y: Any) -> Any:
    x = x * 1.0
    x[y > 0.0] = -1.0
    x[0] = y[1]
    return x


@pytest.mark.parametrize("case", list(_cases()))
def test_functions_compute_on_the_gpu_of_their_inputs(case: str, fusion: bool, no_peer_compute: None) -> None:
    rng = np.random.default_rng(1)
    x_np, y_np = rng.standard_normal((2, 4, 4))
    expected = np.asarray(_cases()[case](_numpy(), x_np.copy(), y_np.copy()))
    with GPU0:  # the current device is the other GPU
        x, y = xp.asarray(x_np, device="cuda:1"), xp.asarray(y_np, device="cuda:1")
        result = xp.asarray(_cases()[case](xp, x, y))
        assert result.device.id == 1
        np.testing.assert_allclose(result.get(), expected, rtol=1e-12, atol=1e-12)


def _numpy() -> Any:
    import array_api_compat.numpy

    return array_api_compat.numpy


@pytest.mark.parametrize(
    "call",
    [xp.add, xp.atan2, lambda a, b: a + b, lambda a, b: xp.stack([a, b]), lambda a, b: xp.where(a > 0, a, b)],
    ids=["add", "atan2", "operator", "stack", "where"],
)
def test_arrays_on_two_gpus_in_one_call_are_refused(call: Callable[[Any, Any], Any], fusion: bool) -> None:
    a = xp.ones(3, device="cuda:0")
    b = xp.ones(3, device="cuda:1")
    with pytest.raises(ValueError, match=r"cuda:0 and cuda:1 met in one call.*to_device"):
        xp.asarray(call(a, b))


# -- routers over two GPUs -----------------------------------------------------------------------
def _router_cases(namespace: Any, first: Any, second: Any) -> None:
    router = Router((namespace, namespace))
    b1, b2 = router.MultiDevice.B1(first), router.MultiDevice.B2(second)
    x = router.asarray([[1.0, 2.0], [3.0, 4.0]], device=b1)
    y = router.ones((2, 2), device=b2)
    assert x.device == b1 and y.device == b2
    with pytest.raises(DeviceMismatchError, match="two devices"):
        router.add(x, y)
    moved = x.to_device(b2)
    assert moved.device == b2 and ruda.device_of(moved.inner) == ruda.device_of(y.inner)
    total = router.linalg.inv(moved) @ (moved + y)
    expected = np.linalg.inv([[1, 2], [3, 4]]) @ [[2, 3], [4, 5]]
    np.testing.assert_allclose(ruda.to_numpy(total.inner), expected, rtol=1e-6, atol=1e-6)
    back = router.to_device(total, b1)
    assert back.device == b1
    np.testing.assert_allclose(ruda.to_numpy((back * x).inner), ruda.to_numpy(total.inner) * [[1, 2], [3, 4]])


def test_router_over_two_gpus_with_ruda_cuda(fusion: bool, no_peer_compute: None) -> None:
    with GPU0:
        _router_cases(xp, GPU0, GPU1)


def test_router_over_two_gpus_with_ruda_torch() -> None:
    try:
        tp = ruda.namespace("torch")
    except (ruda.BackendNotFoundError, ruda.BackendUnavailableError) as err:
        pytest.skip(f"torch backend unavailable: {err}")
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip(f"torch sees {torch.cuda.device_count()} GPU(s)")
    _router_cases(tp, torch.device("cuda:0"), torch.device("cuda:1"))
    x = tp.arange(5.0, device=torch.device("cuda:0"))
    y = ruda.to_device(x, "torch:cuda:1")
    assert y.device == torch.device("cuda:1")
    z = ruda.to_device(y, "cuda:0")  # torch on GPU 1 to ruda_cuda on GPU 0
    assert isinstance(z, cupy.ndarray) and z.device.id == 0
    np.testing.assert_array_equal(z.get(), np.arange(5.0))


# -- the kernel runtime --------------------------------------------------------------------------
def test_kernel_runtime_context_and_memory_on_each_gpu() -> None:
    from ruda_cuda.kernel import Context, ContextFlags, CurrentContext, Device, DeviceBuffer, Module, init

    init()
    source = r"""
extern "C" __global__ void scale(float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * y[i] + (float)i;
}"""
    for index in (0, 1):
        device = Device.get(index)
        primary = Context.primary(device)  # current from here
        own = Context.create_and_push(ContextFlags.SCHED_AUTO, device)
        for context in (own, primary):
            assert CurrentContext.get_device() == device
            module = Module.compile(source)
            buffer = DeviceBuffer.from_slice(np.ones(1000, dtype=np.float32))
            module.scale[4, 256](buffer, np.float32(index + 2), np.int32(1000))
            CurrentContext.synchronize()
            np.testing.assert_array_equal(buffer.to_numpy(), (index + 2) + np.arange(1000, dtype=np.float32))
            buffer.close()
            module.close()
            context.close()  # the created one is popped: the primary context is current again
    cupy.cuda.runtime.setDevice(0)  # CuPy's own context current again
