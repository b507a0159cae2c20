"""The matrix product's kernels and their launcher (:func:`launch_matmul`): a thread an element
of the result for small products, 16 x 16 tiles in workgroup memory, and register-blocked ones
(``wgsl/matmul_blocked.wgsl``) whose block size follows how many blocks a product makes. Every
kernel reads its operands through strides (of an outer and an inner batch, the rows and the
columns), so that transposed, sliced and broadcast operands go in as they lie; ``_linalg`` picks
the shapes, splits and batches that reach it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _dtypes, _wgsl
from ruda_wgpu._buffers import Storage, storage_itemsize
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, WORKGROUP, GpuDevice
from ruda_wgpu._kernels import (
    FLOAT_SUFFIX,
    ZERO,
    Operand,
    pack_words,
    prepared,
    product,
    view_span,
    wgsl_type,
    window,
    wrap,
)

TILE = 16


class Blocking(NamedTuple):
    """A register-blocked matmul (``wgsl/matmul_blocked.wgsl``): ``bm`` x ``bm`` output blocks
    computed by 16 x 16 threads, k in steps of ``bk``. A GPU takes it for products of at least
    ``min_blocks`` output blocks (batches count); a CPU adapter, where the simple kernel's
    barriers cost the most, for products of at least one whole block."""

    bm: int
    bk: int
    min_blocks: int
    #: whether the tiles are vectors of four (see ``_blocked_unrolled``; ``r`` a multiple of 4)
    vec4: bool = False

    @property
    def r(self) -> int:
        """Output rows (and columns) a thread computes."""
        return self.bm // 16

    @property
    def row(self) -> int:
        """Tile elements (scalars, or vectors of four) of a k step, padded by one against bank
        conflicts on the transposed stores."""
        return (self.bm // 4 if self.vec4 else self.bm) + 1

    def params(self) -> dict[str, int]:
        """The template's parameters."""
        return {"BM": self.bm, "R": self.r, "BK": self.bk}

    def workgroup_bytes(self, itemsize: int) -> int:
        """The workgroup memory of its two tiles (``bk`` rows each) of ``itemsize`` elements."""
        return 2 * self.bk * self.row * (4 if self.vec4 else 1) * itemsize


#: the register-blocked matmuls per dtype, larger blocks first; products too small for any take
#: the 16 x 16 tiled kernel (or, on a CPU adapter, a thread an element). float16, stored as f32
#: words, takes float32's: its products are exact in f32, so ``fma`` sums them as the tiled
#: kernel's ``acc + a * b`` does (in another order), and the stores round to float16. So do the
#: integers stored as 32-bit words, int8 to uint32 (their sums wrap alike in any order, narrow
#: ones wrapped as they are stored; vector tiles of four against the 64 x 64 blocks of scalar
#: tiles they took before, in turns on an H100: int32 2048^3 0.93 ms against 1.30, 4096^3 8.4
#: against 12.4, 512^3 0.067 against 0.066). 64-bit integers and complex pairs take 64 x 64
#: blocks of scalar tiles (4 x 4 results a thread), k steps as short as their elements are long
#: (the tiles' workgroup memory stays at float64's). Against the kernels they took before, on an
#: H100 2048^3 took 1.48 ms against 6.34 tiled (int32, then on scalar tiles), 1.53 against 6.01
#: (int8), 4.7 against 7.9 (int64), 3.1 against 7.1 (complex64) and 5.4 against 8.6 (complex128);
#: on lavapipe 256^3 took 14 ms against 27 a thread an element (int32), 9 against 22 (int8,
#: uint16), 11 against 25 (int64), 18 against 29 (complex64) and 32 against 37 (complex128).
#: Measured on the H200, one product at a time (waiting for each): a block of 128 x 128 needs two
#: waves of blocks to beat 64 x 64 ones (float32 1024^3 0.31 ms with 64, 0.42 with 128; 2048^3
#: 1.07 against 1.39 and 4096^3 7.3 against 9.8 ms, 18.8 TFLOP/s, with 128); the 64 x 64 kernel
#: beats the tiled one from about 64 blocks (512^3 0.20 against 0.23 ms; 256^3, 16 blocks, 0.15
#: against 0.14; 64 x 1024 @ 1024 x 64, one block on one multiprocessor, 0.27 against 0.19).
#: float64's 128 x 128 blocks (k steps of 8 to fit workgroup memory) lose to 64 x 64 ones at
#: every size (4096^3 16.6 against 12.8 ms). float32's tiles are vectors of four, a k step then
#: reading a quarter of the instructions from workgroup memory: in an A/B on the H200 (several
#: products queued) 4096^3 took 6.93 ms against 7.93 (19.8 TFLOP/s), 1024^3 0.18 against 0.21;
#: float64's would lose 5-10% (4096^3 14.9 against 13.5 ms). Loading the next k step's tile
#: elements into registers before computing the current step (so that the loads are in flight
#: meanwhile) changed nothing on an H100 in turns with the GPU warm: float32 4096^3 6.33 against
#: 6.33 ms, float64 12.51-12.55 against 12.51-12.54, int32 and complex64 2048^3 within 0.3%;
#: the driver's compiler seems to schedule the loads early already, and it was left out.
_FLOAT32_BLOCKS = (Blocking(128, 16, min_blocks=256, vec4=True), Blocking(64, 16, min_blocks=64, vec4=True))
#: 64 x 64 blocks of scalar tiles by the k step that fits an element's size (8 or 16 bytes)
_SCALAR_BLOCKS = {size: (Blocking(64, 64 // size, min_blocks=64),) for size in (8, 16)}
BLOCKED: dict[str, tuple[Blocking, ...]] = {
    "float32": _FLOAT32_BLOCKS,
    "float16": _FLOAT32_BLOCKS,
    "float64": _SCALAR_BLOCKS[8],
    **{name: _FLOAT32_BLOCKS for name in ("int8", "int16", "int32", "uint8", "uint16", "uint32")},
    **{name: _SCALAR_BLOCKS[8] for name in ("int64", "uint64", "complex64")},
    "complex128": _SCALAR_BLOCKS[16],
}


def matmul_blocking(dev: GpuDevice, dtype: np.dtype[Any], batch: int, m: int, n: int) -> Blocking | None:
    """The register-blocked kernel for a (batch, m, n) product on ``dev``, or None for the tiled one
    (also where no blocked kernel's tiles fit the device's workgroup memory)."""
    return _first_blocking(_fitting_blocks(dev, dtype, m, n), dev.cpu, batch)


def _first_blocking(fitting: list[tuple[Blocking, int]], cpu: bool, batch: int) -> Blocking | None:
    """Of the ``fitting`` blocks (see :func:`_fitting_blocks`), the kernel a ``batch`` takes."""
    for blocking, blocks in fitting:
        if cpu or batch * blocks >= blocking.min_blocks:
            return blocking
    return None


def _fitting_blocks(dev: GpuDevice, dtype: np.dtype[Any], m: int, n: int) -> list[tuple[Blocking, int]]:
    """The register-blocked kernels that may take m x n products on ``dev``, larger blocks first,
    each with the blocks a product makes: those whose tiles fit the device's workgroup memory and
    whose block the product holds whole (on a GPU the smallest blocks take any product). A CPU
    adapter takes the first; a GPU the first of which the batch makes ``min_blocks``."""
    room = int(dev.limits["max-compute-workgroup-storage-size"])
    blockings = BLOCKED.get(_dtypes.NAME[dtype], ())
    fitting = []
    for blocking in blockings:
        bm = blocking.bm
        if blocking.workgroup_bytes(storage_itemsize(dtype)) > room:
            continue
        # a block wider than the product's rows or columns computes mostly nothing: on a GPU only
        # the smallest blocks take such products (390 products of 64 x 64 by 256 took 128 x 128
        # blocks, and an H100 213 us)
        if min(m, n) >= bm or (not dev.cpu and blocking is blockings[-1]):
            fitting.append((blocking, -(-m // bm) * -(-n // bm)))
    return fitting


#: from this many elements of each product's result down (a 16 x 16 tile's quarter), a matmul
#: runs a thread per element of the result rather than the tiled kernel's 16 x 16 threads per
#: product: 20000 products of 3 x 3 matrices took lavapipe 500 ms tiled (NumPy 1.9). A CPU
#: adapter runs so every product the blocked kernel does not take: llvmpipe pays for the tiled
#: kernel's barriers, and a CPU's caches do what its workgroup memory is for. On lavapipe a
#: 1000 x 1000 matrix times a vector took 60 ms tiled and 1.7 so, 64000 x 32 @ 32 x 32 302 and
#: 95, 200 products of 40 x 40 94 and 19, int32 300 x 300 x 300 105 and 36 (the blocked
#: kernel's float32 100 x 100 x 100, 1.2 ms, stays ahead of it: 1.7).
SMALL_PRODUCT = TILE * TILE // 4


def _matmul_bindings(t: str) -> str:
    """The bindings of both matmul kernels: parameters, the output, a and b (of WGSL type ``t``)."""
    return (
        "@group(0) @binding(0) var<storage, read> P: array<u32>;\n"
        f"@group(0) @binding(1) var<storage, read_write> o: array<{t}>;\n"
        f"@group(0) @binding(2) var<storage, read> a: array<{t}>;\n"
        f"@group(0) @binding(3) var<storage, read> b: array<{t}>;"
    )


class MatmulLayout(NamedTuple):
    """What the matmul kernels are compiled for about their operands' layout: which of A's and
    B's row and column strides are 1 (an index then multiplies nothing: llvmpipe's products of
    contiguous operands took 10-30% longer with every stride a parameter), and whether the batch
    has an inner part (a division a thread otherwise saves). The strides are parameters
    (see :func:`launch_matmul`): P[6] the inner batch, P[7..10] A's outer, inner, row and column
    strides, P[11..14] B's, and P[15] the k of each outer matrix's last inner product."""

    a_rows: bool
    a_columns: bool
    b_rows: bool
    b_columns: bool
    inner: bool

    @classmethod
    def of(cls, a: Operand, b: Operand, inner: int) -> MatmulLayout:
        """The layout of a product of ``a`` and ``b`` (see :func:`launch_matmul`)."""
        return cls(a.strides[2] == 1, a.strides[3] == 1, b.strides[2] == 1, b.strides[3] == 1, inner > 1)

    def bases(self, batch: str) -> str:
        """WGSL lets of ``abase`` and ``bbase``, where matrix ``batch`` of A and of B starts, of
        the row and column strides (read once, before any loop), and of ``k``, the length of the
        product's k: P[1], or P[15] for the last inner product (a split product's last slice of
        k takes what the others leave: see ``_linalg._split_product``)."""
        strides = "let asr = P[9]; let asc = P[10]; let bsr = P[13]; let bsc = P[14];"
        if not self.inner:
            return (
                f"let abase = P[4] + {batch} * P[7]; let bbase = P[5] + {batch} * P[11];\n"
                f"  {strides} let k = P[1];"
            )
        return (
            f"let outer = {batch} / P[6]; let inner = {batch} % P[6];\n"
            "  let abase = P[4] + outer * P[7] + inner * P[8];\n"
            f"  let bbase = P[5] + outer * P[11] + inner * P[12];\n  {strides}\n"
            "  let k = select(P[1], P[15], inner + 1u == P[6]);"
        )

    def a_at(self, row: str, column: str) -> str:
        """WGSL of the offset of A's element (``row``, ``column``) from its matrix's start."""
        return _offset(row, "asr", self.a_rows, column, "asc", self.a_columns)

    def b_at(self, row: str, column: str) -> str:
        """WGSL of the offset of B's element (``row``, ``column``) from its matrix's start."""
        return _offset(row, "bsr", self.b_rows, column, "bsc", self.b_columns)

    @property
    def a_down(self) -> bool:
        """Whether tiles of A load down its columns: its rows, not its columns, are contiguous."""
        return self.a_rows and not self.a_columns

    @property
    def b_down(self) -> bool:
        """Whether tiles of B load down its columns."""
        return self.b_rows and not self.b_columns


def _offset(
    row: str, row_stride: str, unit_rows: bool, column: str, column_stride: str, unit_columns: bool
) -> str:
    """WGSL of ``row * row_stride + column * column_stride``, leaving out a stride of 1 and an
    index "0u"."""
    terms = [
        index if unit else f"({index}) * {stride}" if " " in index else f"{index} * {stride}"
        for index, stride, unit in ((row, row_stride, unit_rows), (column, column_stride, unit_columns))
        if index != "0u"
    ]
    return " + ".join(terms) or "0u"


def small_matmul_source(dtype: np.dtype[Any], layout: MatmulLayout) -> str:
    """Matmul of batches (B, M, K) @ (B, K, N) with small M x N: a thread an element of the
    result, summing over k in order, as the tiled kernel does."""
    t = wgsl_type(dtype)
    a_k, b_k = layout.a_at("0u", "j"), layout.b_at("j", "0u")
    return f"""
{_matmul_bindings(t)}
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
  let m = P[0]; let n = P[2];
  let e = gid.x + gid.y * groups.x * {WORKGROUP}u;
  if (e >= P[3]) {{ return; }}
  let batch = e / (m * n); let r = e % (m * n);
  {layout.bases("batch")}
  let arow = abase + {layout.a_at("r / n", "0u")}; let bcolumn = bbase + {layout.b_at("0u", "r % n")};
  var acc: {t} = {ZERO[t]};
  for (var j = 0u; j < k; j = j + 1u) {{
    acc = acc + {product(f"a[arow + {a_k}]", f"b[bcolumn + {b_k}]", t)};
  }}
  o[e] = {wrap("acc", dtype)};
}}
"""


def matmul_source(dtype: np.dtype[Any], layout: MatmulLayout) -> str:
    """Tiled matmul of batches (B, M, K) @ (B, K, N): 16x16 tiles in workgroup memory.

    A thread loads one element of each tile, neighbouring threads neighbouring elements in
    memory: along k for A and along n for B, or down the columns of an operand whose rows are
    its contiguous axis (a transposed view: see :class:`MatmulLayout`)."""
    t = wgsl_type(dtype)
    # which of a thread's ids gives the tile element's row and which its column
    ai, aj = ("lid.x", "lid.y") if layout.a_down else ("lid.y", "lid.x")
    bi, bj = ("lid.x", "lid.y") if layout.b_down else ("lid.y", "lid.x")
    return f"""
{_matmul_bindings(t)}
// (rows padded by one against bank conflicts where threads store down a column)
var<workgroup> ta: array<array<{t}, {TILE + 1}>, {TILE}>;
var<workgroup> tb: array<array<{t}, {TILE + 1}>, {TILE}>;
@compute @workgroup_size({TILE}, {TILE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
  let m = P[0]; let n = P[2]; let b0 = P[3];
  let batch = b0 + wid.z;
  let row = wid.y * {TILE}u + lid.y; let col = wid.x * {TILE}u + lid.x;
  {layout.bases("batch")}
  let ar = wid.y * {TILE}u + {ai}; let bc = wid.x * {TILE}u + {bj};
  var acc: {t} = {ZERO[t]};
  for (var k0 = 0u; k0 < k; k0 = k0 + {TILE}u) {{
    let ak = k0 + {aj}; let bk = k0 + {bi};
    ta[{ai}][{aj}] = select({ZERO[t]}, a[abase + {layout.a_at("ar", "ak")}], ar < m && ak < k);
    tb[{bi}][{bj}] = select({ZERO[t]}, b[bbase + {layout.b_at("bk", "bc")}], bk < k && bc < n);
    workgroupBarrier();
    for (var j = 0u; j < {TILE}u; j = j + 1u) {{ acc = acc + {product("ta[lid.y][j]", "tb[j][lid.x]", t)}; }}
    workgroupBarrier();
  }}
  if (row < m && col < n) {{ o[batch * m * n + row * n + col] = {wrap("acc", dtype)}; }}
}}
"""


def _blocked_unrolled(blocking: Blocking, dtype: np.dtype[Any]) -> dict[str, str]:
    """The per-thread parts of ``matmul_blocked.wgsl`` for ``dtype``, unrolled: r x r accumulators
    ``c_i_j``, the registers of one k step (``a_i``, ``b_j``, or vectors ``a_q``, ``b_q`` of four of
    them) and their products, and the guarded stores (rounding float16); and the tiles' layout in
    workgroup memory."""
    r, row, t = blocking.r, blocking.row, wgsl_type(dtype)
    pairs = [(i, j) for i in range(r) for j in range(r)]
    init = "\n".join(f"  var c_{i}_{j}: {t} = {ZERO[t]};" for i, j in pairs)
    if blocking.vec4:
        # a vector a thread and k step per four of its rows (columns), the vectors of the 16
        # threads of a row (column) of threads side by side: vector 16 q + ty holds rows
        # ty + 16 (4 q + p), p = 0..3
        at_a = f"ta[c * {row}u + (r >> 6u) * 16u + (r & 15u)][(r >> 4u) & 3u]"
        at_b = f"tb[br * {row}u + (bc >> 6u) * 16u + (bc & 15u)][(bc >> 4u) & 3u]"
        step = [f"      let a_{q} = ta[ka + {16 * q}u];" for q in range(r // 4)]
        step += [f"      let b_{q} = tb[kb + {16 * q}u];" for q in range(r // 4)]
        lanes = [(i, j, f"a_{i // 4}.{'xyzw'[i % 4]}", f"b_{j // 4}.{'xyzw'[j % 4]}") for i, j in pairs]
        if t in FLOAT_SUFFIX:
            step += [f"      c_{i}_{j} = fma({x}, {y}, c_{i}_{j});" for i, j, x, y in lanes]
        else:  # 32-bit integers, wrapping
            step += [f"      c_{i}_{j} = c_{i}_{j} + {product(x, y, t)};" for i, j, x, y in lanes]
        tile = f"vec4<{t}>"
    else:
        at_a, at_b = f"ta[c * {row}u + r]", f"tb[br * {row}u + bc]"
        step = [f"      let a_{i} = ta[ka + {16 * i}u];" for i in range(r)]
        step += [f"      let b_{j} = tb[kb + {16 * j}u];" for j in range(r)]
        if t in FLOAT_SUFFIX:
            step += [f"      c_{i}_{j} = fma(a_{i}, b_{j}, c_{i}_{j});" for i, j in pairs]
        else:  # integers (wrapping) and complex pairs
            step += [f"      c_{i}_{j} = c_{i}_{j} + {product(f'a_{i}', f'b_{j}', t)};" for i, j in pairs]
        tile = t
    store = []
    for i in range(r):
        store.append(f"  let r_{i} = row0 + lid.y + {16 * i}u;")
        for j in range(r):
            col = f"col0 + lid.x + {16 * j}u"
            value = wrap(f"c_{i}_{j}", dtype)
            store.append(f"  if (r_{i} < m && {col} < n) {{ o[obase + r_{i} * n + {col}] = {value}; }}")
    return {
        "INIT": init,
        "STEP": "\n".join(step),
        "STORE": "\n".join(store),
        "TILE": tile,
        "ROW": str(row),
        "AT_A": at_a,
        "AT_B": at_b,
    }


def matmul_kernel(dev: GpuDevice, dtype: np.dtype[Any], batch: int, m: int, n: int) -> Blocking | str:
    """The kernel of a (batch, m, n) product on ``dev``: "small" (a thread an element of the
    result), "tiled" (16 x 16 tiles) or a register-blocked one."""
    return _kernel(_fitting_blocks(dev, dtype, m, n), dev.cpu, batch, m, n)


def _kernel(fitting: list[tuple[Blocking, int]], cpu: bool, batch: int, m: int, n: int) -> Blocking | str:
    """:func:`matmul_kernel` with the ``fitting`` blocks worked out."""
    blocking = _first_blocking(fitting, cpu, batch)
    if m * n <= SMALL_PRODUCT or (blocking is None and cpu):
        return "small"
    return "tiled" if blocking is None else blocking


def matmul_workgroups(dev: GpuDevice, dtype: np.dtype[Any], batch: int, m: int, n: int) -> int:
    """The workgroups of a (batch, m, n) product on ``dev`` (see :func:`matmul_kernel`)."""
    return matmul_workgroups_by_batch(dev, dtype, m, n)(batch)


def matmul_workgroups_by_batch(dev: GpuDevice, dtype: np.dtype[Any], m: int, n: int) -> Callable[[int], int]:
    """:func:`matmul_workgroups` of m x n products as a function of the batch, the blocks that
    fit worked out once (the split of a product's k tries batches of 2, 4, 8, ... slices:
    ``x.T @ x`` of 100000 x 64 worked them out nine times: the split's plan took 15 us on the
    lavapipe machine's host, 6 now)."""
    fitting, cpu = _fitting_blocks(dev, dtype, m, n), dev.cpu

    def workgroups(batch: int) -> int:
        kernel = _kernel(fitting, cpu, batch, m, n)
        if kernel == "small":
            return -(-batch * m * n // WORKGROUP)
        block = kernel.bm if isinstance(kernel, Blocking) else TILE
        return batch * -(-m // block) * -(-n // block)

    return workgroups


def launch_matmul(
    dev: GpuDevice,
    a: Operand,
    b: Operand,
    out: Storage,
    batch: int,
    m: int,
    k: int,
    n: int,
    inner: int = 1,
    last_k: int | None = None,
) -> None:
    """``out = a @ b`` for batched operands of one dtype, into a new contiguous ``out``.

    ``a`` and ``b`` are (batch, m, k) and (batch, k, n) views whose batch is ``batch // inner``
    outer by ``inner`` inner matrices (product ``z`` takes outer matrix ``z // inner`` and inner
    one ``z % inner``; ``out`` is in that order): their strides are those of the outer and the
    inner matrices, the rows and the columns. None is negative, and the rows or the columns are
    contiguous, or the kernels' loads do not coalesce (see ``_linalg.matmul``). The last inner
    product of each outer matrix takes ``last_k`` (at least ``k``; ``k`` when None) of k: a split
    product's last slice of k, with what the others leave (see ``_linalg._split_product``).

    A loop multiplies the same buffers into the same few pooled ones: the dispatches are prepared
    once per shape, operands and output buffer, and then only copied into the batch (preparing
    them took two thirds of the host's time of a small product)."""
    log = CAPTURE.log
    if log is not None and log.takes():
        return log.matmul(dev, a, b, out, batch, m, k, n, inner, last_k)  # type: ignore[no-any-return]
    if batch * m * n == 0:
        return
    last = k if last_k is None else last_k
    sig = ("matmul", a.dtype, batch, m, k, n, inner, last, a.strides, b.strides)
    launch = (a.storage.buffer, a.offset, b.storage.buffer, b.offset, out.buffer)
    with dev._lock:  # (the steps' bind groups are the device's until they are recorded)
        dev.replay(
            prepared(dev, sig, launch, lambda: _matmul_steps(dev, a, b, out, batch, m, k, n, inner, last))
        )


def _matmul_steps(
    dev: GpuDevice,
    a: Operand,
    b: Operand,
    out: Storage,
    batch: int,
    m: int,
    k: int,
    n: int,
    inner: int,
    last_k: int,
) -> list[Step]:
    """The dispatches of :func:`launch_matmul`: one per chunk of the batch."""
    isz = storage_itemsize(a.dtype)
    outer = batch // inner
    # (the last inner product reads furthest: its k is the longest)
    span_a = view_span((outer, inner, m, last_k), a.strides)
    span_b = view_span((outer, inner, last_k, n), b.strides)
    bind_a, base_a = window(dev, a.storage, a.offset, a.offset + span_a, isz, "matmul")
    bind_b, base_b = window(dev, b.storage, b.offset, b.offset + span_b, isz, "matmul")
    bind_o, _ = window(dev, out, 0, batch * m * n, isz, "matmul")
    strides = (inner, *a.strides, *b.strides, last_k)
    layout = MatmulLayout.of(a, b, inner)
    kernel = matmul_kernel(dev, a.dtype, batch, m, n)
    if kernel == "small":  # a thread an element of the result
        pipe = dev.pipeline(
            ("matmul small", a.dtype.name, layout), lambda: small_matmul_source(a.dtype, layout)
        )
        params = pack_words(m, k, n, batch * m * n, base_a, base_b, *strides)
        return [dev.step(pipe, [bind_o, bind_a, bind_b], params, -(-batch * m * n // WORKGROUP))]
    if not isinstance(kernel, Blocking):  # tiled
        pipe = dev.pipeline(("matmul", a.dtype.name, layout), lambda: matmul_source(a.dtype, layout))
        block = TILE
    else:
        blocking, t = kernel, wgsl_type(a.dtype)
        pipe = dev.pipeline(
            ("wgsl", "matmul_blocked", a.dtype.name, *blocking.params().items(), blocking.vec4, layout),
            # the unrolled source is generated only when the pipeline is first compiled
            lambda: _wgsl.kernel(
                "matmul_blocked",
                T=t,
                ZERO=ZERO[t],
                **blocking.params(),
                **_blocked_unrolled(blocking, a.dtype),
                **_blocked_loads(blocking, layout),
            ),
        )
        block = blocking.bm
    gx, gy = -(-n // block), -(-m // block)
    return [
        dev.step(
            pipe, [bind_o, bind_a, bind_b], pack_words(m, k, n, b0, base_a, base_b, *strides), (gx, gy, nb)
        )
        for b0, nb in dev.batch_chunks(batch)
    ]


def _blocked_loads(blocking: Blocking, layout: MatmulLayout) -> dict[str, str]:
    """The parts of ``matmul_blocked.wgsl`` that depend on the operands' layout: where their
    matrices start, which element of A's tile (row ``r``, k ``c``) and of B's (k ``br``, column
    ``bc``) load ``e`` loads (consecutive ones along k and along n, or down the columns of an
    operand whose rows are contiguous), and the offsets of those elements."""
    bm, bk = blocking.bm, blocking.bk
    return {
        "BASES": layout.bases("batch"),
        "A_ELEMENT": f"let r = e % {bm}u; let c = e / {bm}u;"
        if layout.a_down
        else f"let r = e / {bk}u; let c = e % {bk}u;",
        "B_ELEMENT": f"let br = e % {bk}u; let bc = e / {bk}u;"
        if layout.b_down
        else f"let br = e / {bm}u; let bc = e % {bm}u;",
        "A_OFFSET": layout.a_at("gr", "gc"),
        "B_OFFSET": layout.b_at("gk", "gn"),
    }
