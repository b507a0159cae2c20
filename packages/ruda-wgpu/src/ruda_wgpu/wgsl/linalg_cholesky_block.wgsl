// The diagonal block of a blocked Cholesky factorisation (linalg_cholesky.wgsl does whole
// matrices): rows and columns [kb, kb + nb) of each matrix of a contiguous (batch, n, n) array,
// nb <= BLOCK, factorised in place (the lower triangle), one workgroup per matrix, column after
// column as there but in workgroup memory, read once and written once: each column's steps wait
// for barriers, not for global memory. info[b] is 1 + the first column whose pivot is not
// positive, kept from an earlier block.
// P: n, batch, kb, nb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> info: array<u32>;
const BLOCK = ${BLOCK}u;
var<workgroup> blk: array<${T}, ${BLOCK2}>;  // element (i, j) of the block at i BLOCK + j
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2]; let nb = P[3];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[1]) { return; }
  let corner = b * n * n + kb * n + kb;
  for (var t = lid; t < nb * nb; t = t + ${WG}u) { blk[t / nb * BLOCK + t % nb] = a[corner + t / nb * n + t % nb]; }
  var bad = select(0u, info[b], kb > 0u);
  workgroupBarrier();
  for (var k = 0u; k < nb; k = k + 1u) {
    let d = re(blk[k * BLOCK + k]);  // a Hermitian matrix's diagonal is real
    if (!(d > ${RZERO}) && bad == 0u) { bad = kb + k + 1u; }
    let s = ${SQRT}(d);
    workgroupBarrier();
    if (lid == 0u) { blk[k * BLOCK + k] = from_re(s); }
    for (var i = k + 1u + lid; i < nb; i = i + ${WG}u) { blk[i * BLOCK + k] = div(blk[i * BLOCK + k], from_re(s)); }
    workgroupBarrier();
    let m = nb - k - 1u;
    for (var t = lid; t < m * m; t = t + ${WG}u) {
      let i = k + 1u + t / m;
      let j = k + 1u + t % m;
      if (j <= i) { blk[i * BLOCK + j] = blk[i * BLOCK + j] - mul(blk[i * BLOCK + k], conj(blk[j * BLOCK + k])); }
    }
    workgroupBarrier();
  }
  for (var t = lid; t < nb * nb; t = t + ${WG}u) {
    if (t % nb <= t / nb) { a[corner + t / nb * n + t % nb] = blk[t / nb * BLOCK + t % nb]; }
  }
  if (lid == 0u) { info[b] = bad; }
}
