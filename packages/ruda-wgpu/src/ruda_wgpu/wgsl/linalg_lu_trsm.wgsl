// The block row right of an LU panel: U12 = L11^-1 A12, where L11 is the unit lower triangle of
// the panel's diagonal block (rows and columns [kb, kb + NB)) and A12 its rows right of the panel
// (columns [kb + NB, n)), in place, for each matrix of a contiguous (batch, n, n) array. One
// thread per column: forward substitution down its NB rows, a variable a row on GPUs (written out by
// the Python side), so that the column is read once and written once.
// P: n, batch offset, kb, nb (= NB)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
const NB = ${NB}u;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2];
  let j = kb + NB + wid.x * ${WG}u + lid;
  if (j >= n) { return; }
  let base = (P[1] + wid.y) * n * n;
  let d = base + kb * n + kb;  // L11's element (i, l) at d + i n + l
  let c = base + kb * n + j;   // the column's element i at c + i n
  ${SOLVE}
}
