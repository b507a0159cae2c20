// The rotations of one round of the block Jacobi methods, one workgroup per pair of blocks of
// a matrix. The n indices (columns) are cut into blocks of HALF; a round pairs the blocks in the
// parallel round-robin ordering (PAIRS pairs; a block past n, for an odd count, is the spare).
// A workgroup takes its pair's W x W matrix s (W = 2 HALF) into workgroup memory:
//  ONE_SIDED == 0, eigh: the submatrix of x = a (n x n) in the rows and columns of both blocks;
//  ONE_SIDED == 1, svd: the Gram matrix of a's (m x n) columns in both blocks (the dot products
//    the scalar one-sided method takes), the sum of its slices of rows in x, which
//    linalg_jacobi_gram.wgsl summed.
// It rotates s there with the two-sided Jacobi method (every inner round's HALF rotations at
// once, as linalg_jacobi.wgsl does on a whole matrix), accumulating their product u: s becomes
// u^H s u. It writes u, which linalg_jacobi_block_apply.wgsl applies to a and v. An index past n
// (the last block's tail) stays out of every rotation. flag[0] becomes 1 when a rotation is not
// the identity.
// P: n, matrices, round, slices of the Gram matrices (svd)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<${T}>;
@group(0) @binding(2) var<storage, read_write> u: array<${T}>;
@group(0) @binding(3) var<storage, read_write> flag: array<atomic<u32>>;
const PAIRS = ${PAIRS}u;
const W = ${W}u;
const HALF = ${W}u / 2u;
var<workgroup> s: array<${T}, ${W} * ${W}>;
var<workgroup> q: array<${T}, ${W} * ${W}>;
var<workgroup> rc: array<${R}, ${W} / 2>;
var<workgroup> rs: array<${R}, ${W} / 2>;
var<workgroup> rw: array<${T}, ${W} / 2>;
var<workgroup> rp: array<u32, ${W} / 2>;
var<workgroup> rq: array<u32, ${W} / 2>;
var<workgroup> rotated: atomic<u32>;
${FIELD}
${ROTATION}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0];
  let g = wid.y * nwg.x + wid.x;
  let mat = g / PAIRS;
  if (mat >= P[1]) { return; }
  let t = g - mat * PAIRS;
  let blocks = pair(t, P[2]);
  let base = mat * n * n;
  let slices = P[3];
  for (var e = lid; e < W * W; e = e + ${WG}u) {
    let i = e / W; let j = e % W;
    if (${ONE_SIDED} == 0u) {
      let gi = block_index(i, blocks, HALF); let gj = block_index(j, blocks, HALF);
      var y = ${ZERO};
      if (gi < n && gj < n) { y = x[base + gi * n + gj]; }
      s[e] = y;
    } else {
      var y = ${ZERO};
      for (var k = 0u; k < slices; k = k + 1u) { y = y + x[(g * slices + k) * W * W + e]; }
      s[e] = y;
    }
    q[e] = select(${ZERO}, ${ONE}, i == j);
  }
  if (lid == 0u) { atomicStore(&rotated, 0u); }
  workgroupBarrier();
  // the first round of a sweep rotates every pair of the submatrix, in W - 1 inner rounds; the
  // others only the pairs across its two blocks, which no earlier round of the sweep has met, in
  // HALF rounds: position t of the first block with position t + ir (cyclically) of the second
  let whole = P[2] == 0u;
  for (var ir = 0u; ir < select(HALF, W - 1u, whole); ir = ir + 1u) {
    if (lid < HALF) {
      var pq = vec2<u32>(lid, HALF + (lid + ir) % HALF);
      if (whole) { pq = circle_pair(lid, ir, HALF); }
      var cs = vec2<${R}>(${RONE}, ${RZERO});
      var w = ${ONE};
      if (block_index(pq.y, blocks, HALF) < n) {  // (then p, an earlier position, is inside too)
        let gpq = s[pq.x * W + pq.y];
        cs = rotation(re(s[pq.x * W + pq.x]), re(s[pq.y * W + pq.y]), size(gpq));
        w = phase(gpq);
      }
      if (cs.y != ${RZERO}) { atomicStore(&rotated, 1u); }
      rc[lid] = cs.x; rs[lid] = cs.y; rw[lid] = w; rp[lid] = pq.x; rq[lid] = pq.y;
    }
    workgroupBarrier();
    for (var e = lid; e < HALF * HALF; e = e + ${WG}u) {  // the 2 x 2 blocks of s
      let t1 = e / HALF; let t2 = e % HALF;
      let p1 = rp[t1]; let q1 = rq[t1]; let p2 = rp[t2]; let q2 = rq[t2];
      var x = array<${T}, 4>(s[p1 * W + p2], s[p1 * W + q2], s[q1 * W + p2], s[q1 * W + q2]);
      x = block_turned(x, rc[t1], rs[t1], rw[t1], rc[t2], rs[t2], rw[t2]);
      s[p1 * W + p2] = x[0]; s[p1 * W + q2] = x[1]; s[q1 * W + p2] = x[2]; s[q1 * W + q2] = x[3];
    }
    for (var e = lid; e < W * HALF; e = e + ${WG}u) {  // row i of columns p2, q2 of q
      let i = e / HALF; let t2 = e % HALF;
      let s2 = rs[t2];
      if (s2 != ${RZERO}) {
        let p2 = rp[t2]; let q2 = rq[t2];
        let xy = turned(q[i * W + p2], mul(rw[t2], q[i * W + q2]), rc[t2], s2);
        q[i * W + p2] = xy[0]; q[i * W + q2] = xy[1];
      }
    }
    workgroupBarrier();
  }
  let ubase = g * W * W;
  for (var e = lid; e < W * W; e = e + ${WG}u) { u[ubase + e] = q[e]; }
  if (lid == 0u && atomicLoad(&rotated) != 0u) { atomicStore(&flag[0], 1u); }
}
