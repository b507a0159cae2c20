// The block column below a blocked Cholesky's diagonal block: L21 = A21 L11^-H, in place, where
// L11 is the (just factorised) lower triangle of the diagonal block, rows and columns [kb, kb +
// NB), and A21 the rows below it, for each matrix of a contiguous (batch, n, n) array. L21^H is
// also written to the block row right of the diagonal block, where the LU's trailing update
// (linalg_lu_update.wgsl) reads its right factor: A22 - L21 L21^H. One thread per row: forward
// substitution along its NB columns, a variable a column on GPUs (written out by the Python
// side), so that the row is read once and written once.
// P: n, batch offset, kb, nb (= NB)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
const NB = ${NB}u;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2];
  let i = kb + NB + wid.x * ${WG}u + lid;
  if (i >= n) { return; }
  let base = (P[1] + wid.y) * n * n;
  let d = base + kb * n + kb;    // L11's element (j, l) at d + j n + l
  let row = base + i * n + kb;   // the row's element j at row + j
  let col = base + kb * n + i;   // its transpose's element j at col + j n
  ${SOLVE}
}
