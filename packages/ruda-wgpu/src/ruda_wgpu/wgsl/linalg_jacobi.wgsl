// Jacobi methods, one workgroup per matrix of a batch, with the parallel round-robin ordering:
// in each of the N - 1 rounds of a sweep (N = n rounded up to even) the n/2 pairs (p, q) are
// disjoint, so their rotations run at once. Sweeps stop when a sweep rotates nothing.
//  ONE_SIDED == 0, eigh: a (n, n) symmetric (Hermitian); rotations W^H A W zero a[p, q]; v = v W.
//    The eigenvalues end on the diagonal of a, the eigenvectors in the columns of v.
//  ONE_SIDED == 1, svd (Hestenes): a (m, n), m >= n; rotations of column pairs make them
//    orthogonal; v = v W. Then the singular values are the column norms of a, U = a / S.
// Complex elements: the pair's off-diagonal element (or dot product) g = |g| e^(i phi) is first
// made real by the phase w = e^(-i phi) on column q, then rotated as a real one: columns
// x' = c x - s w y, y' = s x + c w y (w = 1 for real matrices).
// The sweeps may be split over dispatches: done[b] marks a matrix whose last sweep rotated
// nothing, which later dispatches leave as it is. A sweep itself may be split too, rounds r0 to
// r1 - 1 in one dispatch: done[batch + b] carries whether it has rotated anything so far.
// P: m (rows of a), n, batch, sweeps of this dispatch, r0, r1 (0 and N - 1 for whole sweeps)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> v: array<${T}>;
@group(0) @binding(3) var<storage, read_write> done: array<u32>;
var<workgroup> rc: array<${R}, ${PAIRS}>;
var<workgroup> rs: array<${R}, ${PAIRS}>;
var<workgroup> rw: array<${T}, ${PAIRS}>;
var<workgroup> rp: array<u32, ${PAIRS}>;
var<workgroup> rq: array<u32, ${PAIRS}>;
var<workgroup> rotated: atomic<u32>;
var<workgroup> again: u32;
${FIELD}
${ROTATION}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let n = P[1];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[2]) { return; }
  let abase = b * m * n;
  let vbase = b * n * n;
  let nn = n + (n & 1u);
  let pairs = nn / 2u;
  if (lid == 0u) { again = done[b]; }
  if (workgroupUniformLoad(&again) != 0u) { return; }
  let r0 = P[4]; let r1 = P[5];
  for (var sweep = 0u; sweep < P[3]; sweep = sweep + 1u) {
    if (lid == 0u) { atomicStore(&rotated, select(0u, done[P[2] + b], r0 > 0u)); }
    workgroupBarrier();
    for (var r = r0; r < r1; r = r + 1u) {
      for (var t = lid; t < pairs; t = t + ${WG}u) {
        let pq = pair(t, r);
        let p = pq.x; let q = pq.y;
        var cs = vec2<${R}>(${RONE}, ${RZERO});
        var w = ${ONE};
        if (q < n) {
          if (${ONE_SIDED} == 1u) {
            var e = ${RZERO}; var f = ${RZERO}; var g = ${ZERO};
            for (var i = 0u; i < m; i = i + 1u) {
              let x = a[abase + i * n + p]; let y = a[abase + i * n + q];
              e = e + mag2(x); f = f + mag2(y); g = g + mul(conj(x), y);
            }
            cs = rotation(e, f, size(g));
            w = phase(g);
          } else {
            let g = a[abase + p * n + q];
            cs = rotation(re(a[abase + p * n + p]), re(a[abase + q * n + q]), size(g));
            w = phase(g);
          }
        }
        if (cs.y != ${RZERO}) { atomicStore(&rotated, 1u); }
        rc[t] = cs.x; rs[t] = cs.y; rw[t] = w; rp[t] = p; rq[t] = q;
      }
      workgroupBarrier();
      if (${ONE_SIDED} == 0u) {   // rows p and q of a
        for (var u = lid; u < pairs * n; u = u + ${WG}u) {
          let t = u / n; let j = u % n;
          let s = rs[t];
          if (s != ${RZERO}) {
            let c = rc[t]; let p = rp[t]; let q = rq[t];
            let x = a[abase + p * n + j]; let y = mul(conj(rw[t]), a[abase + q * n + j]);
            a[abase + p * n + j] = c * x - s * y;
            a[abase + q * n + j] = s * x + c * y;
          }
        }
        storageBarrier();
      }
      for (var u = lid; u < pairs * m; u = u + ${WG}u) {   // columns p and q of a
        let t = u / m; let i = u % m;
        let s = rs[t];
        if (s != ${RZERO}) {
          let c = rc[t]; let p = rp[t]; let q = rq[t];
          let x = a[abase + i * n + p]; let y = mul(rw[t], a[abase + i * n + q]);
          a[abase + i * n + p] = c * x - s * y;
          a[abase + i * n + q] = s * x + c * y;
        }
      }
      for (var u = lid; u < pairs * n; u = u + ${WG}u) {   // columns p and q of v
        let t = u / n; let i = u % n;
        let s = rs[t];
        if (s != ${RZERO}) {
          let c = rc[t]; let p = rp[t]; let q = rq[t];
          let x = v[vbase + i * n + p]; let y = mul(rw[t], v[vbase + i * n + q]);
          v[vbase + i * n + p] = c * x - s * y;
          v[vbase + i * n + q] = s * x + c * y;
        }
      }
      storageBarrier();
    }
    if (lid == 0u) {
      again = atomicLoad(&rotated);
      if (r1 + 1u < nn) {  // the sweep goes on in the next dispatch
        done[P[2] + b] = again;
        again = 1u;
      } else if (again == 0u) {
        done[b] = 1u;
      }
    }
    if (workgroupUniformLoad(&again) == 0u) { break; }
  }
}
