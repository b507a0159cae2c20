"""The linalg decompositions on the GPU, batched over leading axes.

- LU with partial pivoting (``wgsl/linalg_lu*.wgsl``): ``solve``, ``inv``, ``det``, ``slogdet``;
  one workgroup per matrix below :data:`LU_BLOCKED_MIN` rows, in panels from there.
- Cholesky (``linalg_cholesky.wgsl``): one workgroup per matrix below
  :data:`CHOLESKY_BLOCKED_MIN` rows, in blocks of columns from there.
- Householder QR (``linalg_qr*.wgsl``): one workgroup per matrix below :data:`QR_BLOCKED_MIN`
  rows and columns, in blocks of columns from there (each in panels, which GPUs hold in
  registers).
- Jacobi methods (``linalg_jacobi.wgsl``), which map well to GPUs and are accurate: two-sided
  for ``eigh``/``eigvalsh``, one-sided (Hestenes) for ``svd``/``svdvals``, and through them
  ``pinv``, ``matrix_rank`` and the spectral matrix norms; one workgroup per matrix below
  :data:`JACOBI_BLOCKS_MIN` columns, by blocks from there, two dispatches a round of pairs of
  blocks (``linalg_jacobi_block.wgsl``, then ``linalg_jacobi_block_apply.wgsl``).
- ``eig``/``eigvals`` (``linalg_eig.wgsl``): Hessenberg reduction, shifted QR, back substitution.

Each kernel works on a contiguous copy of its input in place. Exactly singular (``solve``,
``inv``) and non positive definite (``cholesky``) matrices raise :class:`LinAlgError`, as
NumPy's do: that check reads one flag per matrix back to the host. Integer input is
converted to the device's default float. On llvmpipe, whose threads stop looping after
:data:`LLVMPIPE_LOOPS` iterations, the column loops of Cholesky and QR and the rounds of the
Jacobi sweeps are split over dispatches, and sizes a kernel still cannot stay under raise
NotImplementedError.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from string import Template
from typing import Any, NamedTuple, ParamSpec, TypeVar, cast

import numpy as np
from ruda.spec import EighResult, EigResult, QRResult, SlogdetResult, SVDResult

from ruda_wgpu import _dtypes, _linalg_steps, _wgsl
from ruda_wgpu._array import Array, copy_of, empty, to_numpy
from ruda_wgpu._buffers import Storage
from ruda_wgpu._creation import arange, asarray, eye, tril, triu, zeros
from ruda_wgpu._indexing import take_along_axis
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import (
    COMPLEX_SUFFIX,
    LLVMPIPE_LOOPS,
    LOOP_RESERVE,
    ONE,
    ZERO,
    BindingLimitError,
    bind,
    kernel_pipeline,
    loop_limited,
    pack_words,
    run,
    wgsl_type,
)
from ruda_wgpu._linalg import _diagonal_view, _float_input, matmul, side_by_side, unstacked, vector_norm
from ruda_wgpu._manipulation import (
    _integer,
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    matrix_transpose,
    reshape,
)
from ruda_wgpu._ops import apply, astype, where
from ruda_wgpu._parts import halves, outer_axis
from ruda_wgpu._sorting import argsort
from ruda_wgpu._statistical import any as any_
from ruda_wgpu._statistical import max as max_
from ruda_wgpu._statistical import min as min_
from ruda_wgpu._statistical import prod
from ruda_wgpu._statistical import sum as sum_
from ruda_wgpu._utility import count_nonzero

# what the linalg extension takes from here, in this module's order
__all__ = [
    "LinAlgError",
    "solve",
    "inv",
    "det",
    "slogdet",
    "cholesky",
    "qr",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "svd",
    "svdvals",
    "pinv",
    "matrix_rank",
    "matrix_norm",
    "matrix_power",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")

WG = 256
#: Jacobi sweeps before giving up on convergence (quadratic convergence needs far fewer)
MAX_SWEEPS = 40
_U32 = _dtypes.uint32


class LinAlgError(ValueError):
    """A matrix the operation is not defined for: singular, or not positive definite."""


#: the arithmetic the kernels are written in, for real (T = R) and complex (T = vec2<R>) elements
_FIELD_REAL = """
fn mul(x: ${T}, y: ${T}) -> ${T} { return x * y; }
fn div(x: ${T}, y: ${T}) -> ${T} { return x / y; }
fn conj(x: ${T}) -> ${T} { return x; }
fn mag(x: ${T}) -> ${R} { return ${ABS}(x); }
fn mag2(x: ${T}) -> ${R} { return x * x; }
fn re(x: ${T}) -> ${R} { return x; }
fn im(x: ${T}) -> ${R} { return ${RZERO}; }
fn from_re(x: ${R}) -> ${T} { return x; }
fn is_zero(x: ${T}) -> bool { return x == ${ZERO}; }
"""
_FIELD_COMPLEX = """
fn mul(x: ${T}, y: ${T}) -> ${T} { return mul_${C}(x, y); }
fn div(x: ${T}, y: ${T}) -> ${T} {
  // a divisor near the subnormals scaled up first: Smith's 1 / (c + d r) overflows there, and
  // the quotient came out NaN (inf * 0), as it does in NumPy's division
  let s = max(${ABS}(y.x), ${ABS}(y.y));
  if (s > ${RZERO} && s < ${TINY}) { return div_${C}(x / s, y / s); }
  return div_${C}(x, y);
}
fn conj(x: ${T}) -> ${T} { return ${T}(x.x, -x.y); }
fn mag(x: ${T}) -> ${R} { return abs_${C}(x); }
fn mag2(x: ${T}) -> ${R} { return dot(x, x); }
fn re(x: ${T}) -> ${R} { return x.x; }
fn im(x: ${T}) -> ${R} { return x.y; }
fn from_re(x: ${R}) -> ${T} { return ${T}(x, ${RZERO}); }
fn is_zero(x: ${T}) -> bool { return all(x == ${ZERO}); }
"""


def _subs(dtype: np.dtype[Any]) -> dict[str, object]:
    """Template values of the linalg kernels for a float or complex dtype: T the element type, R
    the real type, FIELD the arithmetic on T (mul, div, conj, mag, mag2, re, im, from_re, is_zero)."""
    return dict(_dtype_subs(dtype))  # (a copy: callers add their own)


@functools.cache  # (a blocked factorisation asks once a panel; the template takes 10 us)
def _dtype_subs(dtype: np.dtype[Any]) -> Mapping[str, object]:
    part = _dtypes.REAL_OF.get(dtype, dtype)
    if wgsl_type(part) == "f64":
        subs = {"R": "f64", "RZERO": "0.0lf", "RONE": "1.0lf", "ABS": "abs_d", "SQRT": "sqrt_d",
                "EPS": "2.220446049250313e-16lf", "TINY": "1e-290lf", "WG": WG}  # fmt: skip
    else:
        subs = {"R": "f32", "RZERO": "0.0f", "RONE": "1.0f", "ABS": "abs", "SQRT": "sqrt",
                "EPS": "1.1920929e-07f", "TINY": "1e-35f", "WG": WG}  # fmt: skip
    t = wgsl_type(dtype)
    subs |= {"T": t, "ZERO": ZERO[t], "ONE": ONE[t], "C": COMPLEX_SUFFIX.get(t, "")}
    subs["FIELD"] = Template(_FIELD_COMPLEX if dtype.kind == "c" else _FIELD_REAL).substitute(subs)
    return subs


def _matrices(x: Any, fn: str, square: bool = True) -> Array:
    """A contiguous float copy of ``x`` (at least 2-D; square when asked) for a kernel to overwrite."""
    return astype(x, _float_dtype(x, fn, square), copy=True)


def _float_dtype(x: Any, fn: str, square: bool = True) -> np.dtype[Any]:
    """The float dtype ``fn`` computes ``x`` in, once ``x`` is checked to be an array of matrices
    (square when asked) of a dtype it takes."""
    if not isinstance(x, Array):
        raise TypeError(f"linalg.{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"linalg.{fn}() needs an array of at least two dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{fn}() needs square matrices in the last two axes, got shape {x.shape}")
    if x.dtype.kind not in "fcbiu" or x.dtype == _dtypes.float16:
        raise TypeError(f"linalg.{fn}() needs a float32, float64 or complex array, not {x.dtype.name}")
    return x.dtype if x.dtype.kind in "fc" else default_dtypes_of(x.device)["real floating"]


def _in_batch_halves(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` of stacks of matrices, done on halves of the stack and joined where its kernels
    would bind more than a storage binding holds (:class:`BindingLimitError`), halved again as often
    as needed: a batch of matrices larger than a binding goes in parts. A single matrix that
    large, or a stack passed with an array keyword argument (``rtol``), still raises. (Functions
    that only compose wrapped ones, such as ``inv`` through ``_solve``, need no wrapper.)"""

    @functools.wraps(fn)
    def in_halves(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except BindingLimitError:
            cut = _cut_stack(args, kwargs)
            if cut is None:
                raise
            first, second, axis = cut
            again = cast(Callable[..., _R], in_halves)
            return cast(_R, _joined(again(*first, **kwargs), again(*second, **kwargs), axis))

    return in_halves


def _cut_stack(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], list[Any], int] | None:
    """The arguments of a linalg function in two halves of their (broadcast) stack of matrices,
    along its first axis longer than one, and that axis; arguments that are not matrices (a
    vector right-hand side, a power) go to both. None when the stack cannot be cut."""
    matrices = [a for a in args if isinstance(a, Array) and a.ndim >= 2]
    if not matrices or any(isinstance(v, Array) for v in kwargs.values()):
        return None
    stack = broadcast_shapes(*(a.shape[:-2] for a in matrices))
    axis = outer_axis(stack, None)
    if axis is None:
        return None
    first, second = [], []
    for a in args:
        if isinstance(a, Array) and a.ndim >= 2:
            lo, hi = halves(broadcast_to(a, (*stack, *a.shape[-2:])), axis)
        else:
            lo = hi = a
        first.append(lo)
        second.append(hi)
    return first, second, axis


def _joined(first: Any, second: Any, axis: int) -> Any:
    """Two halves' results (arrays, or named tuples of them) joined along the stack's ``axis``."""
    if isinstance(first, Array):
        return concat([first, second], axis=axis)
    return type(first)(*(concat([a, b], axis=axis) for a, b in zip(first, second, strict=True)))


def _batch(x: Array) -> int:
    return math.prod(x.shape[:-2])


def _bind_all(x: Array) -> tuple[Any, int, int]:
    return bind(x.device, x._storage, x._offset, x.size, x.dtype, "linalg")[0]


def _flags(storage: Storage, count: int, x: Array) -> np.ndarray[Any, Any]:
    return np.frombuffer(x.device.read(storage.buffer, 0, 4 * count), np.uint32) if count else np.zeros(0)


# -- llvmpipe's loop limit (LLVMPIPE_LOOPS: see _kernels) -------------------------------------------
# The kernels below are launched so that a thread stays under it (columns and sweeps split over
# dispatches, LU in panels), and what cannot raises instead.


def _check_loops(dev: Any, iterations: int, fn: str, shape: tuple[int, ...]) -> None:
    """Raise when a thread of a kernel would loop ``iterations`` times on llvmpipe (see above)."""
    if iterations > LLVMPIPE_LOOPS and loop_limited(dev):
        raise NotImplementedError(
            f"linalg.{fn}() of shape {shape} on {dev.name} ({dev.description}): a GPU thread of it "
            f"would loop about {iterations} times, and llvmpipe silently stops a thread's loops after "
            f"{LLVMPIPE_LOOPS}; use smaller matrices or a GPU adapter"
        )


#: threads of a one-workgroup-per-matrix kernel at least: a warp
MIN_THREADS = 32


def _threads_for(items: int) -> int:
    """Threads of a one-workgroup-per-matrix kernel whose widest loop spreads ``items`` over
    them: a power of two from :data:`MIN_THREADS` to :data:`WG`, so that each loop still takes
    one step a thread (and llvmpipe's loop counts stay those of :data:`WG` threads). With 256, a
    3 x 3 matrix's workgroup kept 247 threads or more idle through every barrier: on lavapipe
    20000 of them took 4.5 s in eigh, now 0.9, 2.1 in solve, now 0.34, 3.5 in qr, now 0.37, and
    5.3 in eig, now 0.8."""
    return min(WG, max(MIN_THREADS, 1 << (max(items, 1) - 1).bit_length()))


def _per_thread(count: int, threads: int = WG) -> int:
    """Iterations of a loop that spreads ``count`` items over a workgroup's threads (with its exit)."""
    return -(-count // threads) + 1


def _spans(costs: list[int], dev: Any, fn: str, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """Ranges [lo, hi) of a column loop whose per-column loop iterations ``costs`` add up to at
    most :data:`LLVMPIPE_LOOPS` on llvmpipe, one dispatch each; elsewhere the whole loop at once.
    A column that alone passes the limit raises (see :func:`_check_loops`)."""
    if not loop_limited(dev):
        return [(0, len(costs))]
    spans, lo, total = [], 0, 0
    for j, cost in enumerate(costs):
        _check_loops(dev, cost + LOOP_RESERVE, fn, shape)
        if total + cost + LOOP_RESERVE > LLVMPIPE_LOOPS:
            spans.append((lo, j))
            lo, total = j, 0
        total += cost
    spans.append((lo, len(costs)))
    return spans


def _cholesky_costs(n: int) -> list[int]:
    """A thread's loop iterations per column of the Cholesky kernel (the last one zeroing the
    upper triangle)."""
    costs = [1 + _per_thread(n - k - 1) + _per_thread((n - k - 1) ** 2) for k in range(n)]
    costs[-1] += _per_thread(n * n)
    return costs


def _qr_costs(m: int, n: int, mq: int, block: int | None = None) -> tuple[list[int], list[int]]:
    """A thread's loop iterations per column of the Householder QR's kernel and of Q's: norms,
    reductions, the reflector on each remaining column (one thread a column, down the rows; in
    blocks of ``block`` columns only those of its block), then its product into Q."""
    k = min(m, n)
    reflect = [2 * max(m - j - 1, 0) + 2 for j in range(k)]  # the two passes down a column's rows
    # per column: the column loop, three loops down the column, two tree reductions, the loop
    # over the remaining columns (with its exit) and the reflector's two passes in each
    steps = 2 * (WG.bit_length())  # the reductions' halving loops, with their exits
    right = [n - j - 1 if block is None else block - j % block - 1 for j in range(k)]
    qr = [1 + 3 * _per_thread(m - j) + steps + 1 + -(-right[j] // WG) * reflect[j] for j in range(k)]
    q = [1 + -(-mq // WG) * reflect[j] for j in range(k)]
    return qr, q


def _round_loops(m: int, n: int, one_sided: bool, threads: int) -> int:
    """One round of a Jacobi sweep in a workgroup of ``threads``: the pairs' rotations (one-sided:
    a dot product down m rows), then rows (two-sided) and columns of a, and columns of v."""
    pairs = (n + (n & 1)) // 2
    rows = 0 if one_sided else _per_thread(pairs * n, threads)
    per_round = -(-pairs // threads) * ((m + 1) if one_sided else 1) + 1 + rows
    return per_round + _per_thread(pairs * m, threads) + _per_thread(pairs * n, threads)


def _eig_loops(n: int) -> int:
    """The balancing (its permutations, up to 2 n^2 for a triangular matrix; thread 0 sums each
    row and column in a sweep, about three sweeps), the Hessenberg reduction, about three shifted
    QR steps an eigenvalue (the count is data dependent: this is the typical case, measured right
    on lavapipe up to n = 48), and the eigenvectors' back substitution (with a Jordan block's
    rescaling, up to n^2 / 2)."""
    return 29 * n * n


# -- LU ---------------------------------------------------------------------------------------------


#: matrices from this size are factorised in panels of :data:`LU_PANEL` columns: one workgroup per
#: matrix factorises a panel, and the updates right of it run on the whole GPU. Below it one
#: workgroup does everything, which suits batches of small matrices. Narrower panels give the
#: panel's one workgroup less to do: panels of 16, 32, 64 columns took 13.1, 16.8, 25.3 ms for a
#: 1024 x 1024 solve on an H200 (with the panel in global memory, see below).
LU_BLOCKED_MIN = 256
LU_PANEL = 16
#: 32-bit words of a panel a thread may hold in registers (``linalg_lu_panel.wgsl``); a panel of
#: more rows (more than 2048 of 16 float32 columns) is factorised in global memory
#: (``linalg_lu.wgsl``), twice as slow: a 1024 x 1024 solve's panels took 6.0 ms so on an H200,
#: 2.8 in registers. (Their pivot's halving tree in two rounds of 16 instead made no difference
#: there that the run-to-run spread of 1 ms would show.)
PANEL_REGISTERS = 128
#: right-hand sides a workgroup of the LU solve takes: an inverse's n columns spread over n / 4
#: workgroups, and each thread's loops stay short (see :func:`_check_loops`)
SOLVE_COLUMNS = 4


class _LU(NamedTuple):
    """An LU factorisation with partial pivoting of a batch of matrices, P A = L U."""

    factors: Array  # (..., n, n): L below the diagonal (unit diagonal), U on and above it
    piv: Array  # (..., n) uint32: the row exchanged with row k at step k, as LAPACK's getrf
    perm: Array  # (..., n) uint32: the row of A that ends as row i (P's rows)
    info: Storage  # a uint32 a matrix: 1 + the first step with a zero pivot, or 0


def _lu(a: Array, fn: str) -> _LU:
    """The LU factorisation of the matrices of ``a``, a contiguous copy that :func:`_matrices`
    made (the factors in place of it)."""
    a._storage.will_write()  # (its host copy, if any, is stale from here)
    n, batch = a.shape[-1], _batch(a)
    piv = empty((*a.shape[:-1],), _U32, a.device)
    perm = astype(broadcast_to(arange(n, dtype=_U32, device=a.device), piv.shape), _U32, copy=True)
    info = Storage(a.device, max(batch, 1) * 4)
    if not (batch and n):
        return _LU(a, piv, perm, info)
    dev, subs = a.device, _subs(a.dtype)
    panels = [(0, n)] if n < LU_BLOCKED_MIN else [(kb, min(LU_PANEL, n - kb)) for kb in range(0, n, LU_PANEL)]
    factors = _bind_all(a)
    bindings = [factors, _bind_all(piv), bind(dev, info, 0, batch, _U32, fn)[0], _bind_all(perm)]
    words = a.dtype.itemsize // 4
    in_registers = len(panels) > 1 and _linalg_steps.written_out(dev)
    for kb, nb in panels:
        rows = -(-(n - kb) // WG)
        if in_registers and rows * nb * words <= PANEL_REGISTERS:
            panel = subs | _linalg_steps.lu_panel(nb, rows, WG, _linalg_steps.SWAP_COLUMNS)
            run(dev, "linalg_lu_panel", panel, bindings, [n, batch, kb], batch)
        else:
            run(dev, "linalg_lu", subs | {"WG": _threads_for(n * nb)}, bindings, [n, batch, kb, nb], batch)
        _update_after_panel(a, factors, "linalg_lu_trsm", kb, nb)  # the block row right of it
    return _LU(a, piv, perm, info)


def _update_after_panel(a: Array, factors: tuple[Any, int, int], trsm: str, kb: int, nb: int) -> None:
    """The blocked LU's and Cholesky's step after a panel of ``nb`` columns from ``kb`` of the
    (batch, n, n) ``a`` (bound as ``factors``), over the whole GPU: the ``trsm`` kernel solves the
    block beside the diagonal block, then ``linalg_lu_update`` takes the product of the panel's
    blocks from the trailing matrix."""
    n, batch = a.shape[-1], _batch(a)
    rest = n - kb - nb
    if not rest:
        return
    dev, subs = a.device, _subs(a.dtype)
    unrolled = _linalg_steps.written_out(dev)
    trsm_subs = subs | _TRSM_STEPS[trsm](nb, unrolled)
    update_subs = subs | _linalg_steps.update(str(subs["T"]), unrolled)
    tiles = -(-rest // 64)
    for b0, chunk in dev.batch_chunks(batch):
        params = [n, b0, kb, nb]
        run(dev, trsm, trsm_subs, [factors], params, (-(-rest // WG), chunk))
        run(dev, "linalg_lu_update", update_subs, [factors], params, (tiles, tiles, chunk))


#: the triangular solves after a panel, and their written-out steps for a panel's width
_TRSM_STEPS = {"linalg_lu_trsm": _linalg_steps.lu_trsm, "linalg_cholesky_trsm": _linalg_steps.cholesky_trsm}


def _raise_if_singular(info: Storage, batch: int, a: Array, fn: str) -> None:
    if batch and a.shape[-1] and _flags(info, batch, a).any():
        raise LinAlgError(f"linalg.{fn}(): a matrix is singular (a zero pivot in its LU factorisation)")


def solve(x1: Array, x2: Array, /) -> Array:
    """The solution of ``x1 @ x = x2`` (LU with partial pivoting); ``x2`` of shape (..., n, k) or (n,)."""
    return _solve(x1, x2, "solve")


@_in_batch_halves
def _solve(x1: Array, x2: Array, fn: str) -> Array:
    """:func:`solve`, its errors naming ``fn``."""
    if not isinstance(x2, Array):
        raise TypeError(f"linalg.{fn}() takes ruda_wgpu arrays, not {type(x2).__name__}")
    a = _matrices(x1, fn)
    if x2.device is not a.device:
        raise ValueError(
            f"linalg.{fn}() got arrays on two devices, {a.device} and {x2.device}: move one with to_device()"
        )
    n = a.shape[-1]
    vector = x2.ndim == 1
    if x2.ndim == 0 or x2.shape[-2 + vector] != n:
        raise ValueError(f"linalg.{fn}(): x2 of shape {x2.shape} does not match matrices of size {n}")
    rhs = reshape(x2, (n, 1)) if vector else x2
    batch_shape = broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    apart = _shared_axes(a.shape[:-2], batch_shape)
    if apart:
        return _shared_matrices_solve(a, rhs, batch_shape, apart)
    dtype = _dtypes.result_type(a, rhs) if rhs.dtype.kind in "fc" else a.dtype
    a, shift = _balanced(a)
    a = broadcast_to(astype(a, dtype, copy=False), (*batch_shape, n, n))
    lu = _lu(a, fn)
    k = rhs.shape[-1]
    rows = broadcast_to(lu.perm[..., None], (*batch_shape, n, 1))
    # the right-hand sides by a power of two of their own, the solution scaled back after by
    # both: divided by the matrices', inv's identity came within the subnormals (2^-126 for
    # entries near 1e38), which NVIDIA flushes to zero, and inv gave zeros there
    rhs, rhs_shift = _balanced(astype(broadcast_to(rhs, (*batch_shape, n, k)), dtype, copy=False))
    out = take_along_axis(rhs, rows, axis=-2)
    batch = _batch(lu.factors)
    if batch and n and k:
        dev = lu.factors.device
        unrolled = _linalg_steps.written_out(dev)
        items = _linalg_steps.solve_items(unrolled)
        threads = _threads_for(-(-n * min(k, SOLVE_COLUMNS) // items))
        subs = _subs(dtype) | _linalg_steps.lu_solve(SOLVE_COLUMNS, threads, unrolled) | {"WG": threads}
        loops = 2 * -(-n // _linalg_steps.SOLVE_BLOCK) * (1 + _per_thread(n * min(k, SOLVE_COLUMNS) // items))
        _check_loops(dev, loops, fn, (*batch_shape, n, n))
        bindings = [_bind_all(out), _bind_all(lu.factors)]
        for b0, chunk in dev.batch_chunks(batch):
            params = [n, k, b0, SOLVE_COLUMNS]
            run(dev, "linalg_lu_solve", subs, bindings, params, (-(-k // SOLVE_COLUMNS), chunk))
    _raise_if_singular(lu.info, batch, lu.factors, fn)
    if shift is not None or rhs_shift is not None:  # A X = B: (A / 2^s) Y = B / 2^t, X = Y 2^(t - s)
        back = (0 if rhs_shift is None else rhs_shift) - (0 if shift is None else shift)
        out = _scaled(out, np.broadcast_to(back, batch_shape), 2)
    return reshape(out, (*batch_shape, n)) if vector else out


def _shared_axes(matrices: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    """The axes of the broadcast ``batch`` along which a stack of leading shape ``matrices``
    repeats one matrix (length 1 there, longer in ``batch``)."""
    padded = (1,) * (len(batch) - len(matrices)) + matrices
    return [d for d, (m, b) in enumerate(zip(padded, batch, strict=True)) if m == 1 and b > 1]


def _shared_matrices_solve(a: Array, rhs: Array, batch_shape: tuple[int, ...], apart: list[int]) -> Array:
    """:func:`solve` of matrices ``a`` that the broadcast shares among right-hand sides ``rhs``
    (..., n, k) along the batch axes ``apart``: each matrix factorised once, the right-hand sides
    it meets side by side, where the broadcast would factorise a copy of it for each (1000
    systems of one 64 x 64 matrix took lavapipe 1.9 s so)."""
    n, k = rhs.shape[-2:]
    padded = (1,) * (len(batch_shape) + 2 - a.ndim) + a.shape[:-2]
    kept = [d for d in range(len(batch_shape)) if d not in apart]
    matrices = reshape(a, (*(padded[d] for d in kept), n, n))
    stack = broadcast_to(rhs, (*batch_shape, n, k))
    x = solve(matrices, side_by_side(stack, apart))
    return unstacked(x, batch_shape, (*batch_shape, n, k), apart)


def inv(x: Array, /) -> Array:
    """The inverse of each square matrix (an LU solve against the identity)."""
    dtype = _float_dtype(x, "inv")  # (x checked first)
    identity = eye(x.shape[-1], dtype=dtype, device=x.device)
    return _solve(x, broadcast_to(identity, x.shape), "inv")


def _permutation_sign(piv: Array) -> Array:
    """+1 or -1 per matrix: the parity of the row exchanges of an LU factorisation."""
    n = piv.shape[-1]
    steps = apply("not_equal", piv, broadcast_to(arange(n, dtype=_U32, device=piv.device), piv.shape))
    swaps = sum_(astype(steps, _dtypes.int32), axis=-1)
    return apply("subtract", 1, apply("multiply", 2, apply("remainder", swaps, 2)))


@_in_batch_halves
def det(x: Array, /) -> Array:
    """The determinant of each square matrix: the product of U's diagonal, signed by the pivots."""
    lu, piv, _, _ = _lu(_matrices(x, "det"), "det")
    # the pivots' product in float64 where the device has it, as NumPy's: in float32 the product
    # of pivots 9.35e21 and 2.85e19 overflowed though the determinant, 1.585e28, does not
    d = astype(prod(_wide_copy(_diagonal_view(lu, 0, "det")), axis=-1), lu.dtype)
    sign = _permutation_sign(piv)
    if d.dtype.kind != "c":
        return apply("multiply", d, astype(sign, lu.dtype))
    # a complex determinant's sign by negation, not a product with -1 + 0j, which made a NaN part
    # of an infinite one (inf * 0); plus 0, for the +0 parts the product gives
    return where(apply("less", sign, 0), apply("add", apply("negative", d), 0.0), d)


@_in_batch_halves
def slogdet(x: Array, /) -> SlogdetResult:
    """(sign, log|det|) of each square matrix; a singular one gives (0, -inf). Matrices far from
    norm one are factorised scaled (:func:`_balancing`), their log|det| corrected after: in
    float32, the elimination of entries near 1e38 had overflowed (log|det| inf, or a wrong sign)."""
    a, shift = _balanced(_matrices(x, "slogdet"))
    lu, piv, _, _ = _lu(a, "slogdet")
    diag = _diagonal_view(lu, 0, "slogdet")
    sign = apply("multiply", prod(apply("sign", diag), axis=-1), astype(_permutation_sign(piv), lu.dtype))
    with np.errstate(divide="ignore"):
        logabsdet = sum_(apply("log", apply("abs", diag)), axis=-1)
    if shift is not None:  # log|det A| = log|det (A / 2^shift)| + n shift log 2
        correction = (a.shape[-1] * math.log(2)) * shift.astype(logabsdet.dtype)
        logabsdet = apply("add", logabsdet, asarray(correction, device=a.device))
    return SlogdetResult(sign, logabsdet)


# -- Cholesky, QR -------------------------------------------------------------------------------------


#: matrices from this size are factorised in blocks of :data:`CHOLESKY_BLOCK` columns (a
#: right-looking blocked Cholesky): one workgroup per matrix factorises a diagonal block in its
#: workgroup memory (``linalg_cholesky_block.wgsl``: in global memory the blocks took some 0.8
#: of a 1024 x 1024 factorisation's 3.7 ms on an H200, which now takes 2.0-2.9), and the
#: block column below it (a triangular solve, a thread a row) and the trailing matrix (the LU's
#: tiled update) are updated over the whole GPU. One workgroup factorising a whole 512 x 512
#: matrix took 357 ms on lavapipe.
CHOLESKY_BLOCKED_MIN = 256
CHOLESKY_BLOCK = 32


def _cholesky(a: Array, info: Storage) -> Array:
    """The lower Cholesky factors of the contiguous matrices of ``a`` (factorised in place),
    flagging in ``info`` those not positive definite."""
    n, batch = a.shape[-1], _batch(a)
    dev, subs = a.device, _subs(a.dtype)
    factors = _bind_all(a)
    bindings = [factors, bind(dev, info, 0, batch, _U32, "cholesky")[0]]
    if n < CHOLESKY_BLOCKED_MIN:  # one workgroup per matrix, which zeroes the upper triangle too
        one = subs | {"WG": _threads_for(n * n)}
        for k0, k1 in _spans(_cholesky_costs(n), dev, "cholesky", a.shape):
            run(dev, "linalg_cholesky", one, bindings, [n, batch, k0, k1], batch)
        return a
    block = subs | {"BLOCK": CHOLESKY_BLOCK, "BLOCK2": CHOLESKY_BLOCK**2}
    for kb in range(0, n, CHOLESKY_BLOCK):
        nb = min(CHOLESKY_BLOCK, n - kb)
        run(dev, "linalg_cholesky_block", block, bindings, [n, batch, kb, nb], batch)
        _update_after_panel(a, factors, "linalg_cholesky_trsm", kb, nb)  # the block column below it
    return tril(a)  # (over the whole GPU, rather than by each matrix's workgroup)


@_in_batch_halves
def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The Cholesky factor L (``L @ L.mT == x``) of symmetric positive definite matrices; U = L.mT
    with ``upper=True``. Only the lower triangle of ``x`` is read."""
    a = _matrices(x, "cholesky")
    n, batch = a.shape[-1], _batch(a)
    info = Storage(a.device, max(batch, 1) * 4)
    if batch and n:
        a = _cholesky(a, info)
        if _flags(info, batch, a).any():
            raise LinAlgError("linalg.cholesky(): a matrix is not positive definite")
    if upper:
        return copy_of(_h(a))
    return a


#: matrices with at least this many rows and columns are factorised in blocks of
#: :data:`QR_BLOCK` columns (LAPACK's blocked geqrf): one workgroup per matrix factorises a block
#: (in panels of :data:`QR_PANEL` columns), and its reflectors, gathered as I - V T V^H, update
#: the columns right of it and build Q in matrix products over the whole GPU. On the H200
#: (float32), with the blocks factorised in global memory, one workgroup took 3.8 ms at 128
#: (blocks of 64 5.1), 18.5 at 256 (12.5), 179 at 512 (28); blocks of 16, 32, 64 columns took
#: 168, 81, 56 ms at 1024.
QR_BLOCKED_MIN = 256
QR_BLOCK = 64
#: on GPUs a block's columns are factorised in panels of this many, each held in registers
#: (``wgsl/linalg_qr_panel.wgsl``) and applied to the rest of its block there, when a thread's
#: share of a panel and of the columns it updates fits in :data:`PANEL_REGISTERS`; other panels
#: (and every panel on CPU adapters) go through global memory (``wgsl/linalg_qr.wgsl``). On the
#: H200 a 1024 x 1024 QR's panels took 1.2 ms so against 16.5 (float32; the whole QR 29 ms
#: against 44); panels of 16 (and updates 16 columns at a time) were as fast in float32 and
#: slower in float64 and complex64 (53 and 41 ms against 37 and 32), and their larger kernels
#: took NVIDIA's compiler 6-10 s against 1.5-4.5 on first use.
QR_PANEL = 8


class _Reflectors(NamedTuple):
    """A panel's block of Householder reflectors: I - V T V^H acts on rows from ``row``."""

    row: int
    v: Array
    vh: Array  # V^H, contiguous: made once for the three products that take it
    t: Array


#: workgroups of ``linalg_qr_v`` a matrix at most (each thread then takes several elements)
QR_V_GROUPS = 1024


def _block_reflectors(a: Array, tau: Array, kb: int, nb: int) -> _Reflectors:
    """The reflectors of columns [kb, kb + nb) of the factored (batch, m, n) ``a``: V (unit lower
    trapezoid, rows from kb) and V^H (``wgsl/linalg_qr_v.wgsl``), and the triangular T
    (``wgsl/linalg_qr_t.wgsl``) of their product."""
    (*outer, m, n), dev, subs, batch = a.shape, a.device, _subs(a.dtype), _batch(a)
    v = empty((*outer, m - kb, nb), a.dtype, dev)
    vh = empty((*outer, nb, m - kb), a.dtype, dev)
    groups, bindings = min(-(-(m - kb) * nb // WG), QR_V_GROUPS), [_bind_all(a), _bind_all(v), _bind_all(vh)]
    for b0, chunk in dev.batch_chunks(batch):
        run(dev, "linalg_qr_v", subs, bindings, [m, n, b0, kb, nb], (groups, chunk))
    s = matmul(vh, v)  # (a new contiguous array, as the kernel reads it)
    t = empty(s.shape, a.dtype, dev)
    bindings = [_bind_all(t), _bind_all(s), _bind_all(tau)]
    run(dev, "linalg_qr_t", subs, bindings, [nb, batch, tau.shape[-1], kb], batch)
    return _Reflectors(kb, v, vh, t)


def _apply_reflectors(x: Array, block: _Reflectors, columns: int, adjoint: bool) -> None:
    """``x[..., row:, columns:] = (I - V T V^H) x[..., row:, columns:]`` in place (with T^H for
    the adjoint, the product H_(nb-1)^H ... H_0^H)."""
    rows = x[..., block.row :, columns:]
    t = _h(block.t) if adjoint else block.t
    x[..., block.row :, columns:] = apply(
        "subtract", rows, matmul(block.v, matmul(t, matmul(block.vh, rows)))
    )


def _blocked_qr(a: Array, tau: Array, q: Array | None) -> None:
    """Factorise ``a`` in place (R above the diagonal, the reflectors below, ``tau``) a panel at a
    time, then build ``q`` (when given) from its identity columns, the panels' reflectors last
    first."""
    m, n = a.shape[-2:]
    k, batch, dev = min(m, n), _batch(a), a.device
    subs, qr_costs = _subs(a.dtype), _qr_costs(m, n, 1, QR_BLOCK)[0]
    bindings = [_bind_all(a), _bind_all(tau)]
    blocks = []
    for kb in range(0, k, QR_BLOCK):
        nb = min(QR_BLOCK, k - kb)
        for pb in range(kb, kb + nb, QR_PANEL):
            width = min(QR_PANEL, kb + nb - pb)
            panel = _qr_panel_steps(a, pb, width)
            if panel is not None:
                run(dev, "linalg_qr_panel", subs | panel, bindings, [m, n, batch, pb, kb + nb], batch)
                continue
            for j0, j1 in _spans(qr_costs[pb : pb + width], dev, "qr", a.shape):
                run(dev, "linalg_qr", subs, bindings, [m, n, batch, pb + j0, pb + j1, kb + nb], batch)
        blocks.append(_block_reflectors(a, tau, kb, nb))
        if kb + nb < n:
            _apply_reflectors(a, blocks[-1], kb + nb, adjoint=True)
    if q is not None:
        for block in reversed(blocks):  # Q's columns left of the block are still the identity's
            _apply_reflectors(q, block, block.row, adjoint=False)


def _qr_panel_steps(a: Array, pb: int, width: int) -> dict[str, str] | None:
    """The substitutions of ``linalg_qr_panel`` for the panel of ``width`` columns from ``pb``
    of the (batch, m, n) ``a``, or None where it is not to be used: a CPU adapter, a thread's
    registers or the workgroup's memory too few. Every panel of ``a`` gets the same rows a
    thread (those of its tallest panel that fits): the kernel compiles once, not once for each
    count (NVIDIA's compiler takes about a second for each)."""
    dev, m = a.device, a.shape[-2]
    if not _linalg_steps.written_out(dev):
        return None
    chunk = _linalg_steps.QR_CHUNK
    rows = min(-(-m // WG), PANEL_REGISTERS * 4 // ((width + chunk) * a.dtype.itemsize))
    if m - pb > rows * WG:
        return None
    steps = _linalg_steps.qr_panel(width, chunk, rows, WG)
    real = _dtypes.REAL_OF.get(a.dtype, a.dtype).itemsize
    # its workgroup memory: the threads' parts, their sums in groups of 16, the totals and the
    # diagonal element; the parts and group sums of the norms
    shared = (int(steps["PARTS"]) + WG + 17) * a.dtype.itemsize + (WG + 16) * real
    return steps if shared <= int(dev.limits["max-compute-workgroup-storage-size"]) else None


#: a reduced QR of a matrix with at least this many times more rows than columns is a tree of
#: QRs (TSQR): the blocks of :func:`_tsqr_rows` rows in parallel, a batch, then the QR of their
#: stacked R factors, the same way. One workgroup factorising a 100000 x 32 float32 matrix took
#: 1.4 s on the H200.
TSQR_RATIO = 8


def _tsqr_rows(n: int) -> int:
    """The rows of a TSQR block of an n-column matrix: the stacked R factors are a quarter of
    the rows or fewer."""
    return max(256, 4 * n)


def _tsqr(a: Array, want_q: bool) -> tuple[Array | None, Array]:
    """The reduced QR (Q only when ``want_q``) of the tall matrices of ``a`` (..., m, n): A's row
    blocks B_i = Q_i R_i, the stacked R_i = Q' R, and Q = diag(Q_i) Q'. Householder QRs
    throughout, so as stable as one; the last block is padded with zero rows."""
    *outer, m, n = a.shape
    rows = _tsqr_rows(n)
    blocks = -(-m // rows)
    if blocks * rows > m:
        a = concat([a, zeros((*outer, blocks * rows - m, n), dtype=a.dtype, device=a.device)], axis=-2)
    q_blocks, r_blocks = _qr(reshape(a, (*outer, blocks, rows, n)), "reduced", want_q)
    q_stacked, r = _qr(reshape(r_blocks, (*outer, blocks * n, n)), "reduced", want_q)
    if q_blocks is None or q_stacked is None:
        return None, r
    q = reshape(matmul(q_blocks, reshape(q_stacked, (*outer, blocks, n, n))), (*outer, blocks * rows, n))
    return (copy_of(q[..., :m, :]) if blocks * rows > m else q), r  # (a copy drops the padding)


@_in_batch_halves
def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """Householder QR: ``Q @ R == x`` with Q's columns orthonormal and R upper triangular.
    ``mode='reduced'``: Q (..., m, k), R (..., k, n), k = min(m, n); ``'complete'``: Q (..., m, m)."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr(): mode must be 'reduced' or 'complete', not {mode!r}")
    q, r = _qr(_matrices(x, "qr", square=False), mode, want_q=True)
    assert q is not None
    return QRResult(q, r)


def _qr(a: Array, mode: str, want_q: bool) -> tuple[Array | None, Array]:
    """(Q, R) of the contiguous float matrices of ``a``, which it overwrites; Q is None unless
    ``want_q`` (the SVD of a tall matrix needs only R when it wants no vectors)."""
    m, n = a.shape[-2:]
    k, batch = min(m, n), _batch(a)
    if mode == "reduced" and batch and n and m >= TSQR_RATIO * n and m > _tsqr_rows(n):
        return _tsqr(a, want_q)
    mq = m if mode == "complete" else k
    tau = empty((*a.shape[:-2], k), a.dtype, a.device)
    q = None
    if want_q:
        q = copy_of(broadcast_to(eye(m, mq, dtype=a.dtype, device=a.device), (*a.shape[:-2], m, mq)))
    if batch and k >= QR_BLOCKED_MIN:
        _blocked_qr(a, tau, q)
    elif batch and k:
        subs, (qr_costs, q_costs) = _subs(a.dtype), _qr_costs(m, n, mq)
        # threads enough for a loop down the rows in one step, and to keep the kernel's way of
        # reflecting the remaining columns (all at once while fewer than a quarter of them)
        one = subs | {"WG": _threads_for(max(m, 4 * n))}
        bindings = [_bind_all(a), _bind_all(tau)]
        for j0, j1 in _spans(qr_costs, a.device, "qr", a.shape):
            run(a.device, "linalg_qr", one, bindings, [m, n, batch, j0, j1, n], batch)
        if q is not None:  # Q takes the reflectors last first: spans of the reversed columns
            bindings = [_bind_all(q), _bind_all(a), _bind_all(tau)]
            q_subs = subs | {"WG": _threads_for(mq)}
            for r0, r1 in _spans(q_costs[::-1], a.device, "qr", a.shape):
                run(a.device, "linalg_qr_q", q_subs, bindings, [m, n, mq, batch, k - r1, k - r0], batch)
    return q, triu(a[..., : (m if mode == "complete" else k), :])


# -- Jacobi: eigh, svd ----------------------------------------------------------------------------


def _jacobi_dispatches(
    dev: Any, per_round: int, rounds: int, fn: str, shape: tuple[int, ...]
) -> list[tuple[int, int, int]]:
    """(sweeps, first round, end round) of each dispatch of the Jacobi kernel: every sweep in one,
    except on llvmpipe, where a dispatch does as many whole sweeps as its loop limit allows or,
    when one sweep is too long, a span of a sweep's rounds. A matrix whose sweep rotated nothing
    is marked done, and later dispatches leave it."""
    if not loop_limited(dev):
        return [(MAX_SWEEPS, 0, rounds)]
    sweep = rounds * per_round + 2
    if sweep + LOOP_RESERVE <= LLVMPIPE_LOOPS:
        per_dispatch = (LLVMPIPE_LOOPS - LOOP_RESERVE) // sweep
        return [(min(per_dispatch, MAX_SWEEPS - s), 0, rounds) for s in range(0, MAX_SWEEPS, per_dispatch)]
    spans = _spans([per_round] * rounds, dev, fn, shape)
    return [(1, r0, r1) for _ in range(MAX_SWEEPS) for r0, r1 in spans]


#: from this many columns the Jacobi methods go by blocks (:func:`_block_rounds`); below it one
#: workgroup per matrix does every sweep in one dispatch. On an H200, float32 eigh of one 64 x 64
#: matrix took 3.8-4.7 ms by blocks against 7.8-8.5 in one workgroup, 100 x 100 6.2-7.4 against
#: 24, 500 of 64 x 64 20 against 33 and 2000 of 32 x 32 12 against 17; svd of one 64 x 64 5.6
#: against 14, 500 of them 18 against 37.
JACOBI_BLOCKS_MIN = 32


def _jacobi(a: Array, one_sided: bool, fn: str) -> tuple[Array, bool]:
    """Rotate ``a`` (batch, m, n) in place by a Jacobi method; returns the accumulated v (batch,
    n, n), and False where the block method ran every sweep allowed without converging (the
    one-workgroup kernel does not say)."""
    m, n = a.shape[-2:]
    batch = _batch(a)
    v = copy_of(broadcast_to(eye(n, dtype=a.dtype, device=a.device), (*a.shape[:-2], n, n)))
    converged = True
    if batch and n >= JACOBI_BLOCKS_MIN:
        converged = _block_rounds(a, v, one_sided, fn)
    elif batch and n > 1:
        dev = a.device
        rounds = n + (n & 1) - 1
        threads = _jacobi_threads(m, n)
        subs = {**_subs(a.dtype), "PAIRS": (n + 1) // 2, "ONE_SIDED": f"{int(one_sided)}u", "WG": threads}
        subs["ROTATION"] = _wgsl.kernel("linalg_jacobi_rotation", **subs)
        done = zeros((2 * batch,), dtype=_U32, device=dev)
        bindings = [_bind_all(a), _bind_all(v), _bind_all(done)]
        per_round = _round_loops(m, n, one_sided, threads)
        for sweeps, r0, r1 in _jacobi_dispatches(dev, per_round, rounds, fn, a.shape):
            run(dev, "linalg_jacobi", subs, bindings, [m, n, batch, sweeps, r0, r1], batch)
    return v, converged


def _jacobi_threads(m: int, n: int) -> int:
    """Threads of a workgroup of the one-workgroup Jacobi kernel (``linalg_jacobi.wgsl``) for
    (m, n) matrices: enough for its widest loop (see :func:`_threads_for`)."""
    return _threads_for((n + 1) // 2 * max(m, n))


def _block_width(dtype: np.dtype[Any]) -> int:
    """Indices of a pair of blocks (the matrix a workgroup rotates, a tile it applies): three
    tiles fit the 16 KiB of workgroup memory every WebGPU device has. On an H200 a float32
    1024 x 1024 eigh's sweeps took 51 ms of GPU time in blocks of 16 (width 32) against 58 in
    blocks of 8, whose rounds are twice as many; at 256 x 256, 4.7 against 3.8."""
    return 32 if dtype.itemsize == 4 else 16


#: an svd round's Gram matrices are summed in slices of rows, a workgroup each
#: (``linalg_jacobi_gram.wgsl``), of at least this many tiles of rows ...
GRAM_SLICE_TILES = 4
#: ... and in no more slices than make this many workgroups (where a round's pairs alone make
#: fewer): enough for a large GPU, and a bound on the memory the partial sums take
GRAM_WORKGROUPS = 1024


def _gram_slices(row_tiles: int, pairs: int) -> tuple[int, int]:
    """(slices, tiles of rows a slice) for the Gram matrices of ``pairs`` pairs of blocks (all
    the matrices') down ``row_tiles`` tiles of rows."""
    slices = max(1, min(-(-row_tiles // GRAM_SLICE_TILES), GRAM_WORKGROUPS // pairs))
    per_slice = -(-row_tiles // slices)
    return -(-row_tiles // per_slice), per_slice


def _block_rounds(a: Array, v: Array, one_sided: bool, fn: str) -> bool:
    """The sweeps of :func:`_jacobi` by blocks: the n columns are cut into blocks of half a
    :func:`_block_width`, and a round pairs the blocks in the round-robin ordering of the scalar
    method. Each round is two dispatches (svd: three):

    - (svd) a workgroup per pair of blocks and slice of rows sums the Gram matrix of the pair's
      columns down the slice (``linalg_jacobi_gram.wgsl``; see :func:`_gram_slices`);
    - a workgroup per pair of blocks rotates a small matrix in workgroup memory, the pair's
      submatrix (two-sided, eigh) or the Gram matrix of its columns, the sum of its slices
      (one-sided, svd), and keeps the product u of its rotations
      (``linalg_jacobi_block.wgsl``): in the sweep's first round every pair of indices, later
      only the pairs across the two blocks, which no earlier round of the sweep has met;
    - a workgroup per tile of a and of v applies them: a = u^H a u (one triangle's tiles,
      mirrored) or a = a u, and v = v u (``linalg_jacobi_block_apply.wgsl``).

    A sweep is 2 (2 n / width - 1) dispatches (svd: 3 (2 n / width - 1)) where the scalar method's,
    a round a dispatch or two, was n - 1 (float32 eigh) or 2 (n - 1), and the dispatches, not the
    arithmetic, bounded its time: on an H200, the two in turns on one instance, a 256 x 256 float32
    eigh took 12.5-13.7 ms against 25-30, float64 15-17 against 33-53, complex64 12 against 20-27;
    svd 24 against 62, 27 against 69 and 27 against 57. A 1024 x 1024 svd took 351 against 328 while
    a round's 32 Gram matrices were each one workgroup's sum down all the rows; summed in slices,
    136 ms against 406 (2048 x 2048: 1019 against 1948).
    The host reads a flag after each sweep, and stops when a sweep rotated nothing (True), or
    after :data:`MAX_SWEEPS` sweeps (False)."""
    m, n = a.shape[-2:]
    batch, dev, width = _batch(a), a.device, _block_width(a.dtype)
    blocks = -(-n // (width // 2))
    blocks += blocks & 1  # (a spare block past n for an odd count)
    pairs, row_tiles, a_row_tiles = blocks // 2, -(-n // width), -(-m // width)
    subs = {**_subs(a.dtype), "PAIRS": pairs, "W": width, "ONE_SIDED": f"{int(one_sided)}u"}
    subs["ROTATION"] = _wgsl.kernel("linalg_jacobi_rotation", **subs)
    u = empty((batch, pairs, width, width), a.dtype, dev)
    flag = Storage(dev, 4)
    flag_binding = bind(dev, flag, 0, 1, _U32, "jacobi")[0]
    rotated, slices = a, 0  # (what the rotating kernel reads: a, or svd's Gram sums)
    if one_sided:
        slices, slice_tiles = _gram_slices(a_row_tiles, batch * pairs)
        # a thread's loops summing a Gram matrix down a slice's rows
        _check_loops(dev, slice_tiles * (width * width // WG) * (width + 1), fn, a.shape)
        rotated = empty((batch * pairs * slices, width, width), a.dtype, dev)
        gram_pipeline = kernel_pipeline(dev, "linalg_jacobi_gram", subs)
        gram_buffers = [_bind_all(a), _bind_all(rotated)]
    rotate = kernel_pipeline(dev, "linalg_jacobi_block", subs)
    apply_u = kernel_pipeline(dev, "linalg_jacobi_block_apply", subs)
    rotate_buffers = [_bind_all(rotated), _bind_all(u), flag_binding]
    apply_buffers = [_bind_all(a), _bind_all(v), _bind_all(u)]
    a_tiles = pairs * a_row_tiles if one_sided else pairs * (pairs + 1) // 2
    tiles = batch * (a_tiles + pairs * row_tiles)
    sweep = []
    for r in range(blocks - 1):
        if one_sided:
            words = pack_words(n, batch, r, m, slice_tiles, slices)
            sweep.append(dev.step(gram_pipeline, gram_buffers, words, batch * pairs * slices))
        sweep.append(dev.step(rotate, rotate_buffers, pack_words(n, batch, r, slices), batch * pairs))
        words = pack_words(n, batch, r, row_tiles, m, a_row_tiles)
        sweep.append(dev.step(apply_u, apply_buffers, words, tiles))
    for _ in range(MAX_SWEEPS):
        dev.write(flag.buffer, 0, bytes(4))
        dev.replay(sweep)
        if not _flags(flag, 1, a).any():
            return True
    return False


def _sorted_columns(values: Array, *columns: Array, descending: bool) -> tuple[Array, ...]:
    """``values`` (..., n) sorted, and the columns of each of ``columns`` (..., r, n) in the same
    order."""
    order = argsort(values, axis=-1, descending=descending)
    out = [take_along_axis(values, order, axis=-1)]
    for matrices in columns:
        rows = matrices.shape[-2]
        picks = broadcast_to(expand_dims(order, axis=-2), (*order.shape[:-1], rows, order.shape[-1]))
        out.append(take_along_axis(matrices, picks, axis=-1))
    return tuple(out)


#: Jacobi's eigenvalues and singular values are recomputed from its vectors, in float64 where
#: the device has it: the rotations touch every entry thousands of times, and the vectors' norms
#: drift from one by about n times the dtype's rounding error (3e-5 at 256 x 256 in float32),
#: which the rotated matrix's diagonal (its column norms, for the SVD) carries into the values
#: (5e-5 of the largest; LAPACK's float32 ones are within 4e-8). The Rayleigh quotient
#: v^H A v / v^H v of a vector with error e is wrong by about e^2 (1e-9 there), and a singular
#: value is |A v| / |v|. It costs one matrix product (under a millisecond at 1024 x 1024 on an
#: H200); the vectors are scaled to unit norm too.
_WIDER = {_dtypes.float32: _dtypes.float64, _dtypes.complex64: _dtypes.complex128}


def _wide_copy(a: Array) -> Array:
    """A copy of ``a`` in float64 (complex128) where the device has it, else in ``a``'s dtype,
    computed now (before a kernel overwrites ``a``)."""
    wide = _WIDER.get(a.dtype, a.dtype)
    if _dtypes.NAME[wide] not in a.device.dtype_names:
        wide = a.dtype
    out = astype(a, wide, copy=True)
    out._storage  # noqa: B018  (runs it now)
    return out


def _refined(original: Array, v: Array, singular: bool) -> tuple[Array, Array]:
    """(values, unit vectors) from Jacobi's vectors ``v`` of the matrices ``original`` (as
    :func:`_wide_copy` made them): the Rayleigh quotients v^H A v / v^H v, or singular values
    |A v| / |v|, in ``original``'s dtype, rounded to ``v``'s real dtype."""
    wide_v = astype(v, original.dtype)
    av = matmul(original, wide_v)
    lengths = sum_(_abs2(wide_v), axis=-2)
    if singular:
        values = apply("sqrt", apply("divide", sum_(_abs2(av), axis=-2), lengths))
    else:
        products = sum_(apply("multiply", apply("conj", wide_v), av), axis=-2)
        values = apply("divide", apply("real", products) if products.dtype.kind == "c" else products, lengths)
    real = _dtypes.REAL_OF.get(v.dtype, v.dtype)
    norms = astype(apply("sqrt", lengths), real)
    return astype(values, real), apply("divide", v, expand_dims(norms, axis=-2))


def _balancing(a: Array) -> np.ndarray[Any, Any] | None:
    """The powers of two (an int per matrix; None where all are 0) by which to divide the
    matrices of ``a`` whose largest magnitude lies outside 2^(+-k) (k: an eighth of the dtype's
    largest exponent, 16 for float32), to bring it just under 2^k, as LAPACK's xLASCL scales to
    the edge of its safe range. A power of two changes only exponents, so the results are exact
    to within the method's error; the maxima are read back to the host (a synchronisation). (To
    near one, a matrix of 3e38 and 1.0 had made the 1.0 a subnormal, which NVIDIA flushes.)

    The Jacobi rotations square column norms and multiply diagonal entries, the QR iterations'
    shifts and deflation tests do too, and an LU solve multiplies U by the solution: past about
    1e19 in float32 those overflowed, below about 1e-19 they underflowed, and the rotations
    stopped or never started (a 3 x 3 matrix of norm 1e20 had come back with singular values off
    by half), or solve gave wrong finite results (of entries near 1e38, [-0.5, 0] for [-0.29,
    0.43]). Entries more than 2^142 below a matrix's largest (float32) are lost to it, as they
    are to its elimination."""
    if a.size == 0:
        return None
    largest = to_numpy(max_(apply("abs", a), axis=(-2, -1)))
    limit = np.finfo(largest.dtype).maxexp - 2  # (2^+-limit and its inverse are normal numbers)
    exponent = np.frexp(largest)[1]  # largest = f 2^exponent, f in [0.5, 1)
    band = (limit + 2) // 8
    outside = np.isfinite(largest) & (largest > 0) & (np.abs(exponent) > band)
    return np.where(outside, np.clip(exponent - band, -limit, limit), 0) if outside.any() else None


def _balanced(a: Array) -> tuple[Array, np.ndarray[Any, Any] | None]:
    """``a`` divided by :func:`_balancing`'s powers of two, and the powers (None: unscaled)."""
    shift = _balancing(a)
    return (a, None) if shift is None else (_scaled(a, -shift, 2), shift)


def _scaled(x: Array, shift: np.ndarray[Any, Any] | None, axes: int) -> Array:
    """``x`` times 2^shift, a power for each matrix of a stack (``shift`` of its leading shape),
    spread over x's last ``axes`` axes (2: matrices; 1: their values)."""
    if shift is None:
        return x
    real = _dtypes.REAL_OF.get(x.dtype, x.dtype)
    powers = np.ldexp(np.ones((), real), shift)
    return apply("multiply", x, asarray(powers.reshape(*shift.shape, *(1,) * axes), device=x.device))


def _abs2(x: Array) -> Array:
    """|x|^2, elementwise, real."""
    magnitude = apply("abs", x) if x.dtype.kind == "c" else x
    return apply("multiply", magnitude, magnitude)


@_in_batch_halves
def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric (or complex
    Hermitian) matrices, by the two-sided Jacobi method (the eigenvalues as Rayleigh quotients
    of its vectors: see :data:`_WIDER`). Only the lower triangle is read, as LAPACK's ``UPLO='L'``
    in NumPy, CuPy and PyTorch: the upper one is taken as its (conjugate) mirror, and a complex
    diagonal as its real part."""
    a, shift = _balanced(_from_lower(_matrices(x, "eigh")))
    original = _wide_copy(a)
    # (v is a product of rotations, orthogonal whether or not the sweeps converged)
    values, vectors = _refined(original, _jacobi(a, one_sided=False, fn="eigh")[0], singular=False)
    values, vectors = _sorted_columns(_scaled(values, shift, 1), vectors, descending=False)
    return EighResult(values, *_undefined_as_nan(values, vectors))


def _undefined_as_nan(values: Array, *vectors: Array) -> list[Array]:
    """``vectors`` with NaN in every matrix whose ``values`` hold a NaN (a matrix holding NaN or
    inf, whose vectors are undefined: the rotations had left identity-like columns that looked
    like an answer). NumPy refuses such a matrix."""
    undefined = expand_dims(any_(apply("isnan", values), axis=-1, keepdims=True), axis=-1)
    return [where(undefined, math.nan, v) for v in vectors]


def _from_lower(a: Array) -> Array:
    """The Hermitian matrices whose lower triangle is that of ``a``'s (a new array)."""
    mirrored = apply("add", tril(a), _h(tril(a, k=-1)))
    if a.dtype.kind != "c":
        return mirrored
    diagonal = eye(a.shape[-1], dtype=_dtypes.bool_, device=a.device)
    return where(diagonal, astype(apply("real", mirrored), a.dtype), mirrored)


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of symmetric (or complex Hermitian) matrices."""
    values: Array = eigh(x).eigenvalues
    return values


#: QR iterations allowed per eigenvalue before eig gives up (LAPACK allows 30; ours are single shifts)
MAX_EIG_ITERATIONS = 100
#: balancing sweeps at most (each changes the powers of some rows; a few sweeps settle them)
BALANCE_SWEEPS = 16


def _eig(x: Any, fn: str) -> tuple[Array, Array]:
    """(eigenvalues (..., n), eigenvectors (..., n, n)) of general matrices, as complex arrays."""
    a, shift = _balanced(_matrices(x, fn))
    real = a.dtype.kind != "c"
    if real:
        a = astype(a, _dtypes.COMPLEX_OF[a.dtype])
    n, batch, dev = a.shape[-1], _batch(a), a.device
    values = empty(a.shape[:-1], a.dtype, dev)
    vectors = empty(a.shape, a.dtype, dev)
    if batch and n:
        _check_loops(dev, _eig_loops(n), fn, a.shape)
        z = empty(a.shape, a.dtype, dev)
        work = empty((batch, 2 * n), a.dtype, dev)
        info = Storage(dev, batch * 4)
        bindings = [_bind_all(a), _bind_all(z), _bind_all(vectors), _bind_all(work), _bind_all(values)]
        bindings.append(bind(dev, info, 0, batch, _U32, fn)[0])
        subs = _subs(a.dtype)
        limit = np.finfo(_dtypes.REAL_OF[a.dtype]).maxexp // 2  # (the balancing's powers: 2^+-64, float32)
        suffix = "lf" if subs["R"] == "f64" else "f"
        subs |= {
            "WG": _threads_for(n * n),
            "BALANCE_SWEEPS": BALANCE_SWEEPS,
            "BALANCE_MAX": f"{2.0**limit!r}{suffix}",
        }
        run(dev, "linalg_eig", subs, bindings, [n, batch, MAX_EIG_ITERATIONS, int(real)], batch)
        if _flags(info, batch, a).any():
            raise LinAlgError(f"linalg.{fn}(): the QR iterations did not converge")
    return _scaled(values, shift, 1), vectors


@_in_batch_halves
def eig(x: Array, /) -> EigResult:
    """Eigenvalues and eigenvectors (columns, unit norm, largest element real) of general square
    matrices, complex even for real input, in the order the QR algorithm finds them (as LAPACK's)."""
    return EigResult(*_eig(x, "eig"))


@_in_batch_halves
def eigvals(x: Array, /) -> Array:
    """Eigenvalues of general square matrices (complex), in the order :func:`eig` gives them."""
    return _eig(x, "eigvals")[0]


def _h(x: Array) -> Array:
    """The conjugate transpose of the matrices of ``x`` (the transpose of real ones)."""
    return apply("conj", matrix_transpose(x)) if x.dtype.kind == "c" else matrix_transpose(x)


#: matrices with at least this many times more rows than columns (or columns than rows) take a
#: QR factorisation first and the SVD of its square R, as LAPACK's gesvd does: the Jacobi
#: rotations then work on columns of n rather than m elements. A 5000 x 50 float32 SVD on
#: lavapipe took 1053 ms without it.
SVD_QR_RATIO = 2


def _svd(x: Any, fn: str, full_matrices: bool, vectors: bool) -> tuple[Array, Array | None, Array | None]:
    a, shift = _balanced(_matrices(x, fn, square=False))
    m, n = a.shape[-2:]
    wide = m < n
    if wide:  # the SVD of the conjugate transpose, whose columns are fewer than its rows
        a = copy_of(_h(a))
    q = None
    if a.shape[-2] >= SVD_QR_RATIO * a.shape[-1] > 0:  # tall: A = Q R, and the SVD of R
        q, a = _qr(a, "reduced", want_q=vectors)  # (R is a new array, for Jacobi to overwrite)
    original = _wide_copy(a)
    # the columns of the rotated a are U S: U their directions; S is recomputed from V as
    # |A v_j| / |v_j| (see _WIDER)
    v, converged = _jacobi(a, one_sided=True, fn=fn)
    values, v = _refined(original, v, singular=True)
    values = _scaled(values, shift, 1)
    if not vectors:
        return _sorted_columns(values, descending=True)[0], None, None
    norms = apply("sqrt", sum_(_abs2(a), axis=-2))
    scale = expand_dims(norms, axis=-2)
    positive = apply("greater", scale, 0)
    u = where(positive, apply("divide", a, where(positive, scale, 1)), 0)
    s, v, u, positive = _sorted_columns(values, v, u, positive, descending=True)
    if not converged:
        u = _orthonormalised(u)
    if q is not None:
        u = matmul(q, u)
    rows, k = u.shape[-2:]
    # complete u to an orthonormal basis: QR of u keeps its columns (up to a phase) and fills the
    # rest. Only zero singular values and a complete U of a tall matrix need it (the check is one
    # read).
    extra = full_matrices and rows > k
    if extra or int(count_nonzero(positive)) < positive.size:
        basis = qr(u, mode="complete" if full_matrices else "reduced").Q
        u = where(positive, u, basis[..., :k])
        if extra:
            u = concat([u, basis[..., k:]], axis=-1)
    if wide:  # A^H = U S V^H, so A = V S U^H
        u, v = v, u
    u, vh = _undefined_as_nan(s, u, _h(v))
    return s, u, vh


def _orthonormalised(u: Array) -> Array:
    """The columns of ``u``, nearly orthonormal, made orthonormal in order (each keeps its
    direction but for what the earlier ones span): Q of its QR, each column turned by the phase
    of R's diagonal entry. For an SVD whose sweeps stopped at the cap: the columns of tiny
    singular values are then the least accurate (a complex128 128 x 128 matrix of condition
    1e15 had lost U's orthogonality to 2.6e-4), and they come last, so the large ones keep
    theirs; A = U S V^H changes by the tiny ones' share."""
    q, r = qr(u, mode="reduced")
    sign = apply("sign", _diagonal_view(r, 0, "svd"))  # (the phase d / |d|, and 0 where d is)
    phase = where(apply("equal", sign, 0), 1, sign)
    return apply("multiply", q, expand_dims(phase, axis=-2))


@_in_batch_halves
def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """``U @ diag(S) @ Vh == x``, singular values descending, by the one-sided Jacobi method."""
    s, u, vh = _svd(x, "svd", full_matrices, True)
    assert u is not None and vh is not None
    return SVDResult(u, s, vh)


@_in_batch_halves
def svdvals(x: Array, /) -> Array:
    """Singular values, descending."""
    return _svd(x, "svdvals", False, False)[0]


def _cutoff(s: Array, shape: tuple[int, ...], rtol: Any) -> Array:
    """The singular values below which a matrix counts as singular: rtol times the largest."""
    if rtol is None:
        rtol = max(shape[-2:]) * float(np.finfo(s.dtype).eps)
    if isinstance(rtol, Array):
        return apply("multiply", max_(s, axis=-1, keepdims=True), expand_dims(rtol, axis=-1))
    return apply("multiply", max_(s, axis=-1, keepdims=True), float(rtol))


def _above(s: Array, cutoff: Array) -> Array:
    """Which singular values count as nonzero: those above the cutoff, and NaN ones (of a matrix
    with NaN or inf in it), so that pinv's result is NaN and matrix_rank's no lower for them
    (NumPy raises, its SVD not converging; a NaN among them had made pinv's result 0)."""
    return apply("logical_not", apply("less_equal", s, cutoff))


@_in_batch_halves
def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """The Moore-Penrose pseudo-inverse, through the SVD; singular values below ``rtol`` times the
    largest (default max(m, n) * eps) count as zero."""
    a = _matrices(x, "pinv", square=False)
    if 0 in a.shape[-2:]:
        return zeros((*a.shape[:-2], a.shape[-1], a.shape[-2]), dtype=a.dtype, device=a.device)
    u, s, vh = svd(a, full_matrices=False)
    keep = _above(s, _cutoff(s, a.shape, rtol))
    inverse = where(keep, apply("divide", 1.0, where(keep, s, 1.0)), 0.0)
    return matmul(apply("multiply", _h(vh), expand_dims(inverse, axis=-2)), _h(u))


@_in_batch_halves
def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """How many singular values exceed ``rtol`` times the largest (default max(m, n) * eps)."""
    a = _matrices(x, "matrix_rank", square=False)
    if 0 in a.shape[-2:]:
        return zeros(a.shape[:-2], dtype=default_dtypes_of(a.device)["integral"], device=a.device)
    s = svdvals(a)
    return count_nonzero(_above(s, _cutoff(s, a.shape, rtol)), axis=-1)


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: float | str = "fro") -> Array:
    """Norm of the matrices in the last two axes: ``'fro'``, ``'nuc'`` (sum of the singular values),
    ``1``/``-1`` (largest/smallest column sum), ``2``/``-2`` (largest/smallest singular value),
    ``inf``/``-inf`` (largest/smallest row sum)."""
    x = _float_input(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"matrix_norm() needs an array of at least two dimensions, got {x.ndim}")
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims)
    if 0 in x.shape[-2:] and ord in (1, 2, math.inf, "nuc"):
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims)  # 0, as NumPy's: of no sums the largest
    if ord in (-1, -2, -math.inf):  # the smallest of the column sums, singular values, row sums
        among = {-1: x.shape[-1], -2: min(x.shape[-2:]), -math.inf: x.shape[-2]}[ord]
        if among == 0:
            raise ValueError(f"matrix_norm(): ord={ord} of matrices {x.shape[-2:]} is the smallest of none")
    if ord in (2, -2, "nuc"):
        s = svdvals(x)
        norm = sum_(s, axis=-1) if ord == "nuc" else (max_ if ord == 2 else min_)(s, axis=-1)
        return expand_dims(norm, axis=(-2, -1)) if keepdims else norm
    if ord not in (1, -1, math.inf, -math.inf):
        raise ValueError(f"matrix_norm(): ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, not {ord!r}")
    along = -2 if ord in (1, -1) else -1  # column sums for the 1-norms, row sums for the inf-norms
    sums = sum_(apply("abs", x), axis=along, keepdims=True)
    pick = max_ if ord in (1, math.inf) else min_
    return pick(sums, axis=(-2, -1), keepdims=keepdims)


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied by itself ``n`` times by repeated squaring; a negative ``n`` powers the inverse."""
    if not isinstance(x, Array) or x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("matrix_power() needs square matrices in the last two axes")
    n = _integer(n, "matrix_power", "n")
    if n < 0:
        return matrix_power(inv(x), -n)
    result: Array | None = None
    square = x
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    if result is None:  # the identity, for every matrix of the stack
        return copy_of(broadcast_to(eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape))
    return copy_of(result) if result is x else result
