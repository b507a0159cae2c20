// Householder QR of each matrix of a contiguous (batch, m, n) array, in place, one workgroup per
// matrix, as LAPACK's geqrf: R on and above the diagonal, each reflector's vector below it (its
// first element, 1, is not stored), and tau[b * k + j], with H_j = I - tau_j v_j v_j^H. Complex
// matrices as zgeqrf: beta (R's diagonal) is real, and A := H_j^H A. Column norms are scaled by
// their largest element so that squares neither overflow nor underflow. Columns j0 to j1 - 1 in
// one dispatch (a factorisation may take several, in order), each reflector applied to the
// columns left of lim (n, or the end of a blocked factorisation's block): by a thread a column
// while a quarter of the workgroup's size or more remain, else all at once with each column's
// rows spread over threads (a block's columns, a small matrix's).
// P: m, n, batch, j0, j1, lim
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> tau: array<${T}>;
var<workgroup> red: array<${R}, ${WG}>;
var<workgroup> dots: array<${T}, ${WG}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let n = P[1]; let lim = P[5];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[2]) { return; }
  let base = b * m * n;
  let k = min(m, n);
  for (var j = P[3]; j < P[4]; j = j + 1u) {
    var v = ${RZERO};
    for (var i = j + lid; i < m; i = i + ${WG}u) { v = max(v, mag(a[base + i * n + j])); }
    red[lid] = v;
    workgroupBarrier();
    for (var s = ${WG}u / 2u; s > 0u; s = s >> 1u) {
      if (lid < s) { red[lid] = max(red[lid], red[lid + s]); }
      workgroupBarrier();
    }
    let scale = red[0];
    let unit = select(scale, ${RONE}, scale == ${RZERO});  // (what the vector is divided by)
    workgroupBarrier();
    var q = ${RZERO};
    if (scale > ${RZERO}) {
      for (var i = j + 1u + lid; i < m; i = i + ${WG}u) {
        let t = a[base + i * n + j] / scale;
        q = q + mag2(t);
      }
    }
    red[lid] = q;
    workgroupBarrier();
    for (var s = ${WG}u / 2u; s > 0u; s = s >> 1u) {
      if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
      workgroupBarrier();
    }
    let sigma = red[0];
    let alpha = a[base + j * n + j];
    var t_j = ${ZERO};
    var beta = alpha;
    var factor = ${ZERO};
    if (sigma > ${RZERO} || im(alpha) != ${RZERO}) {  // else nothing below a real alpha: H = I
      // in units of scale, so that a column of subnormals gives no 1 / (alpha - beta) overflow
      let r = alpha / scale;
      let norm = ${SQRT}(mag2(r) + sigma);
      let b_scaled = from_re(select(-norm, norm, re(alpha) < ${RZERO}));
      beta = from_re(re(b_scaled) * scale);
      t_j = div(b_scaled - r, b_scaled);
      factor = div(${ONE}, r - b_scaled);
    }
    storageBarrier();
    if (lid == 0u) { a[base + j * n + j] = beta; tau[b * k + j] = t_j; }
    for (var i = j + 1u + lid; i < m; i = i + ${WG}u) { a[base + i * n + j] = mul(a[base + i * n + j] / unit, factor); }
    storageBarrier();
    let ct = conj(t_j);
    if (lim - j - 1u >= ${WG}u / 4u) {  // many columns left: a thread a column, down its rows
      for (var c = j + 1u + lid; c < lim; c = c + ${WG}u) {
        var w = a[base + j * n + c];
        for (var i = j + 1u; i < m; i = i + 1u) { w = w + mul(conj(a[base + i * n + j]), a[base + i * n + c]); }
        w = mul(ct, w);
        a[base + j * n + c] = a[base + j * n + c] - w;
        for (var i = j + 1u; i < m; i = i + 1u) { a[base + i * n + c] = a[base + i * n + c] - mul(w, a[base + i * n + j]); }
      }
    } else {
      // few (a panel's): all at once, thread (g, c) of cols x groups (cols the columns left, in
      // a power of two) taking column c's rows g, g + groups, ... so that neighbouring threads
      // read neighbouring words; the groups' dot products are summed by a tree
      let left = lim - j - 1u;
      let cols = select(1u << (32u - countLeadingZeros(left - 1u)), 1u, left <= 1u);
      let groups = ${WG}u / cols;
      let cc = lid % cols;
      let g = lid / cols;
      let c = j + 1u + cc;
      var part = ${ZERO};
      var top = ${ZERO};  // read before the barrier, after which its column's group 0 writes it
      if (cc < left) {
        top = a[base + j * n + c];
        for (var i = j + 1u + g; i < m; i = i + groups) { part = part + mul(conj(a[base + i * n + j]), a[base + i * n + c]); }
      }
      dots[lid] = part;
      workgroupBarrier();
      for (var s = groups / 2u; s > 0u; s = s >> 1u) {
        if (g < s) { dots[lid] = dots[lid] + dots[lid + s * cols]; }
        workgroupBarrier();
      }
      if (cc < left) {
        let w = mul(ct, top + dots[cc]);
        if (g == 0u) { a[base + j * n + c] = top - w; }
        for (var i = j + 1u + g; i < m; i = i + groups) { a[base + i * n + c] = a[base + i * n + c] - mul(w, a[base + i * n + j]); }
      }
    }
    storageBarrier();
  }
}
