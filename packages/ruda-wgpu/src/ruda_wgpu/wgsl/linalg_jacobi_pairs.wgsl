// The rotations of one round of the one-sided Jacobi method (svd; see linalg_jacobi.wgsl) for
// matrices whose rounds run over the whole GPU (two dispatches a round: these rotations, then
// linalg_jacobi_apply.wgsl). One workgroup per pair t and matrix b: pair t of round r is (p, q)
// as in linalg_jacobi.wgsl. The workgroup sums the columns' squared norms and dot product.
// The rotation of pair k = b PAIRS + t: c and s in
// rot[2 k] and rot[2 k + 1], the phase w in turn[k] (c = 1, s = 0 for a pair with q = n, the
// spare index of an odd n). flag[0] becomes 1 when a rotation of the round is not the identity.
// P: m (rows of a), n, first matrix of this dispatch, round
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> rot: array<${R}>;
@group(0) @binding(3) var<storage, read_write> turn: array<${T}>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;
var<workgroup> sum_e: array<${R}, ${WG}>;
var<workgroup> sum_f: array<${R}, ${WG}>;
var<workgroup> sum_g: array<${T}, ${WG}>;
const PAIRS = ${PAIRS}u;
${FIELD}
${ROTATION}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let n = P[1]; let r = P[3];
  let t = wid.x; let b = P[2] + wid.y;
  let pq = pair(t, r);
  let p = pq.x; let q = pq.y;
  let k = b * PAIRS + t;
  let base = b * m * n;
  var cs = vec2<${R}>(${RONE}, ${RZERO});
  var w = ${ONE};
  if (q < n) {
    var e = ${RZERO}; var f = ${RZERO}; var g = ${ZERO};
    for (var i = lid; i < m; i = i + ${WG}u) {
      let x = a[base + i * n + p]; let y = a[base + i * n + q];
      e = e + mag2(x); f = f + mag2(y); g = g + mul(conj(x), y);
    }
    sum_e[lid] = e; sum_f[lid] = f; sum_g[lid] = g;
    workgroupBarrier();
    for (var half = ${WG}u / 2u; half > 0u; half = half / 2u) {
      if (lid < half) {
        sum_e[lid] = sum_e[lid] + sum_e[lid + half];
        sum_f[lid] = sum_f[lid] + sum_f[lid + half];
        sum_g[lid] = sum_g[lid] + sum_g[lid + half];
      }
      workgroupBarrier();
    }
    cs = rotation(sum_e[0], sum_f[0], size(sum_g[0]));
    w = phase(sum_g[0]);
  }
  if (lid == 0u) {
    rot[2u * k] = cs.x; rot[2u * k + 1u] = cs.y; turn[k] = w;
    if (cs.y != ${RZERO}) { atomicStore(&flag[0], 1u); }
  }
}
