// Cholesky factorisation A = L L^H (L L^T for real A), in place in the lower triangle of each
// matrix of a contiguous (batch, n, n) array (the upper triangle is read as zeros, and zeroed
// after the last column), one workgroup per matrix, column after column: columns k0 to k1 - 1 in
// one dispatch (a factorisation may take several, in order). info[b] is 1 + the first column
// whose pivot is not positive (0: A is positive definite), as LAPACK's potrf. A blocked
// factorisation's diagonal blocks are linalg_cholesky_block.wgsl's.
// P: n, batch, k0, k1
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> info: array<u32>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[1]) { return; }
  let base = b * n * n;
  let k0 = P[2]; let k1 = P[3];
  var bad = select(0u, info[b], k0 > 0u);
  for (var k = k0; k < k1; k = k + 1u) {
    let d = re(a[base + k * n + k]);  // a Hermitian matrix's diagonal is real
    if (!(d > ${RZERO}) && bad == 0u) { bad = k + 1u; }
    let s = ${SQRT}(d);
    storageBarrier();
    if (lid == 0u) { a[base + k * n + k] = from_re(s); }
    for (var i = k + 1u + lid; i < n; i = i + ${WG}u) { a[base + i * n + k] = div(a[base + i * n + k], from_re(s)); }
    storageBarrier();
    let m = n - k - 1u;
    for (var t = lid; t < m * m; t = t + ${WG}u) {
      let i = k + 1u + t / m;
      let j = k + 1u + t % m;
      if (j <= i) { a[base + i * n + j] = a[base + i * n + j] - mul(a[base + i * n + k], conj(a[base + j * n + k])); }
    }
    storageBarrier();
  }
  if (k1 == n) {
    for (var t = lid; t < n * n; t = t + ${WG}u) {
      if (t % n > t / n) { a[base + t] = ${ZERO}; }
    }
  }
  if (lid == 0u) { info[b] = bad; }
}
