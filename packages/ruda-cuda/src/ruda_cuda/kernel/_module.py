"""Modules, functions and launches.

``module.sum[grid, block, shared, stream](a, b, c)`` and
``launch(function, grid, block, shared, stream, a, b, c)`` both launch a
kernel. Arguments are device memory (``DeviceBuffer``, ``DeviceBox``,
``DeviceGlobal``, ``ruda_cuda``/CuPy arrays: passed as pointers) and scalars.

Where the module's PTX is known (PTX text or file, and ``Module.compile``, which
keeps the PTX NVRTC produces), each kernel knows its parameter types
(:attr:`Function.parameters`): Python ``int`` and ``float`` are converted to the
declared type, and a wrong count, kind or range is refused before the launch.
CUBIN and FATBIN images declare no types: their kernels take NumPy scalars whose
dtype is the C type (``np.float32(1.0)``, ``np.int32(4)``), and a bare Python
number is refused with a message saying what to write.

Launching packs the arguments with ``struct`` into one preallocated buffer
per function and calls CuPy's binding of ``cuLaunchKernel``: no per-launch
allocation beyond the argument tuple, so the cost stays near CuPy's own
``RawKernel`` launch. Range checks cost nothing extra: ``struct`` makes them
while packing, and only a failure looks at the arguments one by one.
"""

from __future__ import annotations

import enum
import os
import struct
import threading
from collections.abc import Sequence
from typing import Any

import cupy
import numpy as np
from cupy.cuda import driver as cupy_driver
from cupy.cuda import nvrtc

from ruda_cuda import _fusion
from ruda_cuda.kernel._context import CacheConfig, CurrentContext, SharedMemoryConfig, ensure_current
from ruda_cuda.kernel._driver import driver
from ruda_cuda.kernel._errors import CompileError, check, from_cupy
from ruda_cuda.kernel._memory import DeviceGlobal, _DeviceMemory
from ruda_cuda.kernel._parameters import (
    NUMPY_CODES,
    KernelParameter,
    count_error,
    host_code,
    is_binary_image,
    parse_entries,
    pointer_error,
    ptx_text,
    range_error,
)
from ruda_cuda.kernel._stream import Stream

_SLOT = 16  # bytes per kernel parameter: fits every scalar up to complex128, 8-byte aligned

# A launch plan: struct format, how each argument becomes a value, each argument's own code.
_Plan = tuple[str, tuple[int, ...], tuple[str, ...]]


class FunctionAttribute(enum.IntEnum):
    """Attributes of a compiled kernel (``CUfunction_attribute``)."""

    MAX_THREADS_PER_BLOCK = 0
    SHARED_SIZE_BYTES = 1
    CONST_SIZE_BYTES = 2
    LOCAL_SIZE_BYTES = 3
    NUM_REGS = 4
    PTX_VERSION = 5
    BINARY_VERSION = 6
    CACHE_MODE_CA = 7
    MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    PREFERRED_SHARED_MEMORY_CARVEOUT = 9


class Module:
    """Loaded GPU code (PTX, CUBIN or FATBIN); its kernels are attributes: ``module.sum``."""

    def __init__(self, handle: int):
        self._handle = int(handle)
        # Parameter types by kernel name, from the module's PTX; empty when it has none.
        self._parameters: dict[str, tuple[KernelParameter, ...]] = {}

    @classmethod
    def load_from_file(cls, path: str | os.PathLike[str]) -> Module:
        """Load a ``.ptx``, ``.cubin`` or ``.fatbin`` file into the current context.

        A PTX file's kernels know their parameter types (see :attr:`Function.parameters`);
        CUBIN and FATBIN kernels take NumPy scalars with explicit C types.
        """
        ensure_current()
        path = os.fspath(path)
        try:
            module = cls(cupy_driver.moduleLoad(path))
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, f"cuModuleLoad({path!r})") from None
        module._parameters = _parameters_in_file(path)
        return module

    @classmethod
    def load_from_string(cls, ptx: str) -> Module:
        """Load PTX text (JIT-compiled by the driver for the current GPU)."""
        if not isinstance(ptx, str):
            raise TypeError(
                f"load_from_string takes PTX text (str); use load_from_bytes for "
                f"CUBIN/FATBIN images, not {type(ptx).__name__}"
            )
        return cls._load(ptx.encode() + b"\0", "cuModuleLoadData(ptx)", ptx)

    @classmethod
    def load_from_bytes(cls, image: bytes) -> Module:
        """Load a CUBIN or FATBIN image (or NUL-terminated PTX) from memory."""
        if not isinstance(image, (bytes, bytearray, memoryview)):
            raise TypeError(f"load_from_bytes takes bytes, not {type(image).__name__}")
        image = bytes(image)
        return cls._load(image, "cuModuleLoadData", ptx_text(image))

    @classmethod
    def compile(cls, source: str, options: Sequence[str] = (), name: str = "kernel.cu") -> Module:
        """Compile CUDA C++ ``source`` with NVRTC for the current GPU and load it.

        Kernels meant to be found by name need ``extern "C"``. ``options`` are NVRTC's
        (``"-use_fast_math"``, ``"-DN=4"``); without ``-arch`` the code is built for the
        current GPU's own architecture (e.g. ``sm_90``), so no PTX JIT runs at load. The
        PTX NVRTC produces on the way gives the kernels their parameter types.
        """
        ensure_current()
        options = list(options)
        use_ptx = False
        if not any(o.startswith(("-arch", "--gpu-architecture")) for o in options):
            arch, use_ptx = _target_arch()
            options.append(f"-arch={arch}")
        program = nvrtc.createProgram(source, name, [], [])
        try:
            try:
                nvrtc.compileProgram(program, options)
            except nvrtc.NVRTCError as err:
                raise CompileError(
                    int(err.status),
                    f"nvrtcCompileProgram({name})",
                    str(err).split(":", 1)[0],
                    nvrtc.getProgramLog(program),
                ) from None
            ptx = _nvrtc_ptx(program)
            image = nvrtc.getPTX(program) if use_ptx else nvrtc.getCUBIN(program)
        finally:
            nvrtc.destroyProgram(program)
        return cls._load(bytes(image), "cuModuleLoadData", ptx)

    @classmethod
    def _load(cls, image: bytes, call: str, ptx: str | None) -> Module:
        ensure_current()
        try:
            module = cls(cupy_driver.moduleLoadData(image))
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, call) from None
        if ptx is not None:
            module._parameters = parse_entries(ptx)
        return module

    def get_function(self, name: str) -> Function:
        """The kernel ``name`` (its ``extern "C"`` or mangled name)."""
        try:
            handle = cupy_driver.moduleGetFunction(self.handle, name)
            return Function(handle, name, self, self._parameters.get(name))
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, f"cuModuleGetFunction({name!r})") from None

    def get_global(self, name: str, dtype: Any) -> DeviceGlobal:
        """The ``__device__`` variable ``name``, as ``size // itemsize`` elements of ``dtype``."""
        dtype = np.dtype(dtype)
        ptr, size = check(
            driver().cuModuleGetGlobal(self.handle, name.encode()), f"cuModuleGetGlobal({name!r})"
        )
        if int(size) % dtype.itemsize:
            raise ValueError(f"global {name!r} has {int(size)} bytes, not a whole number of {dtype}")
        return DeviceGlobal(int(ptr), dtype, int(size) // dtype.itemsize)

    @property
    def handle(self) -> int:
        """The ``CUmodule`` handle; using an unloaded module is an error, not a crash."""
        if not self._handle:
            raise ValueError("this module was unloaded")
        return self._handle

    def close(self) -> None:
        """Unload the module; its functions become unusable. Idempotent."""
        if self._handle:
            handle, self._handle = self._handle, 0
            try:
                cupy_driver.moduleUnload(handle)
            except cupy_driver.CUDADriverError as err:
                raise from_cupy(err, "cuModuleUnload") from None

    def __getattr__(self, name: str) -> Function:
        if name.startswith("_"):
            raise AttributeError(name)
        function = self.get_function(name)
        self.__dict__[name] = function  # later lookups skip __getattr__
        return function

    def __enter__(self) -> Module:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Function:
    """One kernel of a :class:`Module`. ``function[grid, block, shared, stream](*args)`` launches it.

    ``parameters`` is the kernel's parameter list as its PTX declares it (a tuple of
    :class:`KernelParameter`), or None where the module came without PTX (CUBIN, FATBIN).
    """

    def __init__(
        self, handle: int, name: str, module: Module, parameters: tuple[KernelParameter, ...] | None = None
    ):
        self.handle = int(handle)
        self.name = name
        self.parameters = parameters
        self._module = module  # keeps the module loaded while the function is alive
        self._configs: dict[Any, _Launch] = {}
        self._plans: dict[tuple[type, ...], _Plan] = {}
        self._lock = threading.Lock()
        self._buffer = np.zeros(0, dtype=np.uint8)
        self._pointers = np.zeros(0, dtype=np.uint64)
        self._pointers_address = 0
        if parameters:  # declared sizes: one slot per parameter, structs above 16 bytes included
            self._allocate([max(_SLOT, -(-p.size // _SLOT) * _SLOT) for p in parameters])

    def get_attribute(self, attribute: FunctionAttribute) -> int:
        """One attribute of the compiled kernel (registers, shared memory, ...)."""
        try:
            return int(cupy_driver.funcGetAttribute(int(attribute), self.handle))
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, "cuFuncGetAttribute") from None

    def set_max_dynamic_shared_size_bytes(self, nbytes: int) -> None:
        """Allow launches with up to ``nbytes`` of dynamic shared memory (above 48 KiB needs this)."""
        try:
            cupy_driver.funcSetAttribute(
                self.handle, FunctionAttribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, int(nbytes)
            )
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, "cuFuncSetAttribute") from None

    def set_cache_config(self, config: CacheConfig) -> None:
        """Prefer more L1 or more shared memory for this kernel."""
        d = driver()
        check(d.cuFuncSetCacheConfig(self.handle, d.CUfunc_cache(int(config))), "cuFuncSetCacheConfig")

    def set_shared_memory_config(self, config: SharedMemoryConfig) -> None:
        """Set this kernel's shared-memory bank size (ignored by GPUs since Volta)."""
        d = driver()
        check(
            d.cuFuncSetSharedMemConfig(self.handle, d.CUsharedconfig(int(config))), "cuFuncSetSharedMemConfig"
        )

    def __getitem__(self, config: Any) -> _Launch:
        try:
            return self._configs[config]
        except KeyError:
            pass
        except TypeError:  # an unhashable configuration (lists): not cached
            return _Launch(self, *_parse_config(config))
        if len(self._configs) > 256:
            self._configs.clear()
        launch = self._configs[config] = _Launch(self, *_parse_config(config))
        return launch

    def _plan(self, key: tuple[type, ...]) -> _Plan:
        """The struct format, argument kinds and per-argument codes for one tuple of
        argument types (cached)."""
        parameters = self.parameters
        if parameters is None:
            untyped = [_argument(kind, self.name, i) for i, kind in enumerate(key)]
            codes, kinds = zip(*untyped, strict=True) if untyped else ((), ())
            slots = [_SLOT] * len(key)
            if len(key) * _SLOT > self._buffer.size:
                self._allocate(slots)
        else:
            if len(key) != len(parameters):
                raise count_error(self.name, parameters, len(key))
            pairs = enumerate(zip(key, parameters, strict=True))
            typed = [_typed_argument(k, p, self.name, i) for i, (k, p) in pairs]
            codes, kinds = zip(*typed, strict=True) if typed else ((), ())
            slots = [max(_SLOT, -(-p.size // _SLOT) * _SLOT) for p in parameters]
        pieces = ["="] + [c + f"{s - struct.calcsize('=' + c)}x" for c, s in zip(codes, slots, strict=True)]
        plan = ("".join(pieces), tuple(kinds), tuple(codes))
        self._plans[key] = plan
        return plan

    def _allocate(self, slots: list[int]) -> None:
        """One argument buffer with these slot sizes, and the pointer array into it."""
        self._buffer = np.zeros(sum(slots), dtype=np.uint8)
        base = self._buffer.__array_interface__["data"][0]
        offsets = np.cumsum([0, *slots[:-1]], dtype=np.uint64) if slots else np.zeros(0, np.uint64)
        self._pointers = np.uint64(base) + offsets
        self._pointers_address = self._pointers.__array_interface__["data"][0]

    def _range_error(self, args: tuple[Any, ...]) -> ValueError:
        """Which argument did not fit its declared type, once ``struct`` refused to pack."""
        _, kinds, codes = self._plans[tuple(map(type, args))]
        for position, (value, kind, code) in enumerate(zip(args, kinds, codes, strict=True)):
            if kind != _VALUE:  # pointers and raw bytes always fit
                continue
            try:
                struct.pack("=" + code, value)
            except (struct.error, OverflowError, TypeError):
                if self.parameters is None:
                    break
                return range_error(self.name, position, self.parameters[position], value)
        return ValueError(f"arguments of kernel {self.name!r} could not be packed: {args!r}")

    def __repr__(self) -> str:
        if self.parameters is None:
            return f"Function({self.name!r})"
        return f"Function({self.name!r}, ({', '.join(map(str, self.parameters))}))"


class _Launch:
    """A kernel with its launch configuration; calling it launches.

    This is the hot path: one method, no helper calls for the common argument kinds.
    """

    __slots__ = ("bx", "by", "bz", "function", "gx", "gy", "gz", "shared", "stream")

    def __init__(
        self,
        function: Function,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared: int,
        stream: Stream | None,
    ):
        self.function, self.shared, self.stream = function, shared, stream
        self.gx, self.gy, self.gz = grid
        self.bx, self.by, self.bz = block

    def __call__(self, *args: Any) -> None:
        function = self.function
        stream = self.stream
        if stream is None:
            stream_handle = 0
        else:
            stream_handle = stream.handle
            if not stream_handle and stream._owned:
                raise ValueError(f"launch of {function.name!r} on a closed stream")
        try:
            if not args:
                if function.parameters:
                    raise count_error(function.name, function.parameters, 0)
                cupy_driver.launchKernel(
                    function.handle,
                    self.gx,
                    self.gy,
                    self.gz,
                    self.bx,
                    self.by,
                    self.bz,
                    self.shared,
                    stream_handle,
                    0,
                    0,
                )
                return
            key = tuple(map(type, args))
            if _fusion._pending or _fusion.LazyArray in key:  # (the namespace's lazy results)
                args = _fusion.before_launch(args)
                key = tuple(map(type, args))
            fmt, kinds, _ = function._plans.get(key) or function._plan(key)
            values = [
                a if k == _VALUE else a.data.ptr if k == _ARRAY else _pointer_or_bytes(a, k)
                for a, k in zip(args, kinds, strict=True)
            ]
            with function._lock:
                try:
                    # an ndarray is a writable buffer; NumPy's stubs say so only for Python >= 3.12
                    struct.pack_into(fmt, function._buffer, 0, *values)  # type: ignore[arg-type]
                except (struct.error, OverflowError):
                    raise function._range_error(args) from None
                cupy_driver.launchKernel(
                    function.handle,
                    self.gx,
                    self.gy,
                    self.gz,
                    self.bx,
                    self.by,
                    self.bz,
                    self.shared,
                    stream_handle,
                    function._pointers_address,
                    0,
                )
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, f"cuLaunchKernel({function.name})") from None


def launch(function: Function, grid: Any, block: Any, shared: int, stream: Stream | None, *args: Any) -> None:
    """Launch ``function`` on a ``grid`` of ``block``-sized blocks with ``shared`` bytes of
    dynamic shared memory on ``stream`` (None: the legacy default stream)."""
    if not isinstance(function, Function):
        raise TypeError(f"launch needs a ruda_cuda.kernel.Function, not {type(function).__name__}")
    function[grid, block, shared, stream](*args)


def _parse_config(config: Any) -> tuple[tuple[int, int, int], tuple[int, int, int], int, Stream | None]:
    if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
        raise TypeError(
            "launch configuration is [grid, block] or [grid, block, shared] or "
            f"[grid, block, shared, stream], not {config!r}"
        )
    grid, block, *rest = config
    shared = rest[0] if rest else 0
    stream = rest[1] if len(rest) > 1 else None
    if not isinstance(shared, (int, np.integer)) or shared < 0:
        raise ValueError(f"shared memory is a non-negative number of bytes, not {shared!r}")
    if stream is not None and not isinstance(stream, Stream):
        raise TypeError(f"stream must be a ruda_cuda.kernel.Stream or None, not {type(stream).__name__}")
    return _dim3(grid, "grid"), _dim3(block, "block"), int(shared), stream


def _dim3(value: Any, what: str) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)):
        dims: tuple[Any, ...] | None = (value,)
    else:
        dims = tuple(value) if isinstance(value, tuple) else None
    if (
        dims is None
        or not 1 <= len(dims) <= 3
        or not all(isinstance(d, (int, np.integer)) and d > 0 for d in dims)
    ):
        raise ValueError(f"{what} is a positive int or a tuple of 1 to 3 positive ints, not {value!r}")
    x, y, z = (*map(int, dims), 1, 1)[:3]
    return x, y, z


# How a launch turns an argument into the value struct packs.
_VALUE, _ARRAY, _MEMORY, _BYTES = 0, 1, 2, 3


def _argument(kind: type, kernel: str, position: int) -> tuple[str, int]:
    """The struct code and value kind for one kernel argument type."""
    if issubclass(kind, cupy.ndarray):
        return "Q", _ARRAY
    if issubclass(kind, _DeviceMemory):
        return "Q", _MEMORY
    if issubclass(kind, np.generic):
        dtype = np.dtype(kind)
        if dtype in NUMPY_CODES:
            return NUMPY_CODES[dtype], _VALUE  # struct packs NumPy scalars directly
        if dtype.kind == "c":
            return f"{dtype.itemsize}s", _BYTES
    where = f"argument {position} of kernel {kernel!r}"
    if kind is bool or kind is int or kind is float or kind is complex:
        example = {
            "bool": "np.bool_(True)",
            "int": "np.int32(4) or np.int64(4)",
            "float": "np.float32(1.0) or np.float64(1.0)",
            "complex": "np.complex64(1j)",
        }
        raise TypeError(
            f"{where} is a bare Python {kind.__name__}, and this kernel declares no parameter "
            f"types (its module came as CUBIN or FATBIN): pass {example[kind.__name__]}, matching "
            "the kernel's parameter, or load the module as PTX (Module.compile, load_from_string, "
            "a .ptx file), whose kernels convert Python numbers"
        )
    if issubclass(kind, np.ndarray):
        raise TypeError(
            f"{where} is a host NumPy array: copy it to the GPU first "
            "(DeviceBuffer.from_slice(x) or ruda_cuda.asarray(x))"
        )
    raise TypeError(
        f"{where} has type {kind.__name__}: pass device memory (DeviceBuffer, DeviceBox, "
        "a ruda_cuda array) or a NumPy scalar such as np.float32(1.0)"
    )


def _typed_argument(kind: type, parameter: KernelParameter, kernel: str, position: int) -> tuple[str, int]:
    """The struct code and value kind for one argument of a kernel whose PTX types are known."""
    if issubclass(kind, (cupy.ndarray, _DeviceMemory)):
        if parameter.size != 8 or parameter.kind == "float" or parameter.kind == "raw":
            raise pointer_error(kernel, position, parameter, kind)
        return "Q", _ARRAY if issubclass(kind, cupy.ndarray) else _MEMORY
    packed = host_code(kind, parameter, kernel, position)
    if packed is None:  # no scalar and no device memory: the untyped rules say why not
        return _argument(kind, kernel, position)
    code, as_bytes = packed
    return code, _BYTES if as_bytes else _VALUE


def _pointer_or_bytes(x: Any, kind: int) -> Any:
    if kind == _BYTES:
        return x.tobytes()
    if not x.ptr:
        raise ValueError(f"{type(x).__name__} was freed and cannot be passed to a kernel")
    return x.ptr


def _nvrtc_ptx(program: int) -> str | None:
    """The PTX NVRTC made on the way to the program's image; None where it keeps none (LTO)."""
    try:
        ptx = bytes(nvrtc.getPTX(program))
    except nvrtc.NVRTCError:
        return None
    return ptx.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def _parameters_in_file(path: str) -> dict[str, tuple[KernelParameter, ...]]:
    """Kernel parameter types in a module file: those of a PTX file, none for CUBIN/FATBIN."""
    try:
        with open(path, "rb") as file:
            head = file.read(4)
            if is_binary_image(head):  # a CUBIN or FATBIN declares no types: skip reading it
                return {}
            ptx = ptx_text(head + file.read())
    except OSError:
        return {}
    return parse_entries(ptx) if ptx is not None else {}


def _target_arch() -> tuple[str, bool]:
    """``sm_XY`` of the current GPU if this NVRTC can build it, else the newest ``compute_XY``
    it knows (PTX, JIT-compiled by the driver)."""
    major, minor = CurrentContext.get_device().compute_capability()
    wanted = major * 10 + minor
    supported = list(nvrtc.getSupportedArchs()) if hasattr(nvrtc, "getSupportedArchs") else [wanted]
    if wanted in supported:
        return f"sm_{wanted}", False
    return f"compute_{max(a for a in supported if a <= wanted)}", True
