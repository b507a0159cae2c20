// The block row right of an LU panel: U12 = L11^-1 A12, where L11 is the unit lower triangle of
// the panel's diagonal block (rows and columns [kb, kb + nb)) and A12 its rows right of the panel
// (columns [kb + nb, n)), in place, for each matrix of a contiguous (batch, n, n) array. One
// thread per column: forward substitution down its nb rows.
// P: n, batch offset, kb, nb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2]; let nb = P[3];
  let j = kb + nb + wid.x * ${WG}u + lid;
  if (j >= n) { return; }
  let base = (P[1] + wid.y) * n * n;
  for (var i = 1u; i < nb; i = i + 1u) {
    let row = base + (kb + i) * n;
    var s = a[row + j];
    for (var l = 0u; l < i; l = l + 1u) { s = s - mul(a[row + kb + l], a[base + (kb + l) * n + j]); }
    a[row + j] = s;
  }
}
