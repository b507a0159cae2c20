"""The per-thread steps of the blocked LU's, Cholesky's and QR's kernels: written out for GPUs,
loops for CPU adapters.

NVIDIA's compiler keeps a thread's array indexed by a loop counter in local memory, a round trip
through the cache for every use, and a loop that reads the global memory it writes waits for each
load in turn (the compiler cannot tell the addresses apart). Written out, a variable per element,
a thread's elements stay in registers and its loads, issued together, wait once: on an H200 a
1024 x 1024 float32 solve took 7.1 ms against 12.3, a Cholesky 3.7 against 6.1. On lavapipe the
same code is slower and compiles for seconds to half a minute (LLVM on thousands of straight-line
statements), so CPU adapters (:func:`written_out` false) get the loops, and the LU's panels go
through global memory there (``linalg_lu.wgsl``), as do the QR's (``linalg_qr.wgsl``). The
generators return the substitutions that ``wgsl/linalg_lu_update.wgsl``, ``linalg_lu_trsm.wgsl``,
``linalg_cholesky_trsm.wgsl``, ``linalg_lu_solve.wgsl``, ``linalg_lu_panel.wgsl`` and
``linalg_qr_panel.wgsl`` name; both forms do the same operations in the same order, but for the
QR panel's sums over the workgroup, which add the threads' parts in another order than
``linalg_qr.wgsl``'s.
"""

from __future__ import annotations

import functools
from typing import Any


def written_out(dev: Any) -> bool:
    """Whether ``dev`` gets the written-out steps: a GPU, not a CPU adapter."""
    return not dev.cpu


#: the update's tile: each thread sums 4 x 4 elements, rows and columns 16 apart
_UPDATE_CELLS = [(i, j) for i in range(4) for j in range(4)]


@functools.cache
def update(t: str, unrolled: bool) -> dict[str, str]:
    """``linalg_lu_update``: a thread's 16 sums of element type ``t``, their steps over the 16
    columns of L21 (and rows of U12) in workgroup memory, and their subtraction from A22."""
    if not unrolled:
        return {
            "DECLARE": f"var acc: array<{t}, 16>;",
            "STEP": "for (var ii = 0u; ii < 4u; ii = ii + 1u) { let x = sl[(lid.y + 16u * ii) * 16u + l]; "
            "for (var jj = 0u; jj < 4u; jj = jj + 1u) { "
            "acc[ii * 4u + jj] = acc[ii * 4u + jj] + mul(x, su[l * 64u + lid.x + 16u * jj]); } }",
            "STORE": "for (var ii = 0u; ii < 4u; ii = ii + 1u) { for (var jj = 0u; jj < 4u; jj = jj + 1u) { "
            "let r = r0 + lid.y + 16u * ii; let c = c0 + lid.x + 16u * jj; "
            "if (r < n && c < n) { a[base + r * n + c] = a[base + r * n + c] - acc[ii * 4u + jj]; } } }",
        }
    loads = [f"let x{i} = sl[(lid.y + {16 * i}u) * 16u + l];" for i in range(4)]
    loads += [f"let y{j} = su[l * 64u + lid.x + {16 * j}u];" for j in range(4)]
    return {
        "DECLARE": " ".join(f"var acc{i}{j}: {t};" for i, j in _UPDATE_CELLS),  # zero-initialised
        "STEP": " ".join(loads + [f"acc{i}{j} = acc{i}{j} + mul(x{i}, y{j});" for i, j in _UPDATE_CELLS]),
        "STORE": "\n  ".join(
            f"if (r0 + lid.y + {16 * i}u < n && c0 + lid.x + {16 * j}u < n) {{ let e = base + (r0 + lid.y + "
            f"{16 * i}u) * n + c0 + lid.x + {16 * j}u; a[e] = a[e] - acc{i}{j}; }}"
            for i, j in _UPDATE_CELLS
        ),
    }


#: the triangular solves' loop forms, a thread's column (LU) or row (Cholesky) in global memory
_LU_TRSM_LOOPS = (
    "for (var i = 1u; i < NB; i = i + 1u) { var s = a[c + i * n]; "
    "for (var l = 0u; l < i; l = l + 1u) { s = s - mul(a[d + i * n + l], a[c + l * n]); } a[c + i * n] = s; }"
)
_CHOLESKY_TRSM_LOOPS = (
    "for (var j = 0u; j < NB; j = j + 1u) { var s = a[row + j]; "
    "for (var l = 0u; l < j; l = l + 1u) { s = s - mul(a[row + l], conj(a[d + j * n + l])); } "
    "let x = div(s, from_re(re(a[d + j * n + j]))); a[row + j] = x; a[col + j * n] = conj(x); }"
)


@functools.cache
def lu_trsm(nb: int, unrolled: bool) -> dict[str, str]:
    """``linalg_lu_trsm``: a column's ``nb`` elements ``x0``... of the block row, forward
    substitution with the unit lower triangle at ``d`` (element (i, l) at ``d + i n + l``)."""
    lines = [f"var x{i} = a[c + {i}u * n];" for i in range(nb)]
    for i in range(1, nb):
        lines += [f"x{i} = x{i} - mul(a[d + {i}u * n + {m}u], x{m});" for m in range(i)]
    lines += [f"a[c + {i}u * n] = x{i};" for i in range(1, nb)]
    return {"NB": str(nb), "SOLVE": "\n  ".join(lines) if unrolled else _LU_TRSM_LOOPS}


@functools.cache
def cholesky_trsm(nb: int, unrolled: bool) -> dict[str, str]:
    """``linalg_cholesky_trsm``: a row's ``nb`` elements ``x0``... of the block column, forward
    substitution with the lower triangle at ``d`` (element (j, l) at ``d + j n + l``)."""
    lines = [f"var x{j} = a[row + {j}u];" for j in range(nb)]
    for j in range(nb):
        lines += [f"x{j} = x{j} - mul(x{m}, conj(a[d + {j}u * n + {m}u]));" for m in range(j)]
        lines.append(f"x{j} = div(x{j}, from_re(re(a[d + {j}u * n + {j}u])));")
    lines += [f"a[row + {j}u] = x{j}; a[col + {j}u * n] = conj(x{j});" for j in range(nb)]
    return {"NB": str(nb), "SOLVE": "\n  ".join(lines) if unrolled else _CHOLESKY_TRSM_LOOPS}


#: columns outside the panel a thread exchanges at once (their loads issued together)
SWAP_COLUMNS = 4


@functools.cache
def lu_panel(nb: int, rows: int, wg: int, swap_columns: int) -> dict[str, str]:
    """``linalg_lu_panel``: a panel of ``nb`` columns held in registers, ``v{r}_{j}`` the element
    of column j in the thread's row ``lid + wg r`` (r < ``rows``) below the panel's first and
    ``g{r}`` its entry of perm, and the ``nb`` steps of elimination with partial pivoting; a
    thread's ``swap_columns`` columns (:data:`SWAP_COLUMNS`) outside the panel at a time."""
    cols, swap = range(nb), range(swap_columns)
    load, store = [], []
    for r in range(rows):
        row = f"lid + {wg * r}u"
        load.append(" ".join([f"var g{r} = 0u;", *(f"var v{r}_{j}: Elem;" for j in cols)]))
        load.append(" ".join([f"if ({row} < m) {{ let e = base + ({row}) * n + kb; g{r} = perm[pb + {row}];",
                              *(f"v{r}_{j} = a[e + {j}u];" for j in cols), "}"]))  # fmt: skip
        store.append(" ".join([f"if ({row} < m) {{ let e = base + ({row}) * n + kb; perm[pb + {row}] = g{r};",
                               *(f"a[e + {j}u] = v{r}_{j};" for j in cols), "}"]))  # fmt: skip
    # the first columns' exchange, pending from one step (rows sk and sp) to the next
    load += [f"let c{q} = lid + {wg * q}u; let o{q} = outside(c{q}, n, kb); var x{q}: Elem; var y{q}: Elem;"
             for q in swap]  # fmt: skip
    load.append("var sk = 0u; var sp = 0u;")
    rest = [f"let c{q} = c + {wg * q}u; let o{q} = outside(c{q}, n, kb);" for q in swap]
    rest += [f"var x{q}: Elem; var y{q}: Elem; if (o{q}) {{ x{q} = a[rk + c{q}]; y{q} = a[rp + c{q}]; }}"
             for q in swap]  # fmt: skip
    rest += [f"if (o{q}) {{ a[rk + c{q}] = y{q}; a[rp + c{q}] = x{q}; }}" for q in swap]
    return {
        "NB": str(nb),
        "SWAP_STRIDE": str(wg * swap_columns),
        "SWAP": "\n    ".join(rest),
        "LOAD": "\n  ".join(load),
        "STEPS": "\n".join(_lu_step(k, nb, rows, wg, swap) for k in cols),
        "STORE": "\n  ".join([_flush_exchange(swap), *store]),
    }


def _flush_exchange(swap: range) -> str:
    """The stores of the pending exchange of rows sk and sp in a thread's first columns."""
    return (
        "if (sp != sk) { "
        + " ".join(
            f"if (o{q}) {{ a[base + sk * n + c{q}] = y{q}; a[base + sp * n + c{q}] = x{q}; }}" for q in swap
        )
        + " }"
    )


def _lu_step(k: int, nb: int, rows: int, wg: int, swap: range) -> str:
    """Step ``k`` of the panel: the pivot, the exchange of rows k and p (in registers, through
    workgroup memory, and in global memory for the columns outside the panel), the multipliers
    below the pivot and the update of the columns right of it."""
    regs, cols = range(rows), range(nb)
    search = " ".join(
        f"if (lid + {wg * r}u >= {k}u && lid + {wg * r}u < m) {{ let x = mag(v{r}_{k}); "
        f"if (x > bv) {{ bv = x; bi = lid + {wg * r}u; }} }}"
        for r in regs
    )
    load_exchange = " ".join(
        f"if (o{q}) {{ x{q} = a[base + {k}u * n + c{q}]; y{q} = a[base + p * n + c{q}]; }}" for q in swap
    )
    publish = " ".join(
        f"if (lid + {wg * r}u == p) {{ pivot_perm = g{r}; "
        + " ".join(f"pivot_row[{j}] = v{r}_{j};" for j in cols)
        + " }"
        for r in regs
    )
    own_k = " ".join(["perm_k = g0;", *(f"row_k[{j}] = v0_{j};" for j in cols)])
    take_pivot = " ".join(["g0 = pivot_perm;", *(f"v0_{j} = pivot_row[{j}];" for j in cols)])
    take_k = " ".join(
        f"if (lid + {wg * r}u == p) {{ g{r} = perm_k; "
        + " ".join(f"v{r}_{j} = row_k[{j}];" for j in cols)
        + " }"
        for r in regs
    )
    right = range(k + 1, nb)
    pivot_values = " ".join(f"let u{j} = pivot_row[{j}];" for j in right)
    eliminate = " ".join(
        f"if (lid + {wg * r}u > {k}u && lid + {wg * r}u < m) {{ "
        + f"if (!zero) {{ v{r}_{k} = div(v{r}_{k}, d); }} "
        + " ".join(f"v{r}_{j} = v{r}_{j} - mul(v{r}_{k}, u{j});" for j in right)
        + " }"
        for r in regs
    )
    return f"""  {{ // column {k}
    var bv = no_pivot; var bi = {k}u;
    {search}
    let p = pivot(lid, bv, bi);
    {_flush_exchange(swap) if k else ""}
    sk = {k}u; sp = p;
    if (p != {k}u) {{
      {load_exchange}
      swap_rest(base, n, kb, lid, {k}u, p);
    }}
    {publish}
    if (lid == {k}u) {{ {own_k} }}
    workgroupBarrier();
    if (p != {k}u) {{
      if (lid == {k}u) {{ {take_pivot} }}
      {take_k}
    }}
    if (lid == 0u) {{ piv[pb + {k}u] = kb + p; }}
    let d = pivot_row[{k}];
    let zero = is_zero(d);
    if (zero && first_zero == 0u) {{ first_zero = kb + {k}u + 1u; }}
    {pivot_values}
    {eliminate}
  }}"""


#: rows of a block of the LU solve
SOLVE_BLOCK = 16
#: (row, column) pairs of x a thread of the LU solve updates at once, written out
SOLVE_ITEMS = 4


def solve_items(unrolled: bool) -> int:
    """(row, column) pairs of x a thread of the LU solve updates at once: one as a loop."""
    return SOLVE_ITEMS if unrolled else 1


@functools.cache
def lu_solve(columns: int, wg: int, unrolled: bool) -> dict[str, str]:
    """``linalg_lu_solve``: a block's rows ``y{i}`` of a column, solved with the diagonal block
    of L (forward) or U (backward) in registers, and the update of ``SOLVE_ITEMS`` other rows'
    elements (one, as a loop) by the block's solution in workgroup memory."""
    fixed = {"BS": str(SOLVE_BLOCK), "XS": str(columns * SOLVE_BLOCK)}
    if not unrolled:
        return fixed | {
            "ITEMS": str(solve_items(unrolled)),
            "FORWARD_BLOCK": "for (var i = 0u; i < bs; i = i + 1u) { var y = x[xe + i * kc]; "
            "for (var l = 0u; l < i; l = l + 1u) { y = y - mul(lu[d + i * n + l], xs[q + l]); } "
            "x[xe + i * kc] = y; xs[q + i] = y; }",
            "BACKWARD_BLOCK": "for (var ii = bs; ii > 0u; ii = ii - 1u) { let i = ii - 1u; "
            "var y = x[xe + i * kc]; "
            "for (var l = i + 1u; l < bs; l = l + 1u) { y = y - mul(lu[d + i * n + l], xs[q + l]); } "
            "y = div(y, lu[d + i * n + i]); x[xe + i * kc] = y; xs[q + i] = y; }",
            "FORWARD_ROWS": _loop_rows("first + t0 / w"),
            "BACKWARD_ROWS": _loop_rows("t0 / w"),
        }
    rows = range(SOLVE_BLOCK)
    load = [f"var y{i}: Elem; if ({i}u < bs) {{ y{i} = x[xe + {i}u * kc]; }}" for i in rows]
    keep = [f"if ({i}u < bs) {{ x[xe + {i}u * kc] = y{i}; }} xs[q + {i}u] = y{i};" for i in rows]
    forward = [
        f"if ({i}u < bs) {{ "
        + " ".join(f"y{i} = y{i} - mul(lu[d + {i}u * n + {m}u], y{m});" for m in range(i))
        + " }"
        for i in rows
        if i
    ]
    # a short block's rows reach past its last column: those terms (of zero y) must not read there
    backward = [
        f"if ({i}u < bs) {{ "
        + " ".join(
            f"y{i} = y{i} - mul(select(Elem(), lu[d + {i}u * n + {m}u], {m}u < bs), y{m});"
            for m in range(i + 1, SOLVE_BLOCK)
        )
        + f" y{i} = div(y{i}, lu[d + {i}u * n + {i}u]); }}"
        for i in reversed(rows)
    ]
    return fixed | {
        "ITEMS": str(solve_items(unrolled)),
        "FORWARD_BLOCK": "\n      ".join(load + forward + keep),
        "BACKWARD_BLOCK": "\n      ".join(load + backward + keep),
        "FORWARD_ROWS": _solve_rows("first + t / w", wg),
        "BACKWARD_ROWS": _solve_rows("t / w", wg),
    }


def _loop_rows(row: str) -> str:
    """The element (row ``row``, column ``t0 % w``) of x less the product of its row of the
    factor at the block's columns and the block's solution, as a loop."""
    return (
        f"let r = {row}; let e = x0 + r * kc + t0 % w; let q = (t0 % w) * BS; var s = x[e]; "
        "for (var j = 0u; j < BS; j = j + 1u) { s = s - mul(lu[a0 + r * n + i0 + j], xs[q + j]); } x[e] = s;"
    )


def _solve_rows(row: str, wg: int) -> str:
    """Written out: ``SOLVE_ITEMS`` elements (row ``row`` of pair ``t``, column ``t % w``) of x less the
    product of their row of the factor at the block's columns and the block's solution."""
    items = range(SOLVE_ITEMS)
    lines = []
    for u in items:
        terms = " ".join(f"- mul(lu[l + {j}u], xs[q + {j}u])" for j in range(SOLVE_BLOCK))
        lines.append(
            f"let t{u} = t0 + {wg * u}u; var s{u}: Elem; if (t{u} < count) {{ let t = t{u}; let r = {row}; "
            f"let q = (t % w) * BS; let l = a0 + r * n + i0; s{u} = x[x0 + r * kc + t % w] {terms}; }}"
        )
    lines += [f"if (t{u} < count) {{ let t = t{u}; x[x0 + ({row}) * kc + t % w] = s{u}; }}" for u in items]
    return "\n      ".join(lines)


#: columns right of a QR panel, in its block, that ``linalg_qr_panel`` updates at once (as many
#: as a panel has: see ``_decompositions.QR_PANEL``)
QR_CHUNK = 8


@functools.cache
def qr_panel(nb: int, chunk: int, rows: int, wg: int) -> dict[str, str]:
    """``linalg_qr_panel``: a panel of ``nb`` columns held in registers, ``v{r}_{j}`` the element
    of column j in the thread's row ``lid + wg r`` (r < ``rows``) from the panel's first; its
    ``nb`` Householder steps; and, for each ``chunk`` columns of the rest of the block,
    ``x{r}_{q}``, the panel's reflectors applied in turn. At most 16 values are summed over the
    workgroup at once (``sum_parts``)."""
    if max(nb - 1, chunk) > 16:
        raise ValueError(f"a QR panel sums at most 16 values at once: {nb} columns, chunks of {chunk}")
    cols, span = range(nb), range(chunk)
    load = [" ".join(f"var ct{j}: Elem;" for j in cols)]  # the steps' conj(tau)
    store, chunk_load, chunk_store = [], [" ".join(f"let live{q} = c0 + {q}u < lim;" for q in span)], []
    for r in range(rows):
        load.append(" ".join(f"var v{r}_{j}: Elem;" for j in cols))
        load.append(_row(r, wg, "", [f"v{r}_{j} = a[e + {j}u];" for j in cols]))
        store.append(_row(r, wg, "", [f"a[e + {j}u] = v{r}_{j};" for j in cols]))
        chunk_load.append(" ".join(f"var x{r}_{q}: Elem;" for q in span))
        chunk_load.append(_row(r, wg, " + cb", [f"if (live{q}) {{ x{r}_{q} = a[e + {q}u]; }}" for q in span]))
        chunk_store.append(
            _row(r, wg, " + cb", [f"if (live{q}) {{ a[e + {q}u] = x{r}_{q}; }}" for q in span])
        )
    apply = [_qr_reflect(j, "x", [(f"x{{r}}_{q}", q) for q in span], rows, wg) for j in cols]
    return {
        "NB": str(nb),
        "CH": str(chunk),
        "PARTS": str(max(nb - 1, chunk, 1) * wg),
        "LOAD": "\n  ".join(load),
        "STEPS": "\n".join(_qr_step(j, nb, rows, wg) for j in cols),
        "STORE": "\n  ".join(store),
        "CHUNK": "\n    ".join(chunk_load + apply + chunk_store),
    }


def _row(r: int, wg: int, column: str, statements: list[str]) -> str:
    """``statements`` on the thread's row ``lid + wg r`` of the panel (``e`` its element at the
    panel's first column, then ``column``), when the panel has that row."""
    row = f"lid + {wg * r}u"
    return f"if ({row} < rows) {{ let e = base + ({row}) * n{column}; {' '.join(statements)} }}"


def _below(r: int, j: int, wg: int) -> str:
    """Whether the thread's row ``lid + wg r`` lies below row ``j`` within the panel's rows."""
    return f"lid + {wg * r}u > {j}u && lid + {wg * r}u < rows"


def _qr_step(j: int, nb: int, rows: int, wg: int) -> str:
    """Step ``j`` of the panel: column j's scale and norm below its diagonal, the reflector (beta
    on the diagonal, the vector below it, tau), and the reflector applied to the columns right of
    it in the panel."""
    regs = range(rows)
    # (the diagonal's row j is its thread's first: j < nb <= wg)
    largest = " ".join(f"if ({_below(r, j, wg)}) {{ s = max(s, mag(v{r}_{j})); }}" for r in regs)
    squares = " ".join(
        f"if ({_below(r, j, wg)}) {{ let t = v{r}_{j} / scale; q = q + mag2(t); }}" for r in regs
    )
    scaled = " ".join(f"if ({_below(r, j, wg)}) {{ v{r}_{j} = mul(v{r}_{j} / unit, factor); }}" for r in regs)
    right = [(f"v{{r}}_{c}", c - j - 1) for c in range(j + 1, nb)]
    return f"""  {{ // column {j}
    var s = Real();
    if (lid == {j}u) {{ s = mag(v0_{j}); alpha_s = v0_{j}; }}
    {largest}
    let scale = reduce_real(lid, s, true);
    let unit = select(scale, re(one()), scale == Real());  // (what the vector is divided by)
    var q = Real();
    if (scale > Real()) {{ {squares} }}
    let sigma = reduce_real(lid, q, false);
    let alpha = alpha_s;
    var tj = Elem(); var beta = alpha; var factor = Elem();
    if (sigma > Real() || im(alpha) != Real()) {{  // else nothing below a real alpha: H = I
      // in units of scale, so that a column of subnormals gives no 1 / (alpha - beta) overflow
      let r = alpha / scale;
      let norm = root(mag2(r) + sigma);
      let b_scaled = from_re(select(-norm, norm, re(alpha) < Real()));
      beta = from_re(re(b_scaled) * scale);
      tj = div(b_scaled - r, b_scaled);
      factor = div(one(), r - b_scaled);
    }}
    ct{j} = conj(tj);
    if (lid == 0u) {{ tau[tb + {j}u] = tj; }}
    if (lid == {j}u) {{ v0_{j} = beta; }}
    {scaled}
    {_qr_reflect(j, "v", right, rows, wg) if right else ""}
  }}"""


def _qr_reflect(j: int, name: str, targets: list[tuple[str, int]], rows: int, wg: int) -> str:
    """Reflector ``j`` (its vector ``v{r}_{j}`` below row j, 1 at row j) applied to the columns
    ``targets`` (each a register name pattern in ``r`` and its slot among the sums): each
    column's dot product with the vector, summed over the workgroup, times conj(tau) taken
    from the column."""
    regs = range(rows)
    partial = [f"var p_{name}{k} = select(Elem(), {t.format(r=0)}, lid == {j}u);" for t, k in targets]
    partial += [
        f"if ({_below(r, j, wg)}) {{ let y = conj(v{r}_{j}); "
        + " ".join(f"p_{name}{k} = p_{name}{k} + mul(y, {t.format(r=r)});" for t, k in targets)
        + " }"
        for r in regs
    ]
    partial += [f"part[{k}u * WG + lid] = p_{name}{k};" for _, k in targets]
    partial.append(f"sum_parts(lid, {len(targets)}u);")
    partial += [f"let w_{name}{k} = mul(ct{j}, total[{k}]);" for _, k in targets]
    top = " ".join(f"{t.format(r=0)} = {t.format(r=0)} - w_{name}{k};" for t, k in targets)
    partial.append(f"if (lid == {j}u) {{ {top} }}")
    partial += [
        f"if ({_below(r, j, wg)}) {{ "
        + " ".join(f"{t.format(r=r)} = {t.format(r=r)} - mul(w_{name}{k}, v{r}_{j});" for t, k in targets)
        + " }"
        for r in regs
    ]
    return "{ " + "\n      ".join(partial) + " }"
