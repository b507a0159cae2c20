"""Linear algebra without decompositions: matmul (tiled in workgroup memory), tensordot, vecdot,
vector_norm, diagonal, trace, outer, cross (matrix norms and powers are in _decompositions)."""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, contiguous, copy_of, empty
from ruda_wgpu._buffers import storage_itemsize
from ruda_wgpu._engine import GpuDevice, remember
from ruda_wgpu._fusion import enabled as fusion_enabled
from ruda_wgpu._fusion import reduction_input
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import (
    LLVMPIPE_LOOPS,
    LOOP_RESERVE,
    PLAN_CACHE,
    Operand,
    convert,
    launch_elementwise,
    loop_limited,
    product,
    view_span,
    wgsl_type,
)
from ruda_wgpu._manipulation import (
    _axes,
    _integer,
    _view_strides,
    broadcast_for,
    broadcast_to,
    concat,
    matrix_transpose,
    permute_dims,
    reshape,
    squeeze,
)
from ruda_wgpu._matmul_kernels import SMALL_PRODUCT, launch_matmul, matmul_workgroups_by_batch
from ruda_wgpu._ops import apply, astype, where
from ruda_wgpu._parts import fits, halves, outer_axis, too_large
from ruda_wgpu._reduce_kernels import Fused
from ruda_wgpu._statistical import ReductionPlan, array_plan, reduction_plan_key, scaled_pairs, scaled_squares
from ruda_wgpu._statistical import max as max_
from ruda_wgpu._statistical import min as min_
from ruda_wgpu._statistical import sum as sum_


def _pair(x1: Any, x2: Any, fn: str) -> Any:
    if not isinstance(x1, Array) or not isinstance(x2, Array):
        raise TypeError(f"{fn}() takes two ruda_wgpu arrays, not {type(x1).__name__} and {type(x2).__name__}")
    if x1.device is not x2.device:
        raise ValueError(
            f"{fn}() got arrays on two devices, {x1.device} and {x2.device}: move one with to_device() first"
        )
    dt = _dtypes.result_type(x1, x2)
    if dt.kind not in "iufc":
        raise TypeError(f"{fn}() needs numeric arrays, not {dt.name}")
    return dt


#: a pending operand of a product of at most this many elements runs first (see :func:`_small_run`)
RUN_FIRST_ELEMENTS = 1 << 20


def _small_run(x1: Array, x2: Array) -> None:
    """Run each pending operand of at most RUN_FIRST_ELEMENTS elements, so that the product
    takes the plan of stored operands. A product with a vector computes a larger one's chain as
    its sums read it (one dispatch, one pass through memory); a small one is cheaper run first:
    on an H100 host, ``(x - 1) @ w`` of 1000 x 64 float32 and a vector recorded in 71 us so
    against 21 for stored ones (call and wait 120 against 66), as walking the chain and keying
    its reduction cost the host more than a dispatch costs the GPU. At a million elements, the
    pass that running first adds (8 MB of float32 written and read, some microseconds on an
    H100) nears the host time saved. Matrix products run pending operands first anyway."""
    for x in (x1, x2):
        if x._store is None and math.prod(x._shape) <= RUN_FIRST_ELEMENTS:
            x._storage  # noqa: B018  (runs it)


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dimensions."""
    # a signature met before goes straight to its launch (see _ProductPlan); its key is taken
    # before anything runs a large pending operand
    key = None
    if type(x1) is Array and type(x2) is Array and x1._device is x2._device:
        _small_run(x1, x2)
        key = _plan_key(x1, x2)
        plan: _ProductPlan | _VectorPlan | None = x1._device.plans.get(key)
        if plan is not None:
            return plan.run(x1, x2)
    dt = _pair(x1, x2, "matmul")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul() does not take 0-D arrays: use multiply()")
    if x1.ndim == 1 == x2.ndim and x1.shape == x2.shape and dt != _dtypes.float16:
        return _summed_products(x1, x2, x1, x2, None, dt, (), key)  # a dot product (see _vector_product)
    a = x1 if x1.ndim > 1 else reshape(x1, (1, x1.shape[0]))
    b = x2 if x2.ndim > 1 else reshape(x2, (x2.shape[0], 1))
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul(): shapes {x1.shape} and {x2.shape} do not align ({k} != {k2})")
    batch, b_batch = a.shape[:-2], b.shape[:-2]
    vector_sized = x1.ndim == 1 or x2.ndim == 1 or m * n > SMALL_PRODUCT
    if (m == 1 or n == 1) and vector_sized and dt != _dtypes.float16:  # (see _vector_product)
        out_batch = broadcast_for("matmul", batch, b_batch)  # (batches that do not broadcast: matmul's error)
        return _vector_product(x1, x2, a, b, dt, _dropped((*out_batch, m, n), x1, x2), key)
    if batch and math.prod(b_batch) == 1 and m * n > SMALL_PRODUCT:
        # a stack of matrices times one matrix (x @ w) is one product of the stack's rows: the
        # broadcast would copy b for every matrix of the stack (64 of 8 x 256 times a 256 x 256
        # one made 17 MB of copies for a 0.5 MB result, and took 269 ms on lavapipe against 11).
        # Small products stay a batch of them, a thread an element: 20000 of 3 x 3 times a 3 x 3
        # took 4.5 ms so and 87 as one narrow product of 60000 rows.
        out_batch = broadcast_for("matmul", batch, b_batch)
        rows = matmul(reshape(a, (math.prod(batch) * m, k)), reshape(b, (k, n)))
        return reshape(rows, (*out_batch, m, n) if x2.ndim > 1 else (*out_batch, m))
    if b_batch and math.prod(batch) == 1 and m * n > SMALL_PRODUCT and m >= n:
        # one matrix times a stack (w @ x) is one product with the stack's columns side by side:
        # one copy of the stack into that order, where the broadcast copied the m x k matrix for
        # every matrix of the stack (and its result's view puts them back)
        product = matmul(reshape(a, (m, k)), side_by_side(b))
        return unstacked(product, b_batch, (*broadcast_for("matmul", batch, b_batch), m, n))
    if b_batch != batch:  # (the common case, one batch or none, skips the broadcasts)
        batch = broadcast_for("matmul", batch, b_batch)
        a, b = broadcast_to(a, (*batch, m, k)), broadcast_to(b, (*batch, k, n))
    if too_large(a, b) or not fits(a.device, math.prod(batch) * m * n, storage_itemsize(dt)):
        out = _matmul_parts(a, b, dt)
    else:
        out = _product(a, b, batch, m, k, n, dt, key if a is x1 and b is x2 else None)
    return out if x1.ndim > 1 and x2.ndim > 1 else reshape(out, _dropped(out.shape, x1, x2))


class _ProductPlan(NamedTuple):
    """How :func:`_product` multiplies operands of one signature (dtypes, shapes and strides):
    the batch, inner batch and slices of k, and how the kernels read each operand. A product
    that reads both operands in place keeps its plan (:func:`_plan_key`), and the next pair of
    that signature goes straight to the launch, past the type checks, the branches of
    :func:`matmul`, the layout of the views and the split of k. On the lavapipe machine's host,
    with a GPU's code paths, in three rounds of turns against the code before (best of 150
    rounds of 20 calls): recording a 64 x 32 by 32 x 64 product took 12.0-13.3 us against
    19.4-23.7, ``x.T @ x`` of 1000 x 16 9.2-9.7 against 29.6-32.1 (of 20000 x 16, split into
    slices of k, 47-49 against 80-81), 200 products of 8 x 8 7.6-8.4 against 15.0-15.4."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    products: int
    m: int
    k: int
    n: int
    inner: int
    slices: int
    a_strides: tuple[int, ...]
    b_strides: tuple[int, ...]

    def run(self, x1: Array, x2: Array) -> Array:
        """The product of ``x1`` and ``x2``, of this plan's signature."""
        dt = self.dtype
        a = Operand(x1._storage, x1._offset, self.a_strides, dt)
        return self.launch(a, Operand(x2._storage, x2._offset, self.b_strides, dt))

    def launch(self, a: Operand, b: Operand) -> Array:
        """The product of the operands ``a`` and ``b`` as the kernels read them."""
        products, m, k, n = self.products, self.m, self.k, self.n
        if self.slices > 1:
            return reshape(_split_product(a, b, products, m, k, n, self.slices), self.shape)
        out = empty(self.shape, self.dtype, a.storage.device)
        launch_matmul(out.device, a, b, out._storage, products, m, k, n, self.inner)
        return out


class _VectorPlan(NamedTuple):
    """How a product with a vector (see :func:`_vector_product`), or a dot product, runs for
    operands of one signature: one reduction of the products, computed as it reads both operands
    where they lie. It holds which operand each of the chain's leaves reads and by what strides,
    the chain's dtype, key and code, and the reduction's plan (see ``ReductionPlan``), and the
    next pair of that signature goes straight to the launch, past the type checks, the views
    and the recording of the products. On the lavapipe machine's host with a GPU's code paths
    (best of 150 rounds of 20 calls, three rounds of turns against the code before), ``x @ w``
    of a 1000 x 64 float32 matrix and a vector recorded in 13.0-14.6 us against 48.6-51.4, a dot
    product of 1000 elements in 9.5-10.4 against 25.8-26.5, ``r @ r`` in 9.6-9.8 against
    23.7-26.4."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    leaves: tuple[tuple[int, tuple[int, ...], np.dtype[Any]], ...]
    chain_dtype: np.dtype[Any]
    chain_key: Any
    code: tuple[str, str, str]
    reduction: ReductionPlan

    def run(self, x1: Array, x2: Array) -> Array:
        """The product of ``x1`` and ``x2``, of this plan's signature."""
        xs = (x1, x2)
        leaves: list[Any] = [Operand(xs[i]._storage, xs[i]._offset, st, dt) for i, st, dt in self.leaves]
        chain = Fused(leaves, self.chain_dtype, self.chain_key, self.chain_code)
        return self.reduction.result(x1._device, chain, self.dtype, "sum", self.shape)

    def chain_code(self) -> tuple[str, str, str]:
        """The chain's WGSL (see ``Fused``), made when the plan was."""
        return self.code


def _plan_key(x1: Array, x2: Array) -> tuple[Any, ...]:
    """The signature of a :class:`_ProductPlan` or :class:`_VectorPlan`, with the device's kind
    (tests switch a CPU adapter to a GPU's code paths), whether fusion is on (a vector plan
    computes the products as the reduction reads them), whether the operands are one array
    (whose products read it once: ``r @ r``) and which are pending (whose chains the sums of a
    product with a vector compute as they read them, where a plan would run them first)."""
    return (
        "matmul plan",
        x1._dtype,
        x2._dtype,
        x1._shape,
        x2._shape,
        x1._strides,
        x2._strides,
        x1._device.cpu,
        fusion_enabled(),
        x1 is x2,
        x1._store is None,
        x2._store is None,
    )


def _dropped(shape: tuple[int, ...], x1: Array, x2: Array) -> tuple[int, ...]:
    """The (..., m, n) ``shape`` of the product of ``x1`` and ``x2`` without the axis that each
    1-D one was given (NumPy's rule)."""
    if x1.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if x2.ndim == 1:
        shape = shape[:-1]
    return shape


#: the least of k that a slice of a split product covers (see :func:`_k_slices`)
SPLIT_DEPTH = 256
#: a GPU splits the k of a product of fewer workgroups than this ...
SPLIT_BELOW = 64
#: ... into slices until their batch has this many (the Gram matrix of 100000 x 64 float32 took
#: an H100 0.40 ms of GPU time with 256, 0.22 with 1024 and with 4096, 0.08 once its products
#: took 64 x 64 blocks) ...
SPLIT_TO = 1024
#: ... where k is at least this long: a split costs a dispatch or two more (the sum, what is left
#: of k), some microseconds of the GPU's and tens of the host's, which a workgroup looping over a
#: shorter k would barely save (the block products inside a QR, which are on its critical path,
#: have a k of a few hundred to a few thousand rows). An estimate, to be measured on a GPU.
GPU_SPLIT_MIN_K = 8192


def _k_slices(dev: GpuDevice, dt: np.dtype[Any], count: int, m: int, k: int, n: int) -> int:
    """Into how many slices of k to split ``count`` m x k by k x n products (see
    :func:`_split_product`).

    A product of few blocks of the result and a long k (``x.T @ x`` of a tall x, a dot product)
    runs on few workgroups, each looping over all of k while the rest of the device idles: the
    Gram matrix of 100000 x 64 float32 was one workgroup. A GPU splits a product of fewer than
    :data:`SPLIT_BELOW` workgroups and a k of :data:`GPU_SPLIT_MIN_K` or more into slices of k
    until they have :data:`SPLIT_TO`; a CPU adapter, until its cores have two each. Each slice
    covers at least :data:`SPLIT_DEPTH` of k, and on llvmpipe at most what a thread may loop over
    (:func:`_deepest`; the last slice too, which takes what the others leave).
    """
    most = k // SPLIT_DEPTH
    if most < 2:
        return 1
    if dev.cpu:
        below = to = 2 * (os.cpu_count() or 1)
    else:
        below, to = SPLIT_BELOW, SPLIT_TO
    slices, workgroups = 1, matmul_workgroups_by_batch(dev, dt, m, n)
    if workgroups(count) < below and (dev.cpu or k >= GPU_SPLIT_MIN_K):
        slices, isz = 2, storage_itemsize(dt)
        while (
            slices < most and workgroups(count * slices) < to and fits(dev, 2 * count * slices * m * n, isz)
        ):
            slices *= 2
        slices = min(slices, most)
    deepest = _deepest(dev)
    slices = max(slices, -(-k // deepest))
    while _last_slice(k, slices) > deepest:  # (the last slice is the longest)
        slices += 1
    return slices


def _last_slice(k: int, slices: int) -> int:
    """The k of the last of ``slices`` slices of ``k``: the others cover ``k // slices`` each,
    the last one what they leave (fewer than ``slices`` more)."""
    return k - (slices - 1) * (k // slices)


def _deepest(dev: GpuDevice) -> int:
    """The most of k that one product's threads loop over on ``dev``: on llvmpipe, which stops a
    thread's loops after LLVMPIPE_LOOPS iterations, half of them (a blocked kernel's thread
    loops about 1.6 times for each of k); elsewhere any."""
    return (LLVMPIPE_LOOPS - LOOP_RESERVE) // 2 if loop_limited(dev) else 1 << 62


def _product(
    a: Array,
    b: Array,
    batch: tuple[int, ...],
    m: int,
    k: int,
    n: int,
    dt: np.dtype[Any],
    keep: tuple[Any, ...] | None = None,
) -> Array:
    """``a @ b`` of (*batch, m, k) and (*batch, k, n) views (broadcast alike) that fit a binding:
    one batch of products of views of them (see :func:`_matrices`), k split into slices where the
    batch is too small to keep the device busy (:func:`_split_product`), and halves of k, added,
    where neither keeps llvmpipe's threads under its loop limit. A plan that reads ``a`` and
    ``b`` in place is kept under ``keep`` (their signature: see :class:`_ProductPlan`), if given."""
    dev, count = a.device, math.prod(batch)
    split = _batch_split(a, b, len(batch))
    inner = math.prod(batch[split:])
    slices = _k_slices(dev, dt, count, m, k, n) if inner == 1 else 1
    if k > _deepest(dev) and (slices == 1 or not fits(dev, count * slices * m * n, storage_itemsize(dt))):
        (a1, a2), (b1, b2) = halves(a, a.ndim - 1), halves(b, b.ndim - 2)
        return apply("add", matmul(a1, b1), matmul(a2, b2))
    a_op, b_op = _matrices(a, dt, split), _matrices(b, dt, split)
    plan = _ProductPlan((*batch, m, n), dt, count, m, k, n, inner, slices, a_op.strides, b_op.strides)
    if keep is not None and a_op[:2] == (a._store, a._offset) and b_op[:2] == (b._store, b._offset):
        remember(dev.plans, PLAN_CACHE, keep, plan)  # (read in place)
    return plan.launch(a_op, b_op)


def _split_product(a: Operand, b: Operand, count: int, m: int, k: int, n: int, slices: int) -> Array:
    """``a @ b`` (``count`` m x k and k x n :func:`_matrices`, no inner batch) as the sum of the
    products of ``slices`` slices of k, made as one batch of products of views (each matrix's
    slices its inner batch; the last slice also takes what the others leave of k: one product
    and one addition fewer than a product of the rest: recording the Gram matrix of 100003 x 64
    float32 took 116-184 us against 149-235 in five rounds of turns on two H100 hosts)."""
    dev, dt = a.storage.device, a.dtype
    depth = k // slices
    (a_outer, _, a_rows, a_columns), (b_outer, _, b_rows, b_columns) = a.strides, b.strides
    parts = empty((count, slices, m, n), dt, dev)
    a_slices = a._replace(strides=(a_outer, depth * a_columns, a_rows, a_columns))
    b_slices = b._replace(strides=(b_outer, depth * b_rows, b_rows, b_columns))
    last = _last_slice(k, slices)
    launch_matmul(dev, a_slices, b_slices, parts._storage, count * slices, m, depth, n, slices, last)
    return sum_(parts, axis=1, dtype=dt)


def _batch_split(a: Array, b: Array, axes: int) -> int:
    """Where to split the ``axes`` batch axes of ``a`` and ``b`` (broadcast alike) into an outer
    and an inner batch, each one stride apart in both (see :func:`_matrices`): the last place
    that does, or ``axes`` (no inner batch) where none does."""
    if a._is_contiguous() and b._is_contiguous():  # (the common case, on every product's path)
        return axes
    for split in range(axes, -1, -1):
        if all(
            _one_stride(x.shape[:split], x._strides[:split]) is not None
            and _one_stride(x.shape[split:axes], x._strides[split:axes]) is not None
            for x in (a, b)
        ):
            return split
    return axes


def _matrices(x: Array, dt: np.dtype[Any], split: int) -> Operand:
    """``x`` (..., r, c) in ``dt`` as the matmul kernels read it (see ``launch_matmul``): its
    buffer, offset and the strides of its outer batch (the leading axes before ``split``), its
    inner batch (the rest of them), its rows and its columns.

    A view is read in place where the kernels' loads of it coalesce and it fits a binding: its
    rows or its columns contiguous, each batch's axes one stride apart or broadcast, no stride
    negative. So ``x.T @ y``, ``x @ w.T``, a slice, or stacks broadcast against each other are
    not copied first (``x.T @ x`` of 100000 x 64 float32 copied 25.6 MB for a 16 kB result).
    Other views are copied contiguous."""
    if x.dtype != dt:
        x = astype(x, dt)
    *batch, r, c = x.shape
    if x._is_contiguous():  # (the common case, on every product's path: nothing to work out)
        return Operand(x._storage, x._offset, (math.prod(batch[split:]) * r * c, r * c, c, 1), dt)
    *batch_strides, sr, sc = x._strides
    sr, sc = (0 if r == 1 else sr), (0 if c == 1 else sc)  # (any stride reads a length-1 axis)
    so = _one_stride(batch[:split], batch_strides[:split])
    si = _one_stride(batch[split:], batch_strides[split:])
    layout = None if so is None or si is None else (so, si, sr, sc)
    outer, inner = math.prod(batch[:split]), math.prod(batch[split:])
    if (
        layout is None
        or min(layout) < 0
        or (sr != 1 and sc != 1 and r > 1 and c > 1)
        or not fits(x.device, view_span((outer, inner, r, c), layout), storage_itemsize(dt))
    ):
        x = contiguous(x)
        layout = (inner * r * c, r * c, c, 1)
    return Operand(x._storage, x._offset, layout, dt)


def _one_stride(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """The stride that steps through all the axes ``shape`` of a view at once (0 where they are
    broadcast), or None where they are not one stride apart: the stride of the view that
    :func:`reshape` would merge them into."""
    if not shape or (len(shape) == 1 and shape[0] > 0):  # (a matrix's product, a plain stack's)
        return strides[0] if shape and shape[0] != 1 else 1
    merged = _view_strides(tuple(shape), tuple(strides), (math.prod(shape),))
    return None if merged is None else merged[0]


def side_by_side(stack: Array, apart: Sequence[int] | None = None) -> Array:
    """The matrices of ``stack`` (..., r, c) along its batch axes ``apart`` (all of them when
    None) side by side: (the other batch axes, r, c times the count along ``apart``). A copy
    into that order (a view where the matrices already lie so), so that one matrix multiplies
    them all, or is solved for them all, at once rather than once for each (see
    :func:`unstacked`)."""
    outer = stack.ndim - 2
    apart = list(range(outer)) if apart is None else list(apart)
    kept = [d for d in range(outer) if d not in apart]
    rows, columns = stack.shape[-2:]
    ordered = permute_dims(stack, (*kept, outer, *apart, outer + 1))
    count = math.prod(stack.shape[d] for d in apart)
    return reshape(ordered, (*(stack.shape[d] for d in kept), rows, count * columns))


def unstacked(
    x: Array, stack: tuple[int, ...], shape: tuple[int, ...], apart: Sequence[int] | None = None
) -> Array:
    """The matrices of ``x`` (..., r, c times their count), made by :func:`side_by_side` from a
    stack of leading shape ``stack`` and its axes ``apart``, as a view of ``shape`` (that
    stack's matrices, with any more leading axes of length 1)."""
    outer = len(stack)
    apart = list(range(outer)) if apart is None else list(apart)
    kept = [d for d in range(outer) if d not in apart]
    matrices = reshape(x, (*(stack[d] for d in kept), x.shape[-2], *(stack[d] for d in apart), shape[-1]))
    at = {d: i for i, d in enumerate(kept)} | {d: len(kept) + 1 + j for j, d in enumerate(apart)}
    order = (*(at[d] for d in range(outer)), len(kept), len(kept) + 1 + len(apart))
    return broadcast_to(permute_dims(matrices, order), shape)


def _vector_product(
    x1: Array,
    x2: Array,
    a: Array,
    b: Array,
    dt: np.dtype[Any],
    shape: tuple[int, ...],
    key: tuple[Any, ...] | None,
) -> Array:
    """``x1 @ x2`` as (..., m, k) ``a`` and (..., k, n) ``b`` where a is one row or b one column
    (a vector given as 1-D, or a product of more than SMALL_PRODUCT results): the sums of the
    products along k, one fused kernel reading both operands as they lie (with fusion off, the
    products are made first, an array of the matrix's size), in ``shape``; ``key`` is the pair's
    plan key (see :func:`_summed_products`). A product kernel
    gives each thread a whole row or column of the vector's partner (or runs 16 x 16 tiles
    mostly idle), loads that do not coalesce: on an H100, a dot product of 1e7 float32 took
    0.67 ms so and 0.16 summed (CuPy 0.10), an 8192 x 8192 matrix times a vector 1.68 against
    0.30 (CuPy 0.14), a vector times it 1.67 against 0.29, 64 of 1024 x 1024 times one vector
    1.10 against 0.28. The sum is a tree (more accurate than one thread's running sum) in
    ``dt``, so integers wrap as NumPy's. float16 keeps the product kernels: its products would
    be rounded to float16 before being summed. Small batched products (20000 of 3 x 3 times 3 x
    1) keep the kernel that gives each a thread."""
    if b.shape[-1] == 1:
        return _summed_products(x1, x2, a, matrix_transpose(b), -1, dt, shape, key)
    return _summed_products(x1, x2, matrix_transpose(a), b, -2, dt, shape, key)


def _summed_products(
    x1: Array,
    x2: Array,
    a: Array,
    b: Array,
    axis: int | None,
    dt: np.dtype[Any],
    shape: tuple[int, ...],
    key: tuple[Any, ...] | None,
) -> Array:
    """The sums over ``axis`` (None: all) of the elementwise products of ``a`` and ``b``, views
    of ``x1`` and ``x2``, in ``dt`` and in ``shape``. Where the reduction read the products as
    a chain from both operands where they lie, the next pair of their signature takes its
    :class:`_VectorPlan`, kept under ``key`` (the caller's look-up key, taken before anything
    ran a pending operand; None: no plan)."""
    products = apply("multiply", a, b)
    dev = x1._device
    # (two operands that begin at the same element of one buffer keep no plan: see
    # _operand_leaves; nor does a signature whose products the reduction cannot read in place,
    # nor a pending operand, whose chain's leaves are not the operands: the sum of the products
    # then takes the plan of its chain's structure, and the chain is not walked twice)
    plain = x1 is x2 or x1._store is not x2._store or x1._offset != x2._offset
    stored = x1._store is not None and x2._store is not None
    with dev._lock:  # (the chain read stays the graph summed: see _statistical._kept)
        planned = key is not None and plain and stored and ("unplanned", *key) not in dev.plans
        chain = reduction_input(products, strided=True) if planned else None
        keepdims = len(shape) == products.ndim  # (a product with a vector drops the axis later)
        out = sum_(products, axis=axis, dtype=dt, keepdims=keepdims)
        if out.shape != shape:
            out = reshape(out, shape)
        leaves = None if chain is None else _operand_leaves(chain, x1, x2)
        if key is not None and chain is not None and leaves is not None:  # (x1's and x2's own chain)
            reduction = dev.plans.get(reduction_plan_key(products, chain, axis, keepdims, dt, "sum"))
            if reduction is None:  # (computed first: a strided vector on a GPU's row kernel)
                remember(dev.plans, PLAN_CACHE, ("unplanned", *key), True)
            else:
                plan = _VectorPlan(shape, dt, leaves, chain.dtype, chain.key, chain.code(), reduction)
                remember(dev.plans, PLAN_CACHE, key, plan)
    return out


def _operand_leaves(
    chain: Fused, x1: Array, x2: Array
) -> tuple[tuple[int, tuple[int, ...], np.dtype[Any]], ...] | None:
    """Which of ``x1`` and ``x2`` (0 or 1) each leaf of ``chain`` reads, by what strides and as
    what dtype; None unless the chain reads both (or the one, where ``x1`` is ``x2``), each where
    it lies, and nothing else. (Two operands must not begin at the same element of one buffer,
    where a leaf could be either.)"""
    found = []
    for leaf in chain.leaves:
        if type(leaf) is not Operand:
            return None
        if leaf.storage is x1._store and leaf.offset == x1._offset:
            found.append((0, leaf.strides, leaf.dtype))
        elif leaf.storage is x2._store and leaf.offset == x2._offset:
            found.append((1, leaf.strides, leaf.dtype))
        else:
            return None
    reads = sorted({i for i, _, _ in found})
    return tuple(found) if reads == ([0] if x1 is x2 else [0, 1]) else None


def _matmul_parts(a: Array, b: Array, dt: np.dtype[Any]) -> Array:
    """:func:`matmul` of (..., m, k) ``a`` and (..., k, n) ``b`` (equal batch shapes) where one of
    them or the (..., m, n) result is too large for one storage binding, as products of halves:
    of the batch, then of the result's longer side while it is too large, then of m (k when m is
    1) while ``a`` is, then of k (n when k is 1) while ``b`` is; halves of k are added."""
    batch, (m, k), n = a.shape[:-2], a.shape[-2:], b.shape[-1]
    row, col = a.ndim - 2, a.ndim - 1
    d = outer_axis(batch, None)
    if d is not None:
        return concat([matmul(*pair) for pair in zip(halves(a, d), halves(b, d), strict=True)], axis=d)
    if not fits(a.device, m * n, storage_itemsize(dt)):
        if m >= n:
            return concat([matmul(half, b) for half in halves(a, row)], axis=row)
        return concat([matmul(a, half) for half in halves(b, col)], axis=col)
    if too_large(a) and m > 1:
        return concat([matmul(half, b) for half in halves(a, row)], axis=row)
    if k == 1:
        return concat([matmul(a, half) for half in halves(b, col)], axis=col)
    (a1, a2), (b1, b2) = halves(a, col), halves(b, row)
    return apply("add", matmul(a1, b1), matmul(a2, b2))


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Sum of products over ``axes`` (the last ``axes`` of x1 with the first of x2, or given lists)."""
    _pair(x1, x2, "tensordot")
    if not isinstance(axes, tuple | list):
        n = operator.index(axes)
        if n < 0 or n > min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot(): axes={n} is out of range for shapes {x1.shape} and {x2.shape}")
        a1, a2 = list(range(x1.ndim - n, x1.ndim)), list(range(n))
    else:
        if len(axes) != 2:
            raise ValueError(f"tensordot(): axes must be an int or two sequences of axes, not {axes!r}")
        a1, a2 = _contracted(axes[0], x1.ndim, "x1"), _contracted(axes[1], x2.ndim, "x2")
        if len(a1) != len(a2):
            raise ValueError("tensordot(): the two axis lists need the same length")
    for p, q in zip(a1, a2, strict=True):
        # (the standard does not broadcast contracted axes, nor does NumPy)
        if x1.shape[p] != x2.shape[q]:
            raise ValueError(
                f"tensordot(): axis {p} of x1 ({x1.shape[p]}) and axis {q} of x2 ({x2.shape[q]}) differ"
            )
    free1 = [d for d in range(x1.ndim) if d not in a1]
    free2 = [d for d in range(x2.ndim) if d not in a2]
    s1 = tuple(x1.shape[d] for d in free1)
    s2 = tuple(x2.shape[d] for d in free2)
    y1 = permute_dims(x1, (*free1, *a1))
    y2 = permute_dims(x2, (*a2, *free2))
    k = math.prod(x1.shape[p] for p in a1)
    # (views where the free and the contracted axes each merge, which matmul reads in place)
    prod = matmul(reshape(y1, (math.prod(s1), k)), reshape(y2, (k, math.prod(s2))))
    return reshape(prod, s1 + s2)


def _contracted(axes: Sequence[int] | int, ndim: int, name: str) -> list[int]:
    """The contracted ``axes`` of ``name`` (of ``ndim`` dimensions) as non-negative axes, each
    in range and once; an int for one axis, as NumPy takes ``axes=(1, 0)``."""
    items = axes if isinstance(axes, Sequence) else [operator.index(axes)]
    found = []
    for a in items:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"tensordot(): axis {a} is out of range for {name} of {ndim} dimensions")
        found.append(a % ndim)
    if len(set(found)) != len(found):
        raise ValueError(f"tensordot(): the axes {list(items)} of {name} repeat an axis")
    return found


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` after broadcasting; complex ``x1`` is conjugated.
    A pair of a signature met before goes straight to its reduction (see :class:`_VectorPlan`)."""
    key = None
    if type(x1) is Array and type(x2) is Array and x1._device is x2._device and type(axis) is int:
        _small_run(x1, x2)
        key = ("vecdot", axis, *_plan_key(x1, x2))
        plan: _VectorPlan | None = x1._device.plans.get(key)
        if plan is not None:
            return plan.run(x1, x2)
    dt = _pair(x1, x2, "vecdot")
    axis = _integer(axis, "vecdot", "axis")
    shape = broadcast_for("vecdot", x1.shape, x2.shape)
    if not -len(shape) <= axis < len(shape) or x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot(): axis {axis} is out of range for shape {shape}")
    if x1.shape[axis - x1.ndim if axis >= 0 else axis] != x2.shape[axis - x2.ndim if axis >= 0 else axis]:
        raise ValueError(f"vecdot(): shapes {x1.shape} and {x2.shape} differ along axis {axis}")
    if axis >= 0:
        axis -= len(shape)
    if -axis > min(x1.ndim, x2.ndim):
        raise ValueError(f"vecdot(): axis {axis} is out of range for shapes {x1.shape} and {x2.shape}")
    if x1.dtype.kind == "c":  # (the conjugate runs alone, as complex operations do: no plan)
        product = apply("multiply", apply("conj", x1), x2)
        return sum_(product, axis=axis, dtype=product.dtype)
    out_shape = shape[:axis] + shape[len(shape) + axis + 1 :]
    return _summed_products(x1, x2, x1, x2, axis, dt, out_shape, key)


def _float_input(x: Any, fn: str) -> Array:
    """``x`` itself when floating; integer and boolean arrays as the device's default float."""
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    if x.dtype.kind in "fc":
        return x
    return astype(x, default_dtypes_of(x.device)["real floating"])


def vector_norm(
    x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, ord: float = 2
) -> Array:
    """The ``ord``-norm of ``x`` over ``axis`` (all axes when None), as the standard defines it.

    The 2-norm and other p-norms divide by the largest magnitude first (as BLAS's nrm2 does),
    so that squares of large float32 values do not overflow; norms of a negative ord by the
    smallest.
    """
    x = _float_input(x, "vector_norm")
    axes = _axes(axis, x.ndim, "vector_norm")
    if ord == 2 and axes and x._dtype in (_dtypes.float32, _dtypes.float64):
        plan = array_plan("vector_norm", x, axis, keepdims)
        if plan is None:
            scale, squares = scaled_squares(apply("abs", x), axes, keepdims)  # one pass over x
        else:
            made = plan.made(x, lambda: [scaled_squares(apply("abs", x), axes, keepdims)[0]._storage])
            scale, squares = scaled_pairs(made[0], plan.out_shape, x._dtype, x._device)
        return apply("multiply", scale, apply("sqrt", squares))
    if isinstance(ord, bool) or not isinstance(ord, int | float) or math.isnan(ord):
        raise ValueError(f"vector_norm(): ord must be a number, inf or -inf, not {ord!r}")
    mag = apply("abs", x)
    if ord != -math.inf and any(x.shape[a] == 0 for a in axes):
        # the norm of nothing, as NumPy's: 0 (a sum of none; the largest of no magnitudes), and
        # inf for a negative ord (a sum of none to a negative power)
        nothing = sum_(mag, axis=axes, keepdims=keepdims)
        return nothing if ord >= 0 else apply("add", nothing, math.inf)
    if ord == math.inf:
        return max_(mag, axis=axes, keepdims=keepdims)
    if ord == -math.inf:
        return min_(mag, axis=axes, keepdims=keepdims)
    if ord == 0:
        nonzero = astype(apply("not_equal", x, 0.0), mag.dtype)
        return sum_(nonzero, axis=axes, keepdims=keepdims)
    if ord == 1:
        return sum_(mag, axis=axes, keepdims=keepdims)
    # a positive power is largest at the largest magnitude, a negative one at the smallest: the
    # ratios to it are at most one, and their powers cannot overflow (to the largest, a huge
    # element beside a 1 had made the -2-norm 0 where NumPy's is 1)
    scale = (max_ if ord > 0 else min_)(mag, axis=axes, keepdims=True)
    safe = where(apply("logical_or", apply("equal", scale, 0.0), apply("isinf", scale)), 1.0, scale)
    ratio = apply("divide", mag, safe)
    powered = apply("multiply", ratio, ratio) if ord == 2 else apply("pow", ratio, float(ord))
    total = sum_(powered, axis=axes, keepdims=True)
    root = apply("sqrt", total) if ord == 2 else apply("pow", total, 1.0 / ord)
    norm = apply("multiply", root, safe)
    # an infinite element makes the norm infinite (for ord > 0), even beside a NaN-free rest
    norm = where(apply("isinf", scale), scale, norm) if ord > 0 else norm
    return norm if keepdims else squeeze(norm, axis=axes)


def _diagonal_view(x: Array, offset: int, fn: str) -> Array:
    if not isinstance(x, Array) or x.ndim < 2:
        raise ValueError(f"{fn}() needs a ruda_wgpu array of at least two dimensions")
    offset = operator.index(offset)
    rows, cols = x.shape[-2:]
    length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    start = x._offset
    if length:
        start += offset * x._strides[-1] if offset >= 0 else -offset * x._strides[-2]
    shape = (*x.shape[:-2], length)
    strides = (*x._strides[:-2], x._strides[-2] + x._strides[-1])
    return x._view(shape, strides, start)


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonals of the matrices in the last two axes (a copy)."""
    return copy_of(_diagonal_view(x, offset, "diagonal"))


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sums along the ``offset``-th diagonals, with the accumulation dtypes of :func:`sum`."""
    diagonals = _diagonal_view(x, offset, "trace")
    if diagonals.dtype == _dtypes.bool_:
        raise TypeError("trace() needs a numeric array, not bool: use astype() first")
    return sum_(diagonals, axis=-1, dtype=dtype)


def outer(x1: Array, x2: Array, /) -> Array:
    """The outer product of two one-dimensional arrays."""
    _pair(x1, x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer() takes one-dimensional arrays, not shapes {x1.shape} and {x2.shape}")
    return apply("multiply", reshape(x1, (-1, 1)), reshape(x2, (1, -1)))


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross products of 3-vectors along ``axis`` (a negative axis; the other axes broadcast)."""
    _pair(x1, x2, "cross")
    axis = operator.index(axis)
    if not -min(x1.ndim, x2.ndim) <= axis <= -1:
        raise ValueError(
            f"cross(): axis must be in [-{min(x1.ndim, x2.ndim)}, -1] for shapes {x1.shape} and {x2.shape}"
        )
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            f"cross(): axis {axis} must have size 3 in both arrays, not {x1.shape} and {x2.shape}"
        )
    dt = _dtypes.result_type(x1, x2)
    shape = broadcast_for("cross", x1.shape, x2.shape)
    out = empty(shape, dt, x1.device)
    a = [_component(broadcast_to(x1, shape), axis, i)._operand() for i in range(3)]
    b = [_component(broadcast_to(x2, shape), axis, i)._operand() for i in range(3)]
    loads = [f"({convert(f'x{k}', x.dtype, dt)})" for k, x in enumerate((x1, x2, x1, x2))]
    body = f"{product(loads[0], loads[1], wgsl_type(dt))} - {product(loads[2], loads[3], wgsl_type(dt))}"
    # one kernel per component, written straight into the result: a[j] b[k] - a[k] b[j]
    for i, (j, k) in enumerate(((1, 2), (2, 0), (0, 1))):
        target = _component(out, axis, i)
        ops = [a[j], b[k], a[k], b[j]]
        launch_elementwise(x1.device, ("cross", body), body, "", target._operand(), ops, target.shape)
    return out


def _component(x: Array, axis: int, i: int) -> Array:
    return x[(..., i) + (slice(None),) * (-axis - 1)]


__all__ = [
    "cross",
    "diagonal",
    "matmul",
    "matrix_transpose",
    "outer",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]
