// One round of the two-sided Jacobi method (eigh) in one dispatch, for matrices whose rounds run
// over the whole GPU. Every thread works out the rotations it needs from the matrix as the round
// found it, in a (as linalg_jacobi_pairs.wgsl would), and writes the rotated entries into b: the
// two buffers take turns round by round, so no thread reads an entry another one has written.
// One thread per item of each matrix, as in linalg_jacobi_apply.wgsl: the 2 x 2 block in rows
// (p1, q1) of pair t1 and columns (p2, q2) of pair t2, its rows turned by pair t1's rotation and
// then its columns by pair t2's; then row i of columns p2, q2 of v, in place (each item its own
// entries). flag[0] becomes 1 when a rotation of the round is not the identity.
// P: n, matrices, round
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> b: array<${T}>;
@group(0) @binding(3) var<storage, read_write> v: array<${T}>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;
const PAIRS = ${PAIRS}u;
${FIELD}
${ROTATION}

struct Turn { c: ${R}, s: ${R}, w: ${T} }

// The rotation (c, s) and phase w of pair (p, q) of the matrix at base; the identity for the
// spare index q = n of an odd n
fn turn_of(base: u32, n: u32, pq: vec2<u32>) -> Turn {
  if (pq.y >= n) { return Turn(${RONE}, ${RZERO}, ${ONE}); }
  let g = a[base + pq.x * n + pq.y];
  let cs = rotation(re(a[base + pq.x * n + pq.x]), re(a[base + pq.y * n + pq.y]), size(g));
  return Turn(cs.x, cs.y, phase(g));
}

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let n = P[0]; let r = P[2];
  let g = gid.x + gid.y * groups.x * ${WG}u;
  let a_items = PAIRS * PAIRS;
  let items = a_items + n * PAIRS;
  let mat = g / items;
  if (mat >= P[1]) { return; }
  var u = g - mat * items;
  let base = mat * n * n;
  let t2 = u % PAIRS;
  let pq2 = pair(t2, r);
  let turn2 = turn_of(base, n, pq2);
  let c2 = turn2.c; let s2 = turn2.s; let w2 = turn2.w;
  if (u < a_items) {
    let t1 = u / PAIRS;
    let pq1 = pair(t1, r);
    var turn1 = turn2;
    if (t1 != t2) { turn1 = turn_of(base, n, pq1); }
    let c1 = turn1.c; let s1 = turn1.s; let w1 = turn1.w;
    let p1 = pq1.x; let q1 = pq1.y; let p2 = pq2.x; let q2 = pq2.y;
    // the block; entries past n (the spare index) stay zero and unused
    var x = array<${T}, 4>(a[base + p1 * n + p2], ${ZERO}, ${ZERO}, ${ZERO});
    if (q2 < n) { x[1] = a[base + p1 * n + q2]; }
    if (q1 < n) { x[2] = a[base + q1 * n + p2]; }
    if (q1 < n && q2 < n) { x[3] = a[base + q1 * n + q2]; }
    x = block_turned(x, c1, s1, w1, c2, s2, w2);
    b[base + p1 * n + p2] = x[0];
    if (q2 < n) { b[base + p1 * n + q2] = x[1]; }
    if (q1 < n) { b[base + q1 * n + p2] = x[2]; }
    if (q1 < n && q2 < n) { b[base + q1 * n + q2] = x[3]; }
    if (t1 == t2 && s2 != ${RZERO}) { atomicStore(&flag[0], 1u); }
    return;
  }
  if (s2 == ${RZERO}) { return; }
  u = u - a_items;  // row i of columns p2, q2 of v
  let at = base + (u / PAIRS) * n;
  let xy = turned(v[at + pq2.x], mul(w2, v[at + pq2.y]), c2, s2);
  v[at + pq2.x] = xy[0]; v[at + pq2.y] = xy[1];
}
