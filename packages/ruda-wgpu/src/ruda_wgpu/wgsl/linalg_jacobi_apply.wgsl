// The rotations of one round of the one-sided Jacobi method (from linalg_jacobi_pairs.wgsl)
// applied over the whole GPU, with the same arithmetic as linalg_jacobi.wgsl, one thread per item
// of each matrix: row i of columns p2, q2 of a, or row i of columns p2, q2 of v.
// Columns x, y turn into c x - s w y and s x + c w y (w the pair's phase).
// P: m (rows of a), n, matrices, round
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> v: array<${T}>;
@group(0) @binding(3) var<storage, read> rot: array<${R}>;
@group(0) @binding(4) var<storage, read> turn: array<${T}>;
const PAIRS = ${PAIRS}u;
${FIELD}
${ROTATION}

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let m = P[0]; let n = P[1]; let r = P[3];
  let g = gid.x + gid.y * groups.x * ${WG}u;
  let a_items = m * PAIRS;
  let items = a_items + n * PAIRS;
  let b = g / items;
  if (b >= P[2]) { return; }
  var u = g - b * items;
  let t2 = u % PAIRS;
  let pq2 = pair(t2, r);
  let k2 = b * PAIRS + t2;
  let c2 = rot[2u * k2]; let s2 = rot[2u * k2 + 1u]; let w2 = turn[k2];
  if (s2 == ${RZERO}) { return; }
  if (u < a_items) {  // row i of columns p2, q2 of a
    let at = b * m * n + (u / PAIRS) * n;
    let xy = turned(a[at + pq2.x], mul(w2, a[at + pq2.y]), c2, s2);
    a[at + pq2.x] = xy[0]; a[at + pq2.y] = xy[1];
    return;
  }
  u = u - a_items;  // row i of columns p2, q2 of v
  let at = b * n * n + (u / PAIRS) * n;
  let xy = turned(v[at + pq2.x], mul(w2, v[at + pq2.y]), c2, s2);
  v[at + pq2.x] = xy[0]; v[at + pq2.y] = xy[1];
}
