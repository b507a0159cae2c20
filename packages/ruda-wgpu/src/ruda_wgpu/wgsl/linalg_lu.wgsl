// LU factorisation with partial pivoting, in place, of the columns [kb, kb + nb) of each matrix of
// a contiguous (batch, n, n) array: one workgroup per matrix. With kb = 0 and nb = n it is the whole
// factorisation P A = L U, L unit lower triangular (below the diagonal) and U upper (on and
// above); a blocked factorisation calls it per panel of columns, after the updates of the
// panels before (linalg_lu_trsm.wgsl, linalg_lu_update.wgsl). Rows are exchanged whole, so that
// the factors and pivots are those of the unblocked factorisation. piv[b * n + k] is the row
// exchanged with row k at step k, perm[b * n + i] the row of A that ends as row i (the identity
// before the first panel); info[b] is 1 + the first step with a zero pivot (0 when there
// is none), as LAPACK's getrf: the first panel sets it, later ones only while it is 0.
// Steps are separated by storage barriers; every thread takes columns, rows or elements in turn.
// Elements are real or complex: arithmetic goes through the FIELD functions (mul, div, mag...).
// P: n, batch, kb, nb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> piv: array<u32>;
@group(0) @binding(3) var<storage, read_write> info: array<u32>;
@group(0) @binding(4) var<storage, read_write> perm: array<u32>;
var<workgroup> best_v: array<${R}, ${WG}>;
var<workgroup> best_i: array<u32, ${WG}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2]; let ke = min(kb + P[3], n);
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[1]) { return; }
  let base = b * n * n;
  var first_zero = 0u;
  for (var k = kb; k < ke; k = k + 1u) {
    // the pivot: the largest magnitude in column k at or below the diagonal (the first of equals)
    var bv = ${RZERO} - ${RONE};
    var bi = k;
    for (var i = k + lid; i < n; i = i + ${WG}u) {
      let v = mag(a[base + i * n + k]);
      if (v > bv) { bv = v; bi = i; }
    }
    best_v[lid] = bv; best_i[lid] = bi;
    workgroupBarrier();
    for (var s = ${WG}u / 2u; s > 0u; s = s >> 1u) {
      if (lid < s) {
        let v = best_v[lid + s];
        if (v > best_v[lid] || (v == best_v[lid] && best_i[lid + s] < best_i[lid])) {
          best_v[lid] = v; best_i[lid] = best_i[lid + s];
        }
      }
      workgroupBarrier();
    }
    let p = best_i[0];
    if (lid == 0u) {
      piv[b * n + k] = p;
      let t = perm[b * n + k]; perm[b * n + k] = perm[b * n + p]; perm[b * n + p] = t;
    }
    if (p != k) {
      for (var j = lid; j < n; j = j + ${WG}u) {
        let t = a[base + k * n + j];
        a[base + k * n + j] = a[base + p * n + j];
        a[base + p * n + j] = t;
      }
    }
    storageBarrier();
    let d = a[base + k * n + k];
    if (is_zero(d)) {
      if (first_zero == 0u) { first_zero = k + 1u; }
    } else {
      for (var i = k + 1u + lid; i < n; i = i + ${WG}u) { a[base + i * n + k] = div(a[base + i * n + k], d); }
    }
    storageBarrier();
    // the rank-1 update of the panel's columns right of k (all of them when it is the whole matrix)
    let m = n - k - 1u;
    let w = ke - k - 1u;
    for (var t = lid; t < m * w; t = t + ${WG}u) {
      let i = k + 1u + t / w;
      let j = k + 1u + t % w;
      a[base + i * n + j] = a[base + i * n + j] - mul(a[base + i * n + k], a[base + k * n + j]);
    }
    storageBarrier();
  }
  if (lid == 0u && (kb == 0u || info[b] == 0u)) { info[b] = first_zero; }
}
