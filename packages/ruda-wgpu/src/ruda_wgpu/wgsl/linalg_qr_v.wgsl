// V of a blocked QR's block of reflectors, and V^H: V's column c is the reflector of column
// kb + c of each matrix of a contiguous (batch, m, n) array that the QR kernels have factorised
// (its vector below the diagonal, 1 on it, 0 above), rows from kb. A thread an element of V at a
// time, writing it to V and, conjugated, to V^H, in one pass instead of tril, eye, their sum and
// a transposing copy.
// P: m, n, batch offset, kb, nb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> v: array<${T}>;
@group(0) @binding(3) var<storage, read_write> vh: array<${T}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let n = P[1]; let kb = P[3]; let nb = P[4];
  let b = P[2] + wid.y;
  let rows = m - kb;
  let count = rows * nb;
  for (var e = wid.x * ${WG}u + lid; e < count; e = e + nwg.x * ${WG}u) {
    let r = e / nb;
    let c = e % nb;
    var x = ${ZERO};
    if (r > c) {
      x = a[(b * m + kb + r) * n + kb + c];
    } else if (r == c) {
      x = ${ONE};
    }
    v[b * count + e] = x;
    vh[b * count + c * rows + r] = conj(x);
  }
}
