// Solve A X = B for each matrix of a batch from the LU factors of linalg_lu.wgsl or
// linalg_lu_panel.wgsl, in place in x (batch, n, k), whose rows are already exchanged (x holds B
// with the rows in the pivots' order): forward substitution with the unit lower L, then
// backward with U, a block of BS rows at a time. A workgroup takes C columns of one matrix's x
// (workgroup (i, j): columns [i C, i C + C) of matrix j), so that many right-hand sides (an
// inverse) spread over the GPU. A block is solved by one thread per column, a variable a row,
// and passes through workgroup memory to the update of the other rows, where a thread takes
// ITEMS (row, column) pairs at once: straight-line code the Python side writes, so that their
// loads are issued together rather than each after the last store.
// P: n, k, first matrix of this dispatch, C
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> x: array<${T}>;
@group(0) @binding(2) var<storage, read> lu: array<${T}>;
alias Elem = ${T};
const BS = ${BS}u;
const WG = ${WG}u;
var<workgroup> xs: array<Elem, ${XS}>;  // the block's solution: column c's row i at c BS + i
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kc = P[1];
  let b = P[2] + wid.y;
  let c0 = wid.x * P[3];
  let w = min(P[3], kc - c0);   // this workgroup's columns
  let a0 = b * n * n;
  let x0 = b * n * kc + c0;     // element (row r, column c0 + c) at x0 + r * kc + c
  // L y = x: the blocks from the top (the last one may be short), then the rows below each
  for (var i0 = 0u; i0 < n; i0 = i0 + BS) {
    let bs = min(BS, n - i0);
    if (lid < w) {
      let xe = x0 + i0 * kc + lid;  // the block's row i of this thread's column at xe + i kc
      let d = a0 + i0 * n + i0;     // the diagonal block's element (i, l) at d + i n + l
      let q = lid * BS;
      ${FORWARD_BLOCK}
    }
    workgroupBarrier();
    let first = i0 + bs;
    let count = (n - first) * w;  // with a full block: the short one is the last
    for (var t0 = lid; t0 < count; t0 = t0 + ${ITEMS}u * WG) {
      ${FORWARD_ROWS}
    }
    storageBarrier();
    workgroupBarrier();
  }
  // U x = y: the blocks from the bottom (the top one, last, may be short), then the rows above each
  for (var i1 = n; i1 > 0u; i1 = i1 - min(BS, i1)) {
    let bs = min(BS, i1);
    let i0 = i1 - bs;
    if (lid < w) {
      let xe = x0 + i0 * kc + lid;
      let d = a0 + i0 * n + i0;
      let q = lid * BS;
      ${BACKWARD_BLOCK}
    }
    workgroupBarrier();
    let count = i0 * w;  // with a full block: the short one is the top
    for (var t0 = lid; t0 < count; t0 = t0 + ${ITEMS}u * WG) {
      ${BACKWARD_ROWS}
    }
    storageBarrier();
    workgroupBarrier();
  }
}
