"""ruda_cuda.kernel, the CUDA kernel runtime: every part, on a real GPU."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import ruda

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)

import ruda_cuda  # noqa: E402
from cupy.cuda import nvrtc  # noqa: E402
from ruda_cuda.kernel import (  # noqa: E402
    CacheConfig,
    CompileError,
    Context,
    ContextFlags,
    ContextStack,
    CudaError,
    CurrentContext,
    Device,
    DeviceAttribute,
    DeviceBox,
    DeviceBuffer,
    Event,
    EventFlags,
    FunctionAttribute,
    InvalidValueError,
    KernelParameter,
    LockedBuffer,
    Module,
    NotFoundError,
    ResourceLimit,
    SharedMemoryConfig,
    Stream,
    StreamFlags,
    StreamWaitEventFlags,
    init,
    launch,
)

pytestmark = pytest.mark.gpu

SOURCE = r"""
__device__ float offset;
extern "C" __global__ void sum(const float* x, const float* y, float* out) { *out = *x + *y; }
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void reverse_shared(float* data, int n) {
    extern __shared__ float tile[];
    int i = threadIdx.x;
    if (i < n) tile[i] = data[i];
    __syncthreads();
    if (i < n) data[i] = tile[n - 1 - i];
}
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
extern "C" __global__ void add_offset(float* out) { out[threadIdx.x] = offset + threadIdx.x; }
extern "C" __global__ void mixed(double d, long long q, unsigned char b, short h, double* out) {
    out[0] = d; out[1] = (double)q; out[2] = (double)b; out[3] = (double)h;
}
extern "C" __global__ void product2(float2 v, bool negate, float* out) {
    *out = negate ? -(v.x * v.y) : v.x * v.y;
}
extern "C" __global__ void try_malloc(unsigned long long nbytes, int* ok) {
    void* p = malloc(nbytes);
    *ok = p != nullptr;
    if (p) free(p);
}
"""

SPIN = np.int64(200_000_000)  # ~0.1 s at H200 clocks: long enough to observe "not ready"


@pytest.fixture(scope="module")
def context() -> Context:
    init()
    ctx = Context.primary(Device.get(0))
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def module(context: Context) -> Module:
    return Module.compile(SOURCE)


@pytest.fixture(scope="module")
def cubin_module(context: Context) -> Module:
    """The same kernels from a CUBIN image: no PTX, so no declared parameter types."""
    return Module.load_from_bytes(_program("cubin"))


def _program(kind: str) -> bytes:
    program = nvrtc.createProgram(SOURCE, "test.cu", [], [])
    major, minor = Device.get(0).compute_capability()
    arch = f"compute_{major}{minor}" if kind == "ptx" else f"sm_{major}{minor}"
    try:
        nvrtc.compileProgram(program, [f"-arch={arch}"])
        return nvrtc.getPTX(program) if kind == "ptx" else nvrtc.getCUBIN(program)
    finally:
        nvrtc.destroyProgram(program)


def test_devices() -> None:
    init()
    assert Device.count() >= 1
    device = Device.get(0)
    assert device.name() and device.total_memory() > 2**30
    major, minor = device.compute_capability()
    assert major >= 3 and minor >= 0
    assert device.get_attribute(DeviceAttribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE) == 32
    with pytest.raises(ValueError, match="no CUDA device"):
        Device.get(Device.count())


def test_created_context_stack_and_settings(context: Context) -> None:
    device = Device.get(0)
    own = Context.create_and_push(ContextFlags.SCHED_AUTO | ContextFlags.MAP_HOST, device)
    try:
        assert CurrentContext.get_current() == own and own.api_version() > 0
        CurrentContext.set_cache_config(CacheConfig.PREFER_L1)
        assert CurrentContext.get_cache_config() == CacheConfig.PREFER_L1
        CurrentContext.set_shared_memory_config(SharedMemoryConfig.FOUR_BYTE_BANK_SIZE)
        assert isinstance(CurrentContext.get_shared_memory_config(), SharedMemoryConfig)
        least, greatest = CurrentContext.get_stream_priority_range()
        assert least >= greatest
        box = DeviceBox(np.float32(2.5))
        assert box.get() == np.float32(2.5)
        box.close()
        popped = ContextStack.pop()
        assert popped == own and CurrentContext.get_current() == context
        ContextStack.push(popped)
        assert CurrentContext.get_current() == own
    finally:
        own.close()
    assert CurrentContext.get_current() == context


def test_unowned_context_in_another_thread(context: Context) -> None:
    unowned = context.get_unowned()
    seen: list[object] = []

    def work() -> None:
        ContextStack.push(unowned)
        try:
            seen.append(DeviceBox(np.int32(7)).get())
        finally:
            seen.append(ContextStack.pop())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [np.int32(7), unowned]


def test_launch_sum_on_a_stream(module: Module) -> None:
    stream = Stream(StreamFlags.NON_BLOCKING, 0)
    x, y, out = DeviceBox(np.float32(10.0)), DeviceBox(np.float32(20.0)), DeviceBox(np.float32(0.0))
    module.sum[1, 1, 0, stream](x, y, out)
    stream.synchronize()
    assert out.get() == np.float32(30.0)
    launch(module.sum, 1, 1, 0, None, out, y, x)
    CurrentContext.synchronize()
    assert x.get() == np.float32(50.0)


def test_launch_with_ruda_cuda_arrays(module: Module) -> None:
    n = 1000
    x = ruda_cuda.arange(n, dtype=ruda_cuda.float32)
    y = ruda_cuda.ones(n, dtype=ruda_cuda.float32)
    module.saxpy[(n + 255) // 256, 256](np.float32(2.0), x, y, np.int32(n))
    np.testing.assert_array_equal(ruda.to_numpy(y), 2.0 * np.arange(n, dtype=np.float32) + 1)


def test_arguments_of_every_scalar_type(module: Module) -> None:
    out = DeviceBuffer.zeroed(np.float64, 4)
    module.mixed[1, 1](np.float64(1.5), np.int64(-3), np.uint8(250), np.int16(-7), out)
    assert out.to_numpy().tolist() == [1.5, -3.0, 250.0, -7.0]


def test_bad_arguments_are_refused_with_the_fix(module: Module, cubin_module: Module) -> None:
    x = DeviceBox(np.float32(1.0))
    assert cubin_module.saxpy.parameters is None
    with pytest.raises(TypeError, match=r"bare Python float.*np\.float32.*load the module as PTX"):
        cubin_module.saxpy[1, 1](2.0, x, x, np.int32(1))
    with pytest.raises(TypeError, match="host NumPy array"):
        module.sum[1, 1](np.zeros(1, np.float32), x, x)
    with pytest.raises(ValueError, match="block is a positive int"):
        module.sum[1, 0](x, x, x)
    with pytest.raises(TypeError, match="stream must be"):
        module.sum[1, 1, 0, "stream"](x, x, x)
    stream = Stream()
    stream.close()
    with pytest.raises(ValueError, match="closed stream"):
        module.sum[1, 1, 0, stream](x, x, x)


def test_compiled_kernels_know_their_parameter_types(module: Module) -> None:
    saxpy = module.saxpy
    assert [str(p) for p in saxpy.parameters] == [".f32", ".u64", ".u64", ".u32"]
    assert all(isinstance(p, KernelParameter) for p in saxpy.parameters)
    assert [str(p) for p in module.mixed.parameters] == [".f64", ".u64", ".u8", ".u16", ".u64"]
    assert [(p.kind, p.size) for p in module.product2.parameters] == [
        ("raw", 8),
        ("unsigned", 1),
        ("unsigned", 8),
    ]
    n = 1000
    x = ruda_cuda.arange(n, dtype=ruda_cuda.float32)
    y = ruda_cuda.ones(n, dtype=ruda_cuda.float32)
    saxpy[(n + 255) // 256, 256](0.5, x, y, n)  # Python float and int, converted to .f32 and .u32
    saxpy[(n + 255) // 256, 256](3, x, y, np.int64(n))  # an int for .f32; an int64 for .u32, by value
    expected = np.ones(n, dtype=np.float32)
    expected = np.float32(0.5) * np.arange(n, dtype=np.float32) + expected
    expected = np.float32(3.0) * np.arange(n, dtype=np.float32) + expected
    np.testing.assert_array_equal(ruda.to_numpy(y), expected)
    out = DeviceBuffer.zeroed(np.float64, 4)
    module.mixed[1, 1](0.1, 2**40, 250, 7, out)
    assert out.to_numpy().tolist() == [0.1, 2.0**40, 250.0, 7.0]
    module.mixed[1, 1](1.5, np.int64(-3), True, np.int16(-7), out)  # NumPy scalars keep their C type
    assert out.to_numpy().tolist() == [1.5, -3.0, 1.0, -7.0]
    product = DeviceBox(np.float32(0.0))
    module.product2[1, 1](np.complex64(3 + 4j), False, product)  # float2 {3, 4} as raw bytes
    assert product.get() == np.float32(12.0)
    module.product2[1, 1](np.complex64(3 + 4j), np.bool_(True), product)
    assert product.get() == np.float32(-12.0)


def test_typed_kernels_refuse_what_does_not_fit(module: Module) -> None:
    x, y = DeviceBuffer.zeroed(np.float32, 4), DeviceBuffer.zeroed(np.float32, 4)
    saxpy = module.saxpy[1, 4]
    with pytest.raises(
        TypeError, match=r"kernel 'saxpy' takes 4 arguments \(\.f32, \.u64, \.u64, \.u32\), given 3"
    ):
        saxpy(2.0, x, y)
    with pytest.raises(TypeError, match="takes 4 arguments.*given 0"):
        saxpy()
    with pytest.raises(
        TypeError, match=r"kernel 'saxpy', argument 3 \(\.u32\): expected an int.*given float"
    ):
        saxpy(2.0, x, y, 4.0)
    with pytest.raises(ValueError, match=r"argument 3 \(\.u32\).*given int -1.*pass np\.int32\(-1\)"):
        saxpy(2.0, x, y, -1)
    with pytest.raises(
        ValueError, match=r"argument 3 \(\.u32\): expected an int in 0\.\.4294967295, given int"
    ):
        saxpy(2.0, x, y, 2**32)
    with pytest.raises(ValueError, match=r"argument 0 \(\.f32\).*overflows \.f32"):
        saxpy(1e39, x, y, 4)
    with pytest.raises(TypeError, match=r"argument 0 \(\.f32\).*given device memory"):
        saxpy(x, x, y, 4)
    with pytest.raises(TypeError, match=r"argument 0 \(\.f32\).*given bool"):
        saxpy(True, x, y, 4)
    with pytest.raises(TypeError, match=r"argument 1 of kernel 'saxpy' is a host NumPy array"):
        saxpy(2.0, np.zeros(4, np.float32), y, 4)
    with pytest.raises(ValueError, match=r"kernel 'mixed', argument 1 \(\.u64\).*pass np\.int64\(-3\)"):
        module.mixed[1, 1](1.5, -3, 1, 1, y)
    with pytest.raises(TypeError, match=r"argument 0 \(\.b8\[8\]\).*given complex"):
        module.product2[1, 1](3 + 4j, False, y)
    # nothing above launched, and a good launch after the refusals packs everything afresh
    x.copy_from(np.arange(4, dtype=np.float32))
    saxpy(2.0, x, y, 4)
    assert y.to_numpy().tolist() == [0.0, 2.0, 4.0, 6.0]


def test_ptx_text_and_cubin_images(context: Context) -> None:
    ptx = _program("ptx").decode().rstrip("\0")
    from_text = Module.load_from_string(ptx)
    from_bytes = Module.load_from_bytes(ptx.encode() + b"\0")
    for loaded in (from_text, from_bytes):
        assert [str(p) for p in loaded.saxpy.parameters] == [".f32", ".u64", ".u64", ".u32"]
        x = DeviceBuffer.from_slice(np.arange(3, dtype=np.float32))
        y = DeviceBuffer.from_slice(np.ones(3, np.float32))
        loaded.saxpy[1, 3](2.0, x, y, 3)
        assert y.to_numpy().tolist() == [1.0, 3.0, 5.0]
        loaded.close()


def test_stream_with_no_priority(module: Module) -> None:
    stream = Stream(StreamFlags.NON_BLOCKING, None)  # the seed's `Stream::new(flags, None)`
    assert stream.priority == 0 and stream.flags == StreamFlags.NON_BLOCKING
    x, y, out = DeviceBox(np.float32(1.5)), DeviceBox(np.float32(2.0)), DeviceBox(np.float32(0.0))
    module.sum[1, 1, 0, stream](x, y, out)
    stream.synchronize()
    assert out.get() == np.float32(3.5)
    stream.close()
    assert Stream().flags == StreamFlags.DEFAULT and Stream().priority == 0
    _, greatest = CurrentContext.get_stream_priority_range()
    urgent = Stream(StreamFlags.DEFAULT, np.int32(greatest))
    assert urgent.priority == greatest
    with pytest.raises(TypeError, match="stream priority is an int.*or None"):
        Stream(StreamFlags.DEFAULT, "high")  # type: ignore[arg-type]


def test_resource_limits(context: Context) -> None:
    own = Context.create_and_push(ContextFlags.SCHED_AUTO, Device.get(0))
    try:
        heap = CurrentContext.get_resource_limit(ResourceLimit.MALLOC_HEAP_SIZE)
        assert heap < 32 << 20  # the driver's default is 8 MiB: a 32 MiB malloc would fail
        # (the driver rounds small heaps up: 1 MiB read back as 4 MiB on an H200, so grow it)
        CurrentContext.set_resource_limit(ResourceLimit.MALLOC_HEAP_SIZE, 64 << 20)
        assert 64 << 20 <= CurrentContext.get_resource_limit(ResourceLimit.MALLOC_HEAP_SIZE) < 128 << 20
        mallocs = Module.compile(SOURCE)
        ok = DeviceBuffer.zeroed(np.int32, 1)
        mallocs.try_malloc[1, 1](32 << 20, ok)
        assert ok.to_numpy()[0] == 1  # fits the 64 MiB heap, not the default one
        mallocs.try_malloc[1, 1](256 << 20, ok)
        assert ok.to_numpy()[0] == 0  # larger than the heap
        for limit, value in [(ResourceLimit.STACK_SIZE, 4096), (ResourceLimit.PRINTF_FIFO_SIZE, 2 << 20)]:
            CurrentContext.set_resource_limit(limit, value)
            assert CurrentContext.get_resource_limit(limit) >= value
        with pytest.raises(ValueError, match="non-negative"):
            CurrentContext.set_resource_limit(ResourceLimit.STACK_SIZE, -1)
        with pytest.raises(ValueError):
            CurrentContext.get_resource_limit(99)  # type: ignore[arg-type]
        ok.close()
        mallocs.close()
    finally:
        own.close()
    assert CurrentContext.get_current() == context


def test_cuda_errors_name_the_result_and_the_call(module: Module) -> None:
    x = DeviceBox(np.float32(1.0))
    with pytest.raises(InvalidValueError) as info:
        module.sum[1, 4096](x, x, x)  # more threads per block than any GPU allows
    assert info.value.result == "CUDA_ERROR_INVALID_VALUE" and "cuLaunchKernel(sum)" in str(info.value)
    with pytest.raises(NotFoundError, match="CUDA_ERROR_NOT_FOUND"):
        module.get_function("no_such_kernel")
    with pytest.raises(CompileError) as compile_info:
        Module.compile('extern "C" __global__ void broken() { undeclared = 1; }')
    assert "undeclared" in compile_info.value.log
    assert isinstance(compile_info.value, CudaError)


def test_load_ptx_cubin_and_fatbin(context: Context, tmp_path: Path) -> None:
    ptx = _program("ptx")
    from_string = Module.load_from_string(ptx.decode().rstrip("\0"))
    cubin = _program("cubin")
    from_bytes = Module.load_from_bytes(cubin)
    path = tmp_path / "kernels.cubin"
    path.write_bytes(cubin)
    from_file = Module.load_from_file(path)
    modules = [from_string, from_bytes, from_file]
    nvcc = shutil.which("nvcc")
    if nvcc:
        source = tmp_path / "kernels.cu"
        source.write_text(SOURCE)
        major, minor = Device.get(0).compute_capability()
        fatbin = tmp_path / "kernels.fatbin"
        command = [nvcc, "-fatbin", f"-arch=sm_{major}{minor}", "-o", str(fatbin), str(source)]
        subprocess.run(command, check=True)
        modules.append(Module.load_from_bytes(fatbin.read_bytes()))
        modules.append(Module.load_from_file(fatbin))
    for loaded in modules:
        out = DeviceBox(np.float32(0.0))
        loaded.sum[1, 1](DeviceBox(np.float32(1.0)), DeviceBox(np.float32(2.0)), out)
        assert out.get() == np.float32(3.0)
        loaded.close()
    with pytest.raises(CudaError, match="cuModuleLoadData"):
        Module.load_from_bytes(b"not a cubin")
    if not nvcc:
        pytest.skip("nvcc not on PATH: the FATBIN part was not run")


def test_module_global(module: Module) -> None:
    offset = module.get_global("offset", np.float32)
    assert len(offset) == 1
    offset.copy_from(np.array([100.0], dtype=np.float32))
    out = DeviceBuffer.zeroed(np.float32, 4)
    module.add_offset[1, 4](out)
    assert out.to_numpy().tolist() == [100.0, 101.0, 102.0, 103.0]


def test_function_attributes_and_configuration(module: Module) -> None:
    function = module.reverse_shared
    assert function.get_attribute(FunctionAttribute.MAX_THREADS_PER_BLOCK) >= 32
    assert function.get_attribute(FunctionAttribute.NUM_REGS) > 0
    function.set_cache_config(CacheConfig.PREFER_SHARED)
    function.set_shared_memory_config(SharedMemoryConfig.DEFAULT_BANK_SIZE)
    big = 64 * 1024  # above the 48 KiB default: needs the attribute
    function.set_max_dynamic_shared_size_bytes(big)
    assert function.get_attribute(FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES) == big
    data = DeviceBuffer.from_slice(np.arange(8, dtype=np.float32))
    function[1, 8, big](data, np.int32(8))
    assert data.to_numpy().tolist() == list(range(7, -1, -1))


def test_streams_events_callbacks(module: Module) -> None:
    least, greatest = CurrentContext.get_stream_priority_range()
    busy = Stream(StreamFlags.NON_BLOCKING, greatest)
    other = Stream(StreamFlags.NON_BLOCKING, least)
    assert busy.priority == greatest and busy.flags == StreamFlags.NON_BLOCKING
    start, end = Event(), Event()
    start.record(busy)
    module.spin[1, 1, 0, busy](SPIN)
    end.record(busy)
    assert not busy.query() and not end.query()
    called = threading.Event()
    statuses: list[object] = []
    busy.add_callback(lambda status: (statuses.append(status), called.set()))
    other.wait_event(end, StreamWaitEventFlags.DEFAULT)
    out = DeviceBox(np.float32(0.0))
    module.sum[1, 1, 0, other](DeviceBox(np.float32(1.0)), DeviceBox(np.float32(1.0)), out)
    other.synchronize()
    assert end.query()  # `other` waited for it
    busy.synchronize()
    assert busy.query() and called.wait(5) and statuses == [None]
    end.synchronize()
    assert end.elapsed_time(start) > 1.0  # milliseconds
    untimed = Event(EventFlags.DISABLE_TIMING)
    untimed.record(busy)
    untimed.synchronize()
    with pytest.raises(CudaError, match="cuEventElapsedTime"):
        untimed.elapsed_time(start)


def test_memory_copies(module: Module) -> None:
    host = np.arange(1000, dtype=np.float64)
    buffer = DeviceBuffer.from_slice(host)
    assert len(buffer) == 1000 and buffer.nbytes == 8000
    back = np.empty_like(host)
    buffer.copy_to(back)
    np.testing.assert_array_equal(back, host)
    copy = DeviceBuffer(np.float64, 1000)
    copy.copy_from_device(buffer)
    np.testing.assert_array_equal(copy.to_numpy(), host)
    with pytest.raises(ValueError, match="1000 elements of float64"):
        buffer.copy_from(np.zeros(10, dtype=np.float64))
    with pytest.raises(ValueError, match="float64"):
        buffer.copy_to(np.zeros(1000, dtype=np.float32))
    stream = Stream(StreamFlags.NON_BLOCKING)
    locked_in = LockedBuffer(np.float64, 1000)
    locked_in[:] = host * 2
    locked_out = LockedBuffer(np.float64, 1000)
    buffer.async_copy_from(locked_in, stream)
    buffer.async_copy_to(locked_out, stream)
    stream.synchronize()
    np.testing.assert_array_equal(locked_out, host * 2)
    with pytest.raises(TypeError, match="page-locked"):
        buffer.async_copy_to(np.empty(1000), stream)
    box = DeviceBox(np.int64(-5))
    box.set(9)
    assert box.get() == 9 and box.dtype == np.int64
    with pytest.raises(TypeError, match="NumPy scalar"):
        DeviceBox(3)
    buffer.close()
    with pytest.raises(ValueError, match="freed"):
        module.sum[1, 1](buffer, box, box)
