// The rotations of one round of a Jacobi method (from linalg_jacobi_pairs.wgsl) applied over the
// whole GPU, with the same arithmetic as linalg_jacobi.wgsl, one thread per item of each matrix:
//  two-sided: the 2 x 2 block of a in rows (p1, q1) of pair t1 and columns (p2, q2) of pair t2,
//    first its rows by pair t1's rotation, then its columns by pair t2's (the blocks of a round
//    are disjoint, so no thread waits for another); one-sided: row i of columns p2, q2 of a;
//  then, both: row i of columns p2, q2 of v.
// Columns x, y turn into c x - s w y and s x + c w y, rows with conj(w) (w the pair's phase).
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
  let a_items = select(PAIRS * PAIRS, m * PAIRS, ${ONE_SIDED} == 1u);
  let items = a_items + n * PAIRS;
  let b = g / items;
  if (b >= P[2]) { return; }
  var u = g - b * items;
  let t2 = u % PAIRS;
  let pq2 = pair(t2, r);
  let k2 = b * PAIRS + t2;
  let c2 = rot[2u * k2]; let s2 = rot[2u * k2 + 1u]; let w2 = turn[k2];
  if (u < a_items && ${ONE_SIDED} == 0u) {
    let pq1 = pair(u / PAIRS, r);
    let k1 = b * PAIRS + u / PAIRS;
    let c1 = rot[2u * k1]; let s1 = rot[2u * k1 + 1u]; let w1 = turn[k1];
    let base = b * n * n;
    let p1 = pq1.x; let q1 = pq1.y; let p2 = pq2.x; let q2 = pq2.y;
    // the block; entries past n (the spare index) stay zero and unused
    var x = array<${T}, 4>(a[base + p1 * n + p2], ${ZERO}, ${ZERO}, ${ZERO});
    if (q2 < n) { x[1] = a[base + p1 * n + q2]; }
    if (q1 < n) { x[2] = a[base + q1 * n + p2]; }
    if (q1 < n && q2 < n) { x[3] = a[base + q1 * n + q2]; }
    x = block_turned(x, c1, s1, w1, c2, s2, w2);
    a[base + p1 * n + p2] = x[0];
    if (q2 < n) { a[base + p1 * n + q2] = x[1]; }
    if (q1 < n) { a[base + q1 * n + p2] = x[2]; }
    if (q1 < n && q2 < n) { a[base + q1 * n + q2] = x[3]; }
    return;
  }
  if (s2 == ${RZERO}) { return; }
  if (u < a_items) {  // one-sided: row i of columns p2, q2 of a
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
