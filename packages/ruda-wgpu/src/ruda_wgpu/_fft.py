"""Complex FFTs of the rows of contiguous arrays, on the GPU.

Power-of-two lengths: a Stockham FFT in passes of ``wgsl/fft_pass.wgsl``, each doing DFTs of up
to a quarter of a workgroup's tile (on a GPU 256 points, 512 from 2^22 points: see
:data:`GPU_TILES`) in workgroup memory, so 2^16 points take two passes over the data and 2^20 or
2^24 three. Each pass is a kernel specialised to its sizes, and a transform's passes are planned
once per length, batch and direction (:func:`_plan`), so that a call records its dispatches and
little else. Other lengths: Bluestein's algorithm, the DFT as a convolution with a chirp, done
with power-of-two FFTs of at least twice the length. Twiddle factors and chirps are computed on
the host in float64 (exactly rounded to the dtype) and kept on the device per length."""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, empty, from_numpy
from ruda_wgpu._elementwise import apply
from ruda_wgpu._engine import GpuDevice
from ruda_wgpu._kernels import bind, kernel_pipeline, pack_words, wgsl_type

#: (complex elements a workgroup holds at most, its threads) on a GPU, for lengths below and from
#: :data:`LONG`. Measured on an H200 through Vulkan (complex64, ten transforms queued, kernels with
#: their sizes as constants): at 2^20 points 1024 / 256 took 52 us a transform, 2048 / 512 56 and
#: 4096 / 1024 54 (two passes rather than three); at 2^24 2048 / 512 took 546 us, 1024 / 256 613
#: and 4096 / 1024 743. Smaller tiles give the GPU more workgroups to hide memory latency with;
#: longer transforms have enough of them and gain from longer runs of neighbouring elements.
GPU_TILES = ((1024, 256), (2048, 512))
LONG = 1 << 22
#: the same on a CPU adapter, which has no latency to hide but pays for every pass: on lavapipe
#: (2 cores) 4096 beat 1024 at 2^20 points (94 against 127 ms) and 2^16 (3.4 against 6.0 ms).
CPU_TILE = (4096, 256)


def _tile(dev: GpuDevice, dtype: np.dtype[Any], n: int) -> tuple[int, int]:
    """Complex elements a workgroup holds for length ``n`` (a power of two within the device's
    workgroup memory) and its threads (within the device's limits)."""
    if dev.adapter.info["adapter_type"] == "CPU":
        most, threads = CPU_TILE
    else:
        most, threads = GPU_TILES[n >= LONG]
    limits = dev.limits
    room = int(limits["max-compute-workgroup-storage-size"]) // dtype.itemsize
    tile = min(most, 1 << (room.bit_length() - 1))
    threads = min(
        threads,
        tile // 4,
        int(limits["max-compute-invocations-per-workgroup"]),
        int(limits["max-compute-workgroup-size-x"]),
    )
    return tile, threads


@functools.lru_cache(maxsize=64)
def _twiddles(dev: GpuDevice, n: int, m: int, dtype: np.dtype[Any]) -> tuple[Array, int, int]:
    """The twiddle table on ``dev``, its fine size S and the start Q of its last part.

    w_n^k = exp(-2 pi i k / n) is the product of two entries of a two-level table (S fine, n / S
    coarse ones); the stages inside a pass read w_m^k (m the largest radix) from the last part.
    """
    bits = n.bit_length() - 1
    s = 1 << ((bits + 1) // 2)
    fine = np.exp(-2j * np.pi * np.arange(s) / n)
    coarse = np.exp(-2j * np.pi * (np.arange(max(n // s, 1)) * s) / n)
    stages = np.exp(-2j * np.pi * np.arange(m) / m)
    table = np.concatenate([fine, coarse, stages])
    return from_numpy(table, dtype, dev), s, len(fine) + len(coarse)


def _radices(n: int, max_radix: int) -> list[int]:
    """Powers of two, each at most ``max_radix``, as equal as possible, multiplying to ``n``."""
    bits = n.bit_length() - 1
    passes = max(1, -(-bits // (max_radix.bit_length() - 1)))
    return [1 << (bits // passes + (1 if k < bits % passes else 0)) for k in range(passes)]


class _Pass(NamedTuple):
    """One pass of a transform's plan: its pipeline, the parameter words after the bases, and
    its workgroup count."""

    pipe: Any
    words: tuple[int, ...]
    groups: int


class _Plan(NamedTuple):
    """What a transform of a given length, batch and direction needs, made once: the passes
    and the twiddle table (held here, so that its binding stays valid)."""

    passes: tuple[_Pass, ...]
    table: Array
    table_binding: tuple[Any, int, int]


@functools.lru_cache(maxsize=128)
def _plan(dev: GpuDevice, rows: int, n: int, dtype: np.dtype[Any], inverse: bool, scale: float) -> _Plan:
    """The passes of a Stockham FFT of ``rows`` rows of ``n`` points (a power of two)."""
    tile, threads = _tile(dev, dtype, n)
    # a pass's DFTs have at most a quarter of a tile's points, so that a workgroup always does at
    # least four side by side and its memory accesses come in runs of four
    radices = _radices(n, tile // 4)
    table, s, q = _twiddles(dev, n, max(radices), dtype)
    log = int.bit_length
    real = _dtypes.REAL_OF[dtype]
    # the last pass scales its outputs, the others multiply by one
    one, scaled = (tuple(np.array([v], real).view(np.uint32).tolist()) for v in (1.0, scale))
    passes, p = [], 1
    for k, r in enumerate(radices):
        cols = tile // r
        total = rows * (n // r)
        subs = {
            "T": wgsl_type(dtype),
            "TILE": tile,
            "WG": threads,
            "LN": log(n) - 1,
            "LR": log(r) - 1,
            "LP": log(p) - 1,
            "LC": log(cols) - 1,
            "S": s,
            "LSF": log(s) - 1,
            "Q": q,
            "LM": log(max(radices)) - log(r),
            "INVERSE": str(inverse).lower(),
            "J_FIRST": str(p < cols).lower(),
            "SCALE": "bitcast<f32>(P[3])"
            if dtype == _dtypes.complex64
            else "bitcast<f64>((u64(P[4]) << 32u) | u64(P[3]))",
        }
        words = (total, *(scaled if k == len(radices) - 1 else one))
        passes.append(_Pass(kernel_pipeline(dev, "fft_pass", subs), words, -(-total // cols)))
        p *= r
    table_binding, _ = bind(dev, table._storage, 0, table.size, dtype, "fft")
    return _Plan(tuple(passes), table, table_binding)


def _stockham(x: Array, inverse: bool, scale: float) -> Array:
    """The DFT of each row of the contiguous (rows, n) complex ``x``, n a power of two (scaled)."""
    dev, dtype = x.device, x.dtype
    rows, n = x.shape
    plan = _plan(dev, rows, n, dtype, inverse, scale)
    src = x
    for pipe, (total, *scale_words), groups in plan.passes:
        dst = empty((rows, n), dtype, dev)
        bind_o, o_base = bind(dev, dst._storage, dst._offset, rows * n, dtype, "fft")
        bind_a, a_base = bind(dev, src._storage, src._offset, rows * n, dtype, "fft")
        params = pack_words(total, a_base, o_base, *scale_words)
        dev.dispatch(pipe, [bind_o, bind_a, plan.table_binding], params, groups)
        src = dst
    return src


@functools.lru_cache(maxsize=64)
def _chirp(dev: GpuDevice, n: int, m: int, dtype: np.dtype[Any]) -> tuple[Array, Array]:
    """Bluestein's chirp c_k = exp(-pi i k^2 / n) (k < n) and the FFT of the length-m filter conj(c)."""
    k = np.arange(n)
    chirp = np.exp(-1j * np.pi * ((k * k) % (2 * n)) / n)  # k^2 mod 2n keeps the angle exact
    filt = np.zeros(m, np.complex128)
    filt[:n] = np.conj(chirp)
    filt[m - n + 1 :] = np.conj(chirp[1:][::-1])
    spectrum = _stockham(from_numpy(filt.reshape(1, m), dtype, dev), False, 1.0)
    return from_numpy(chirp, dtype, dev), spectrum


def _bluestein(x: Array, inverse: bool, scale: float) -> Array:
    """The DFT of rows of any length n as a convolution: X_k = c_k (x c * conj(c))_k."""
    from ruda_wgpu._creation import zeros  # builds on this module's neighbours
    from ruda_wgpu._manipulation import concat

    dev, dtype = x.device, x.dtype
    rows, n = x.shape
    m = 1 << (2 * n - 2).bit_length()
    chirp, spectrum = _chirp(dev, n, m, dtype)
    if inverse:  # the inverse DFT is the conjugate of the forward DFT of the conjugate
        x = apply("conj", x)
    padded = concat([apply("multiply", x, chirp), zeros((rows, m - n), dtype=dtype, device=dev)], axis=-1)
    conv = _stockham(apply("multiply", _stockham(padded, False, 1.0), spectrum), True, 1.0 / m)
    out = apply("multiply", apply("multiply", conv[:, :n], chirp), scale)
    return apply("conj", out) if inverse else out


def transform_rows(x: Array, inverse: bool, scale: float) -> Array:
    """The (inverse when asked) DFT of each row of the contiguous complex (rows, n) ``x``, times ``scale``."""
    rows, n = x.shape
    if rows == 0 or n <= 1:
        return apply("multiply", x, scale)
    if n & (n - 1) == 0:
        return _stockham(x, inverse, scale)
    return _bluestein(x, inverse, scale)


def check_length(n: int, what: str) -> int:
    """``n`` as a positive int, or a ValueError naming ``what``."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"{what} must be a positive integer, not {n!r}")
    return int(n)


def norm_scale(norm: str, n: int, inverse: bool) -> float:
    """The factor a transform of length n is multiplied by under ``norm``."""
    if norm == "backward":
        return 1.0 / n if inverse else 1.0
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 if inverse else 1.0 / n
    raise ValueError(f"norm must be 'backward', 'ortho' or 'forward', not {norm!r}")
