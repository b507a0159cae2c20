"""Complex FFTs of the rows of contiguous arrays, on the GPU.

Power-of-two lengths: a Stockham FFT in passes of ``wgsl/fft_pass.wgsl``, each doing DFTs of up
to :data:`MAX_RADIX` points, so 2^16 points take two passes over the data and 2^24 three; on GPUs
2^17 to 2^20 points (up to 2^20 in all) take two passes of up to :data:`WIDE_RADIX` instead of
three. Inside a pass, a DFT is a few stages of up to 16 points a thread, in registers (the
straight-line code of :func:`register_dft`), with workgroup memory between stages. Lengths whose prime factors
are at most :data:`MAX_PRIME` (1000, 10^6, 3 x 2^20): a mixed-radix Stockham FFT in passes of
``wgsl/fft_mixed.wgsl``, a thread doing one DFT of the pass's radix in registers (the code of
``_fft_codegen.mixed_dft``) between global loads and stores, so 10^6 points take four passes. Other
lengths: Bluestein's algorithm, the DFT as a convolution with a chirp, done with power-of-two FFTs
of at least twice the length (several times the work). Each pass is a kernel specialised to its
sizes, and a transform's passes are planned once per length, batch and direction (:func:`_plan`,
:func:`_mixed_plan`), so that a call records its dispatches and little else. Twiddle factors
and chirps are computed on the host in float64 (exactly rounded to the dtype) and kept on the
device per length."""

from __future__ import annotations

import functools
import math
import re
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _dtypes, _wgsl
from ruda_wgpu._array import Array, contiguous, empty, from_numpy
from ruda_wgpu._buffers import storage_itemsize
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import GpuDevice
from ruda_wgpu._fft_codegen import mixed_pass_subs, register_dft, smallest_prime_factor
from ruda_wgpu._kernels import bind, kernel_pipeline, pack_words, prepared, wgsl_type
from ruda_wgpu._manipulation import concat, matrix_transpose, reshape
from ruda_wgpu._ops import apply, astype
from ruda_wgpu._parts import fits, halves, too_large

#: the largest radix of a pass (points of one DFT in a workgroup), the threads a workgroup aims
#: at, and the largest DFT a thread does in its registers (one stage of a pass). Measured on an
#: H200 through Vulkan (complex64, 40 transforms queued; GPU time per transform): 2^24 points took
#: 315 us with these, 450 with 256 threads or with 1024-point passes of 512 threads; at 2^20 the
#: layouts were within 10% of each other (36-47 us). On lavapipe too they were within 15%. Later,
#: on the same GPU: stages of 8 or 4 points a thread (with 256 or 512 threads a workgroup) were
#: no faster anywhere (2^20: 31-43 us against 30; 2^24: 415-848 against 368), nor was a swizzle
#: of workgroup-memory places that halves the bank conflicts a model predicts (29.5 us either way).
MAX_RADIX = 256
THREADS = 128
REGISTER_RADIX = 16

#: lengths that passes of at most MAX_RADIX points would cover in three passes, but passes of up
#: to WIDE_RADIX points in two (2^17 to 2^20), take two, of WIDE_THREADS threads a workgroup,
#: when the transforms hold at most WIDE_MOST_POINTS points in all: a pass costs a few
#: microseconds whatever its work (measured on the H200: an empty dispatch 2.4-2.8 us, 1 MB read
#: and written 4.3-5.5), which outweighs the wide passes' slower kernels only on small work. One
#: transform of 2^20 points took 36 us of GPU and recording time against 50 in three passes (49
#: with 1024-point passes of 128 threads); 16 of them took 0.63 ms against 0.47 (waited for).
#: GPUs only (:func:`_wide_passes`).
WIDE_RADIX = 1024
WIDE_THREADS = 256
WIDE_MOST_POINTS = 1 << 20


def _wide_passes(dev: GpuDevice) -> bool:
    """Whether ``dev`` takes two passes of up to WIDE_RADIX points where MAX_RADIX would make
    three: GPUs do; on lavapipe (a CPU adapter, which runs a workgroup's threads in turn) 2^20
    points took 47 ms that way against 20 in three passes."""
    return not dev.cpu


#: lengths whose prime factors are all at most MAX_PRIME (other than powers of two) take
#: mixed-radix passes of one DFT a thread, radices at most MAX_MIXED_RADIX (complex64) or
#: MAX_MIXED_RADIX_128 (complex128, whose points take twice the registers), MIXED_THREADS threads
#: a workgroup; lengths with a larger prime factor take Bluestein's algorithm. Measured on an H200
#: (complex64, GPU time of prepared passes): radices up to 64 against up to 32 took 10^6 points in
#: 54 us against 60 (four passes, not five), 1000 x 1000 in 32 against 41, 10 x 10^5 43 against
#: 49, 3 x 2^20 169 against 161, and 6^7, 3^12, 64 x 5^6 the same; 128 threads were no faster
#: than 64. On lavapipe too radices up to 64 were as fast or faster.
MAX_PRIME = 13
MAX_MIXED_RADIX = 64
MAX_MIXED_RADIX_128 = 32
MIXED_THREADS = 64


class _Shape(NamedTuple):
    """How a pass of radix R is laid out: C DFTs a workgroup, WG threads, and the radices of the
    stages inside a DFT (R0 first, then RR, STAGES in all)."""

    cols: int
    threads: int
    r0: int
    rr: int
    stages: int


def _shape(dev: GpuDevice, dtype: np.dtype[Any], r: int, threads_wanted: int) -> _Shape:
    """The layout of a pass of radix ``r``, about ``threads_wanted`` threads a workgroup, within
    ``dev``'s limits."""
    bits = r.bit_length() - 1
    stages = max(1, -(-bits // (REGISTER_RADIX.bit_length() - 1)))
    rr = 1 << -(-bits // stages)
    r0 = r // rr ** (stages - 1)
    limits = dev.limits
    most_threads = min(
        int(limits["max-compute-invocations-per-workgroup"]), int(limits["max-compute-workgroup-size-x"])
    )
    cols = max(1, threads_wanted * rr // r)
    if stages > 1:  # C DFTs of r points in workgroup memory (the plan keeps r within it)
        cols = min(cols, int(limits["max-compute-workgroup-storage-size"]) // dtype.itemsize // r)
    cols = 1 << (min(cols, max(1, most_threads * rr // r)).bit_length() - 1)
    threads = cols * r // rr
    if threads > most_threads:
        raise NotImplementedError(
            f"an FFT pass of radix {r} needs {threads} threads a workgroup; {dev} allows {most_threads}"
        )
    return _Shape(cols, threads, r0, rr, stages)


class _Twiddles(NamedTuple):
    """A twiddle table on the device, its binding (valid while the table is held), its fine
    size S and the start Q of its last part."""

    table: Array
    binding: tuple[Any, int, int]
    s: int
    q: int


@functools.lru_cache(maxsize=64)
def _twiddles(dev: GpuDevice, n: int, m: int, dtype: np.dtype[Any]) -> _Twiddles:
    """The twiddle table of length ``n`` on ``dev`` (see :class:`_Twiddles`).

    w_n^k = exp(-2 pi i k / n) is the product of two entries of a two-level table (S fine, n / S
    coarse ones; S a power of two when n is); the stages inside a power-of-two pass read w_m^k
    (m the largest radix) from the last part.
    """
    s = 1 << (n.bit_length() // 2) if n & (n - 1) == 0 else math.isqrt(n - 1) + 1
    fine = np.exp(-2j * np.pi * np.arange(s) / n)
    coarse = np.exp(-2j * np.pi * (np.arange(-(-n // s)) * s) / n)
    stages = np.exp(-2j * np.pi * np.arange(m) / m)
    table = from_numpy(np.concatenate([fine, coarse, stages]), dtype, dev)
    binding, _ = bind(dev, table._storage, 0, table.size, dtype, "fft")
    return _Twiddles(table, binding, s, len(fine) + len(coarse))


def _radices(n: int, max_radix: int) -> list[int]:
    """Powers of two, each at most ``max_radix``, as equal as possible, multiplying to ``n``."""
    bits = n.bit_length() - 1
    passes = max(1, -(-bits // (max_radix.bit_length() - 1)))
    return [1 << (bits // passes + (1 if k < bits % passes else 0)) for k in range(passes)]


#: a loop over a thread's points, ``for (var m = 0u; m < R0; m = m + 1u) { ... }`` on one line
_POINT_LOOP = re.compile(r"for \(var m = 0u; m < (R0|RR); m = m \+ 1u\) \{ (.*) \}$", re.MULTILINE)


def _pass_source(subs: dict[str, object], shape: _Shape) -> str:
    """The pass kernel's WGSL with its loops over a thread's points unrolled.

    Drivers do not reliably unroll them, and a private array indexed by a variable lives in memory
    rather than in registers (on the H200 a pass then took twice as long)."""
    counts = {"R0": shape.r0, "RR": shape.rr}

    def unroll(match: re.Match[str]) -> str:
        return " ".join(re.sub(r"\bm\b", f"{m}u", match.group(2)) for m in range(counts[match.group(1)]))

    source = _POINT_LOOP.sub(unroll, _wgsl.kernel("fft_pass", **subs))
    if "var m = " in source:  # a loop written otherwise would run, slowly: keep the file's form
        raise AssertionError("wgsl/fft_pass.wgsl has a per-point loop that _POINT_LOOP does not match")
    return source


#: the kernels' scale factor, from parameter words 3 (and 4): by whether the dtype is complex64
_SCALE = {True: "bitcast<f32>(P[3])", False: "bitcast<f64>((u64(P[4]) << 32u) | u64(P[3]))"}


def _scale_words(dtype: np.dtype[Any], scale: float) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The parameter words of a factor of one and of ``scale`` in the real type of ``dtype``: the
    last pass of a transform scales its outputs, the others multiply by one."""
    real = _dtypes.REAL_OF[dtype]
    one, scaled = (tuple(np.array([v], real).view(np.uint32).tolist()) for v in (1.0, scale))
    return one, scaled


class _Pass(NamedTuple):
    """One pass of a transform's plan: its pipeline, the parameter words after the bases, and
    its workgroup count."""

    pipe: Any
    words: tuple[int, ...]
    groups: int


class _Plan(NamedTuple):
    """What a transform of a given length, batch and direction needs, made once: the passes and
    the twiddle table (the passes' dispatches are kept per buffers, see :func:`_run`)."""

    passes: tuple[_Pass, ...]
    twiddles: _Twiddles


@functools.lru_cache(maxsize=128)
def _plan(dev: GpuDevice, rows: int, n: int, dtype: np.dtype[Any], inverse: bool, scale: float) -> _Plan:
    """The passes of a Stockham FFT of ``rows`` rows of ``n`` points (a power of two)."""
    # a pass's DFT lives in workgroup memory between its stages
    room = int(dev.limits["max-compute-workgroup-storage-size"]) // dtype.itemsize
    room_radix = 1 << (room.bit_length() - 1)
    radices = _radices(n, min(MAX_RADIX, room_radix))
    wide = min(WIDE_RADIX, room_radix)
    if len(radices) > 2 and rows * n <= WIDE_MOST_POINTS and n <= wide**2 and _wide_passes(dev):
        radices = _radices(n, wide)
    twiddles = _twiddles(dev, n, max(radices), dtype)
    s, q = twiddles.s, twiddles.q
    log = int.bit_length
    one, scaled = _scale_words(dtype, scale)
    passes, p = [], 1
    for k, r in enumerate(radices):
        shape = _shape(dev, dtype, r, WIDE_THREADS if r > MAX_RADIX else THREADS)
        total = rows * (n // r)
        # (a pass of one stage never calls dft_rest, but its kernel names it)
        stages = (("dft_first", shape.r0), ("dft_rest", shape.rr))
        dfts = "\n".join(register_dft(name, points, dtype, inverse) for name, points in stages)
        subs = {
            "T": wgsl_type(dtype),
            "TILE": shape.cols * r if shape.stages > 1 else 1,
            "WG": shape.threads,
            "LN": log(n) - 1,
            "LR": log(r) - 1,
            "LP": log(p) - 1,
            "LC": log(shape.cols) - 1,
            "LR0": log(shape.r0) - 1,
            "LRR": log(shape.rr) - 1,
            "STAGES": shape.stages,
            "S": s,
            "LSF": log(s) - 1,
            "Q": q,
            "LM": log(max(radices)) - 1,
            "INVERSE": str(inverse).lower(),
            "J_FIRST": str(p < shape.cols).lower(),
            "SCALE": _SCALE[dtype == _dtypes.complex64],
            "DFTS": dfts,
        }
        words = (total, *(scaled if k == len(radices) - 1 else one))
        pipe = dev.pipeline(("fft_pass", *subs.items()), functools.partial(_pass_source, subs, shape))
        passes.append(_Pass(pipe, words, -(-total // shape.cols)))
        p *= r
    return _Plan(tuple(passes), twiddles)


@functools.lru_cache(maxsize=256)  # every transform of a length that is not a power of two asks
def _prime_factors(n: int) -> tuple[int, ...]:
    """The prime factors of ``n``, smallest first, with their multiplicities."""
    factors = []
    while n > 1:
        p = smallest_prime_factor(n)
        factors.append(p)
        n //= p
    return tuple(factors)


def _mixed_radices(n: int, most: int) -> list[int]:
    """The radices of ``n``'s mixed-radix passes, largest first: its prime factors packed,
    largest first, into as few products of at most ``most`` as first fit finds."""
    radices: list[int] = []
    for p in reversed(_prime_factors(n)):
        fit = next((k for k, r in enumerate(radices) if r * p <= most), None)
        if fit is None:
            radices.append(p)
        else:
            radices[fit] *= p
    return sorted(radices, reverse=True)


@functools.lru_cache(maxsize=128)
def _mixed_plan(
    dev: GpuDevice, rows: int, n: int, dtype: np.dtype[Any], inverse: bool, scale: float
) -> _Plan:
    """The passes of a mixed-radix Stockham FFT of ``rows`` rows of ``n`` points."""
    twiddles = _twiddles(dev, n, 1, dtype)
    one, scaled = _scale_words(dtype, scale)
    most = MAX_MIXED_RADIX if dtype == _dtypes.complex64 else MAX_MIXED_RADIX_128
    radices = _mixed_radices(n, most)
    passes, p = [], 1
    for k, r in enumerate(radices):
        subs = {
            "T": wgsl_type(dtype),
            "N": n,
            "M": n // r,
            "R": r,
            "PS": p,
            "STEP": n // (p * r),
            "S": twiddles.s,
            "INVERSE": str(inverse).lower(),
            "WG": MIXED_THREADS,
            "SCALE": _SCALE[dtype == _dtypes.complex64],
            **mixed_pass_subs(r, p, dtype, inverse),
        }
        total = rows * (n // r)
        words = (total, *(scaled if k == len(radices) - 1 else one))
        passes.append(_Pass(kernel_pipeline(dev, "fft_mixed", subs), words, -(-total // MIXED_THREADS)))
        p *= r
    return _Plan(tuple(passes), twiddles)


def _stockham(x: Array, inverse: bool, scale: float) -> Array:
    """The DFT of each row of the contiguous (rows, n) complex ``x``, n a power of two (scaled)."""
    return _run(x, _plan(x.device, *x.shape, x.dtype, inverse, scale))


def _mixed(x: Array, inverse: bool, scale: float) -> Array:
    """The DFT of each row of the contiguous (rows, n) complex ``x``, n's prime factors at most
    MAX_PRIME (scaled)."""
    return _run(x, _mixed_plan(x.device, *x.shape, x.dtype, inverse, scale))


def _run(x: Array, plan: _Plan) -> Array:
    """Record the passes of ``plan`` on the rows of ``x``; the result.

    A loop transforms the same input into the same few pooled buffers again and again: the
    passes' dispatches are prepared once per input buffer and offset and output buffers (see
    ``_kernels.prepared``), and a repeat only copies them into the batch (a few microseconds
    less a call). The buffer the passes alternate with is the device's scratch buffer (see
    ``GpuDevice.scratch``)."""
    dev, dtype = x.device, x.dtype
    rows, n = x.shape
    # two buffers in turn, the last pass writing the result: fewer allocations and bind groups
    out = empty((rows, n), dtype, dev)
    result = out._storage
    storage = x._storage
    with dev._lock:  # the scratch buffer is the device's until the passes are recorded
        other = dev.scratch("fft", result.nbytes) if len(plan.passes) > 1 else result
        targets = (result, other) if len(plan.passes) % 2 else (other, result)

        def steps() -> tuple[Step, ...]:
            src = bind(dev, storage, x._offset, rows * n, dtype, "fft")
            made = []
            for k, (pipe, (total, *scale_words), groups) in enumerate(plan.passes):
                bound = bind(dev, targets[k % 2], 0, rows * n, dtype, "fft")
                (bind_a, a_base), (bind_o, o_base) = src, bound
                params = pack_words(total, a_base, o_base, *scale_words)
                made.append(dev.step(pipe, [bind_o, bind_a, plan.twiddles.binding], params, groups))
                src = bound
            return tuple(made)

        # (the passes and the twiddles' buffer make the dispatches; a plan made again after
        # its cache let it go finds its dispatches still kept)
        sig = ("fft", plan.passes, plan.twiddles.binding)
        dev.replay(prepared(dev, sig, (storage.buffer, x._offset, result.buffer, other.buffer), steps))
    return out


@functools.lru_cache(maxsize=64)
def _chirp(dev: GpuDevice, n: int, m: int, dtype: np.dtype[Any]) -> tuple[Array, Array]:
    """Bluestein's chirp c_k = exp(-pi i k^2 / n) (k < n) and the FFT of the length-m filter conj(c)
    divided by m, the inverse FFT's factor: taken before the inverse sums, not after, so that
    they stay in range (the DFT of 4099 float32 values of 1e31, 4.1e34, had been NaN)."""
    k = np.arange(n)
    chirp = np.exp(-1j * np.pi * ((k * k) % (2 * n)) / n)  # k^2 mod 2n keeps the angle exact
    filt = np.zeros(m, np.complex128)
    filt[:n] = np.conj(chirp)
    filt[m - n + 1 :] = np.conj(chirp[1:][::-1])
    spectrum = transform_rows(from_numpy(filt.reshape(1, m), dtype, dev), False, 1.0 / m)
    return from_numpy(chirp, dtype, dev), spectrum


def _bluestein(x: Array, inverse: bool, scale: float) -> Array:
    """The DFT of rows of any length n as a convolution: X_k = c_k (x c * conj(c))_k."""
    from ruda_wgpu._creation import zeros  # builds on this module's neighbours

    dev, dtype = x.device, x.dtype
    rows, n = x.shape
    m = 1 << (2 * n - 2).bit_length()
    chirp, spectrum = _chirp(dev, n, m, dtype)
    if inverse:  # the inverse DFT is the conjugate of the forward DFT of the conjugate
        x = apply("conj", x)
    padded = concat([apply("multiply", x, chirp), zeros((rows, m - n), dtype=dtype, device=dev)], axis=-1)
    # (through transform_rows: the padded rows may pass a binding where the signals did not)
    conv = transform_rows(apply("multiply", transform_rows(padded, False, 1.0), spectrum), True, 1.0)
    out = apply("multiply", apply("multiply", conv[:, :n], chirp), scale)
    return apply("conj", out) if inverse else out


def transform_rows(x: Array, inverse: bool, scale: float) -> Array:
    """The (inverse when asked) DFT of each row of the contiguous complex (rows, n) ``x``, times ``scale``."""
    rows, n = x.shape
    if rows == 0 or n <= 1:
        return apply("multiply", x, scale)
    if too_large(x):  # (each half's rows, and their passes' buffers, then fit)
        if rows > 1:
            return concat([transform_rows(half, inverse, scale) for half in halves(x, 0)])
        if _shorter_factor(n) > 1:
            return _four_step(x, inverse, scale)
        return _bluestein(x, inverse, scale)  # (a prime length: its FFTs are of powers of two)
    if n & (n - 1) == 0:
        return _stockham(x, inverse, scale)
    if max(_prime_factors(n)) <= MAX_PRIME:
        return _mixed(x, inverse, scale)
    return _bluestein(x, inverse, scale)


def _shorter_factor(n: int) -> int:
    """The largest divisor of ``n`` up to its square root (1 for a prime)."""
    return max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)


def _four_step(x: Array, inverse: bool, scale: float) -> Array:
    """The DFT of one signal (a (1, n) row) too large for one storage binding, as DFTs of
    shorter ones (the "four-step" FFT): with n = n1 n2 and j = n2 j1 + j2, the n2 DFTs over j1
    (the columns of the signal as an (n1, n2) matrix), each value times w^(j2 k1) (w the n-th
    root of unity of the direction), then the n1 DFTs over j2; the result's k1 + n1 k2-th value
    is the second's k2-th of row k1. Each step is many short signals, which go in halves."""
    from ruda_wgpu._creation import arange  # builds on this module's neighbours

    dev, n = x.device, x.shape[1]
    n1 = _shorter_factor(n)
    n2 = n // n1
    columns = transform_rows(contiguous(matrix_transpose(reshape(x, (n1, n2)))), inverse, 1.0)  # [j2, k1]
    # w^(j2 k1), j2 k1 < n exact in the device's widest float, whose angle and sines the dtype rounds
    wide = _dtypes.float64 if "float64" in dev.dtype_names else _dtypes.REAL_OF[x.dtype]
    steps = apply(
        "multiply",
        reshape(arange(n2, dtype=wide, device=dev), (n2, 1)),
        reshape(arange(n1, dtype=wide, device=dev), (1, n1)),
    )
    angle = apply("multiply", steps, (2 if inverse else -2) * math.pi / n)
    real = _dtypes.REAL_OF[x.dtype]
    turns = apply(
        "add",
        astype(astype(apply("cos", angle), real), x.dtype),
        apply("multiply", astype(astype(apply("sin", angle), real), x.dtype), 1j),
    )
    rows = transform_rows(contiguous(matrix_transpose(apply("multiply", columns, turns))), inverse, scale)
    return reshape(contiguous(matrix_transpose(rows)), (1, n))  # [k1, k2] to k1 + n1 k2


#: threads a workgroup of the real transforms' pre- and post-processing (wgsl/fft_real.wgsl)
REAL_THREADS = 64


def real_spectrum(z: Array, n: int) -> Array:
    """The (rows, n/2 + 1) spectra of real rows of even length ``n``, from the (rows, n/2) complex
    DFTs of their samples taken in pairs as real and imaginary parts."""
    return _real_pass(z, n, True)


def pair_spectrum(x: Array, n: int) -> Array:
    """The way back: from (rows, n/2 + 1) half spectra of real rows of even length ``n``, the
    (rows, n/2) spectra whose inverse DFTs (scaled by 2/n) are the rows' samples in pairs."""
    return _real_pass(x, n, False)


class _RealPlan(NamedTuple):
    """The pipeline of a real transform's pass and its twiddle table."""

    pipe: Any
    twiddles: _Twiddles


@functools.lru_cache(maxsize=64)
def _real_plan(dev: GpuDevice, n: int, width_in: int, dtype: np.dtype[Any], forward: bool) -> _RealPlan:
    """The one pass of :func:`real_spectrum` (``forward``) or :func:`pair_spectrum` for rows of
    ``width_in`` complex inputs and length ``n``, and its twiddle table."""
    h = n // 2
    twiddles = _twiddles(dev, n, 1, dtype)
    subs = {
        "T": wgsl_type(dtype),
        "R": wgsl_type(_dtypes.REAL_OF[dtype]),
        "H": h,
        "IN_ROW": width_in,
        "OUT_ROW": h + 1 if forward else h,
        "S": twiddles.s,
        "FORWARD": str(forward).lower(),
        "WG": REAL_THREADS,
    }
    return _RealPlan(kernel_pipeline(dev, "fft_real", subs), twiddles)


def _real_pass(a: Array, n: int, forward: bool) -> Array:
    dev, dtype = a.device, a.dtype
    rows, h = a.shape[0], n // 2
    if rows > 1 and (too_large(a) or not fits(dev, rows * (h + 1), storage_itemsize(dtype))):
        return concat([_real_pass(half, n, forward) for half in halves(a, 0)])
    width = h + 1 if forward else h
    out = empty((rows, width), dtype, dev)
    if rows:
        plan = _real_plan(dev, n, a.shape[1], dtype, forward)
        bind_o, o_base = bind(dev, out._storage, 0, out.size, dtype, "fft")
        bind_a, a_base = bind(dev, a._storage, a._offset, a.size, dtype, "fft")
        total = rows * width
        params = pack_words(total, a_base, o_base)
        dev.dispatch(plan.pipe, [bind_o, bind_a, plan.twiddles.binding], params, -(-total // REAL_THREADS))
    return out


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
