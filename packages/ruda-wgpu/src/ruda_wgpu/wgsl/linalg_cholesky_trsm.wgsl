// The block column below a blocked Cholesky's diagonal block: L21 = A21 L11^-H, in place, where
// L11 is the (just factorised) lower triangle of the diagonal block, rows and columns [kb, kb +
// nb), and A21 the rows below it, for each matrix of a contiguous (batch, n, n) array. L21^H is
// also written to the block row right of the diagonal block, where the LU's trailing update
// (linalg_lu_update.wgsl) reads its right factor: A22 - L21 L21^H. One thread per row: forward
// substitution along its nb columns.
// P: n, batch offset, kb, nb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2]; let nb = P[3];
  let i = kb + nb + wid.x * ${WG}u + lid;
  if (i >= n) { return; }
  let base = (P[1] + wid.y) * n * n;
  let row = base + i * n + kb;
  for (var j = 0u; j < nb; j = j + 1u) {
    let diagonal_row = base + (kb + j) * n + kb;
    var s = a[row + j];
    for (var l = 0u; l < j; l = l + 1u) { s = s - mul(a[row + l], conj(a[diagonal_row + l])); }
    let x = div(s, from_re(re(a[diagonal_row + j])));
    a[row + j] = x;
    a[base + (kb + j) * n + i] = conj(x);
  }
}
