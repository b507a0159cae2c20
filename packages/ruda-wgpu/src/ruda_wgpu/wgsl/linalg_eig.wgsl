// Eigenvalues and eigenvectors of general complex matrices (real ones arrive as complex), one
// workgroup per matrix of a contiguous (batch, n, n) array, as LAPACK's zgeev does it:
//   0. balancing (zgebal): first permutations P that move a row with no off-diagonal entry in
//      the window [lo, hi) to its end, and a column with none to its start, until there are none
//      (a triangular matrix is then triangular, and its eigenvalues its exact diagonal: without
//      them a 16 x 16 lower triangular float32 one's had come back complex, 2e-3 off); then
//      A := D^-1 A D with D a diagonal of powers of two making the window's rows' and columns'
//      off-diagonal sums alike, so that the deflation tests below, relative to the diagonal, do
//      not take a small element that a large one multiplies for negligible ([[4, 1e8], [2e-8,
//      3]] had given 3 and 4, not 2 and 5). Z starts as P D, so that V = Z X below gives A's
//      eigenvectors;
//   1. Householder reduction to upper Hessenberg form H = Z^H A Z (zgehrd);
//   2. the shifted QR algorithm on H (Wilkinson shifts, exceptional shifts every 10 iterations,
//      deflation of negligible subdiagonal elements), each step as Givens rotations applied to the
//      whole of H and to Z, so that H ends as the Schur form T = Z^H A Z (zhseqr);
//   3. the eigenvectors of T by back substitution, one thread per eigenvector (ztrevc), then
//      V = Z X, each column scaled to unit norm with its largest element real (zgeev).
// Decisions (deflation, shifts, rotations) are taken by thread 0 and handed to the others through
// workgroup memory; the rows and columns they change are updated by every thread.
// Buffers: a (the matrix, then T), z (Z), x (X, then V), work (per matrix: 2n values: rotations
// or the Householder vector), w (eigenvalues), info (1 when the QR iterations did not converge).
// P: n, batch, max iterations per eigenvalue, 1 for a real matrix (step 4)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> z: array<${T}>;
@group(0) @binding(3) var<storage, read_write> x: array<${T}>;
@group(0) @binding(4) var<storage, read_write> work: array<${T}>;
@group(0) @binding(5) var<storage, read_write> w: array<${T}>;
@group(0) @binding(6) var<storage, read_write> info: array<u32>;
var<workgroup> shared_lo: u32;
var<workgroup> shared_hi: u32;
var<workgroup> shared_tau: ${T};
var<workgroup> shared_go: u32;
var<workgroup> found: atomic<u32>;
${FIELD}

fn scale(v: ${T}, s: ${R}) -> ${T} { return v * s; }
// c (in .x of the first) and s of the Givens rotation [[c, s], [-conj(s), c]] that zeroes b below a
fn givens(p: ${T}, q: ${T}) -> array<${T}, 2> {
  let mq = mag(q);
  if (mq == ${RZERO}) { return array<${T}, 2>(${ONE}, ${ZERO}); }
  let mp = mag(p);
  if (mp == ${RZERO}) { return array<${T}, 2>(${ZERO}, scale(conj(q), ${RONE} / mq)); }
  let norm = ${ABS}(mp) * ${SQRT}(${RONE} + (mq / mp) * (mq / mp));
  let unit = scale(p, ${RONE} / mp);
  return array<${T}, 2>(from_re(mp / norm), scale(mul(unit, conj(q)), ${RONE} / norm));
}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[1]) { return; }
  let base = b * n * n;
  let wb = b * 2u * n;
  for (var t = lid; t < n * n; t = t + ${WG}u) { z[base + t] = select(${ZERO}, ${ONE}, t / n == t % n); }
  storageBarrier();

  // 0. balancing. The permutations: a thread a candidate row (column), the last (first) found
  // swapped with the window's last (first) index, rows and columns of A and columns of Z
  var win_lo = 0u;  // the window [win_lo, win_hi) the permutations leave
  var win_hi = n;
  for (var side = 0u; side < 2u; side = side + 1u) {  // rows to the end, then columns to the start
    loop {
      if (lid == 0u) { atomicStore(&found, select(0u, 0xffffffffu, side == 1u)); }
      workgroupBarrier();
      for (var j = win_lo + lid; j < win_hi; j = j + ${WG}u) {
        var alone = true;
        for (var t = win_lo; t < win_hi && alone; t = t + 1u) {
          let e = select(a[base + j * n + t], a[base + t * n + j], side == 1u);
          if (t != j && !is_zero(e)) { alone = false; }
        }
        if (alone && side == 0u) { atomicMax(&found, j + 1u); }
        if (alone && side == 1u) { atomicMin(&found, j); }
      }
      workgroupBarrier();
      if (lid == 0u) { shared_go = atomicLoad(&found); }
      let pick = workgroupUniformLoad(&shared_go);
      workgroupBarrier();  // (every thread has read it before thread 0 writes it again)
      if ((side == 0u && pick == 0u) || (side == 1u && pick == 0xffffffffu)) { break; }
      let j = select(pick - 1u, pick, side == 1u);
      let to = select(win_hi - 1u, win_lo, side == 1u);
      if (j != to) {
        for (var t = lid; t < n; t = t + ${WG}u) {  // rows j and to
          let u = a[base + j * n + t]; a[base + j * n + t] = a[base + to * n + t]; a[base + to * n + t] = u;
        }
        storageBarrier();
        for (var t = lid; t < n; t = t + ${WG}u) {  // then their columns, in A and in Z
          let u = a[base + t * n + j]; a[base + t * n + j] = a[base + t * n + to]; a[base + t * n + to] = u;
          let v = z[base + t * n + j]; z[base + t * n + j] = z[base + t * n + to]; z[base + t * n + to] = v;
        }
      }
      storageBarrier();
      if (side == 0u) { win_hi = win_hi - 1u; } else { win_lo = win_lo + 1u; }
    }
  }
  // The scaling: sweeps over the window's rows until none changes (EISPACK's balanc, radix 2):
  // thread 0 picks the power f for row i, every thread scales row i by 1/f and column i by f
  // (exact), and column i of Z by f
  for (var sweep = 0u; sweep < ${BALANCE_SWEEPS}u; sweep = sweep + 1u) {
    if (lid == 0u) { shared_go = 0u; }
    for (var i = win_lo; i < win_hi; i = i + 1u) {
      if (lid == 0u) {
        var c = ${RZERO}; var r = ${RZERO};
        for (var j = win_lo; j < win_hi; j = j + 1u) {
          if (j != i) { c = c + mag(a[base + j * n + i]); r = r + mag(a[base + i * n + j]); }
        }
        var f = ${RONE};
        if (c > ${RZERO} && r > ${RZERO}) {
          let s = c + r;
          var g = r * 0.5;
          while (c < g && f < ${BALANCE_MAX}) { f = f * 2.0; c = c * 4.0; }
          g = r * 2.0;
          while (c >= g && f > ${RONE} / ${BALANCE_MAX}) { f = f * 0.5; c = c * 0.25; }
          if ((c + r) / f < 0.95 * s) { shared_go = 1u; } else { f = ${RONE}; }  // (NaN: no change)
        }
        shared_tau = from_re(f);
      }
      let f = re(workgroupUniformLoad(&shared_tau));
      if (f != ${RONE}) {
        for (var j = lid; j < n; j = j + ${WG}u) { a[base + i * n + j] = scale(a[base + i * n + j], ${RONE} / f); }
        storageBarrier();
        for (var j = lid; j < n; j = j + ${WG}u) {
          a[base + j * n + i] = scale(a[base + j * n + i], f);
          z[base + j * n + i] = scale(z[base + j * n + i], f);
        }
      }
      storageBarrier();  // (and thread 0 writes shared_tau again only after every thread read it)
    }
    let go = workgroupUniformLoad(&shared_go);
    workgroupBarrier();
    if (go == 0u) { break; }
  }

  // 1. Hessenberg: for each column k, a reflector I - tau v v^H zeroes a[k+2:, k]
  for (var k = 0u; k + 2u < n; k = k + 1u) {
    if (lid == 0u) {
      let alpha = a[base + (k + 1u) * n + k];
      var big = mag(alpha);
      for (var i = k + 2u; i < n; i = i + 1u) { big = max(big, mag(a[base + i * n + k])); }
      var sigma = ${RZERO};
      if (big > ${RZERO}) {
        for (var i = k + 2u; i < n; i = i + 1u) { sigma = sigma + mag2(scale(a[base + i * n + k], ${RONE} / big)); }
      }
      var tau = ${ZERO};
      work[wb + k + 1u] = ${ONE};
      if (sigma > ${RZERO} || im(alpha) != ${RZERO}) {
        let r = scale(alpha, ${RONE} / big);
        let norm = big * ${SQRT}(mag2(r) + sigma);
        let beta = from_re(select(-norm, norm, re(alpha) < ${RZERO}));
        tau = div(beta - alpha, beta);
        let factor = div(${ONE}, alpha - beta);
        for (var i = k + 2u; i < n; i = i + 1u) { work[wb + i] = mul(a[base + i * n + k], factor); }
      } else {
        for (var i = k + 2u; i < n; i = i + 1u) { work[wb + i] = ${ZERO}; }
      }
      shared_tau = tau;
    }
    storageBarrier();  // the vector in work
    let tau = workgroupUniformLoad(&shared_tau);
    // from the left, H := (I - conj(tau) v v^H) H, on columns k..n-1
    for (var j = k + lid; j < n; j = j + ${WG}u) {
      var s = ${ZERO};
      for (var i = k + 1u; i < n; i = i + 1u) { s = s + mul(conj(work[wb + i]), a[base + i * n + j]); }
      s = mul(conj(tau), s);
      for (var i = k + 1u; i < n; i = i + 1u) { a[base + i * n + j] = a[base + i * n + j] - mul(s, work[wb + i]); }
    }
    storageBarrier();
    // from the right, H := H (I - tau v v^H) and Z := Z (I - tau v v^H), on every row
    for (var i = lid; i < 2u * n; i = i + ${WG}u) {
      let row = i % n;
      var s = ${ZERO};
      for (var l = k + 1u; l < n; l = l + 1u) {
        let e = select(z[base + row * n + l], a[base + row * n + l], i < n);
        s = s + mul(e, work[wb + l]);
      }
      s = mul(s, tau);
      for (var l = k + 1u; l < n; l = l + 1u) {
        let d = mul(s, conj(work[wb + l]));
        if (i < n) { a[base + row * n + l] = a[base + row * n + l] - d; } else { z[base + row * n + l] = z[base + row * n + l] - d; }
      }
    }
    storageBarrier();
    if (lid == 0u) { for (var i = k + 2u; i < n; i = i + 1u) { a[base + i * n + k] = ${ZERO}; } }
    storageBarrier();
  }

  // 2. QR iterations on the active block [lo, hi]
  var hi = n;  // one past the last unconverged row
  var iters = 0u;
  var failed = 0u;
  if (lid == 0u) { shared_hi = n; }
  workgroupBarrier();
  loop {
    if (lid == 0u) {
      let h = shared_hi;
      // deflate: find the last negligible subdiagonal element of the active block
      var lo = 0u;
      if (h > 0u) {
        for (var l = h - 1u; l > 0u; l = l - 1u) {
          let sub = mag(a[base + l * n + l - 1u]);
          let near = mag(a[base + (l - 1u) * n + l - 1u]) + mag(a[base + l * n + l]);
          if (sub <= ${EPS} * near || sub < ${TINY}) {
            a[base + l * n + l - 1u] = ${ZERO};
            lo = l;
            break;
          }
        }
      }
      shared_lo = lo;
    }
    storageBarrier();
    hi = workgroupUniformLoad(&shared_hi);
    let lo = workgroupUniformLoad(&shared_lo);
    if (hi == 0u) { break; }
    if (lo + 1u >= hi) {  // a 1 x 1 block: one eigenvalue found
      if (lid == 0u) { shared_hi = hi - 1u; }
      iters = 0u;
      workgroupBarrier();
      if (hi - 1u == 0u) { break; }
      continue;
    }
    iters = iters + 1u;
    if (iters > P[2]) { failed = 1u; break; }
    if (lid == 0u) {
      // the shift: the eigenvalue of the trailing 2 x 2 block nearer its last diagonal element
      let p = hi - 2u; let q = hi - 1u;
      let aa = a[base + p * n + p]; let bb = a[base + p * n + q];
      let cc = a[base + q * n + p]; let dd = a[base + q * n + q];
      let half = scale(aa - dd, 0.5);
      let root = sqrt_${C}(mul(half, half) + mul(bb, cc));
      let mid = scale(aa + dd, 0.5);
      var mu = select(mid - root, mid + root, mag(mid + root - dd) < mag(mid - root - dd));
      if (iters % 10u == 0u) {  // an exceptional shift breaks cycles
        mu = dd + from_re(${ABS}(re(cc)) + select(${RZERO}, ${ABS}(re(a[base + p * n + p - 1u])), p > lo));
      }
      work[wb + 2u * n - 1u] = mu;
      for (var i = lo; i < hi; i = i + 1u) { a[base + i * n + i] = a[base + i * n + i] - mu; }
    }
    storageBarrier();
    // R = G_{hi-2} ... G_lo (H - mu I): rotations of rows k, k+1 (on columns k..n-1, for all of T)
    for (var k = lo; k + 1u < hi; k = k + 1u) {
      if (lid == 0u) {
        let g = givens(a[base + k * n + k], a[base + (k + 1u) * n + k]);
        work[wb + 2u * k] = g[0]; work[wb + 2u * k + 1u] = g[1];
      }
      storageBarrier();
      let c = re(work[wb + 2u * k]); let s = work[wb + 2u * k + 1u];
      for (var j = k + lid; j < n; j = j + ${WG}u) {
        let u = a[base + k * n + j]; let v = a[base + (k + 1u) * n + j];
        a[base + k * n + j] = scale(u, c) + mul(s, v);
        a[base + (k + 1u) * n + j] = scale(v, c) - mul(conj(s), u);
      }
      storageBarrier();
    }
    // H := R G_lo^H ... G_{hi-2}^H + mu I, and Z := Z G^H: columns k, k+1 (rows 0..k+1 of H, all of Z)
    for (var k = lo; k + 1u < hi; k = k + 1u) {
      let c = re(work[wb + 2u * k]); let s = work[wb + 2u * k + 1u];
      for (var i = lid; i < 2u * n; i = i + ${WG}u) {
        let row = i % n;
        if (i < n && row > k + 1u) { continue; }
        var u: ${T}; var v: ${T};
        if (i < n) { u = a[base + row * n + k]; v = a[base + row * n + k + 1u]; }
        else { u = z[base + row * n + k]; v = z[base + row * n + k + 1u]; }
        let nu = scale(u, c) + mul(v, conj(s));
        let nv = scale(v, c) - mul(u, s);
        if (i < n) { a[base + row * n + k] = nu; a[base + row * n + k + 1u] = nv; }
        else { z[base + row * n + k] = nu; z[base + row * n + k + 1u] = nv; }
      }
      storageBarrier();
    }
    if (lid == 0u) {
      let mu = work[wb + 2u * n - 1u];
      for (var i = lo; i < hi; i = i + 1u) { a[base + i * n + i] = a[base + i * n + i] + mu; }
    }
    storageBarrier();
  }
  if (lid == 0u) { info[b] = failed; }
  for (var i = lid; i < n; i = i + ${WG}u) { w[b * n + i] = a[base + i * n + i]; }
  storageBarrier();

  // 3. eigenvectors of T (upper triangular) in the columns of x, then V = Z X, normalised
  var norm_t = ${RZERO};
  for (var t = 0u; t < n * n; t = t + 1u) { norm_t = max(norm_t, mag(a[base + t])); }  // every thread
  let smallest = max(${EPS} * norm_t, ${TINY});
  for (var k = lid; k < n; k = k + ${WG}u) {
    let lambda = a[base + k * n + k];
    for (var j = k + 1u; j < n; j = j + 1u) { x[base + j * n + k] = ${ZERO}; }
    x[base + k * n + k] = ${ONE};
    for (var jj = k; jj > 0u; jj = jj - 1u) {
      let j = jj - 1u;
      var s = ${ZERO};
      for (var l = j + 1u; l <= k; l = l + 1u) { s = s + mul(a[base + j * n + l], x[base + l * n + k]); }
      var d = a[base + j * n + j] - lambda;
      if (mag(d) < smallest) { d = from_re(smallest); }
      let xj = -div(s, d);
      x[base + j * n + k] = xj;
      // a repeated eigenvalue (a Jordan block) divides by ``smallest`` at every step, and the
      // vector overflowed (NaN in an 8 x 8 float32 one): past 1 / eps it is scaled back to one
      // (it is normalised below), so that the next step, at most n |T| / smallest times larger,
      // stays in range, as LAPACK's ztrevc rescales
      if (mag(xj) > ${RONE} / ${EPS}) {
        let shrink = ${RONE} / mag(xj);
        for (var l = j; l <= k; l = l + 1u) { x[base + l * n + k] = scale(x[base + l * n + k], shrink); }
      }
    }
  }
  storageBarrier();
  // V = Z X, written over a: T is no longer needed
  for (var t = lid; t < n * n; t = t + ${WG}u) {
    let i = t / n; let k = t % n;
    var s = ${ZERO};
    for (var l = 0u; l <= k; l = l + 1u) { s = s + mul(z[base + i * n + l], x[base + l * n + k]); }
    a[base + t] = s;
  }
  storageBarrier();
  for (var k = lid; k < n; k = k + ${WG}u) {
    var big = ${RZERO}; var at = 0u;
    for (var i = 0u; i < n; i = i + 1u) { let m = mag(a[base + i * n + k]); if (m > big) { big = m; at = i; } }
    var total = ${RZERO};
    if (big > ${RZERO}) {
      for (var i = 0u; i < n; i = i + 1u) { total = total + mag2(scale(a[base + i * n + k], ${RONE} / big)); }
    }
    // unit norm, and the largest element real: multiply by conj(phase) / norm
    let lead = a[base + at * n + k];
    let turn = select(${ONE}, scale(conj(lead), ${RONE} / mag(lead)), big > ${RZERO});
    let inv = select(${RONE}, ${RONE} / (big * ${SQRT}(total)), big > ${RZERO});
    for (var i = 0u; i < n; i = i + 1u) { x[base + i * n + k] = scale(mul(a[base + i * n + k], turn), inv); }
  }
  if (P[3] == 0u) { return; }

  // 4. A real matrix (P[3] = 1): its eigenvalues come in exact conjugate pairs, and its real ones
  // are real, as LAPACK's dgeev gives them; the complex QR steps above leave each within rounding
  // of that. An eigenvalue pairs with the one of opposite imaginary sign nearest its conjugate, if
  // that is nearer than the real axis; both become the pair's mean (the same sums from either
  // side), and the vector of the one below the axis the conjugate of the other's. One with no
  // partner is real (a real matrix has no other kind), its vector real of unit norm: a bound on
  // its imaginary part had left 1 in 200 random 6 x 6 ones at 1e-15 from the axis.
  storageBarrier();
  for (var k = lid; k < n; k = k + ${WG}u) {
    let l = w[b * n + k];
    var value = l;
    var nearest = ${ABS}(im(l));
    var partner = k;
    for (var j = 0u; j < n && im(l) != ${RZERO}; j = j + 1u) {
      let m = w[b * n + j];
      let opposite = im(m) != ${RZERO} && (im(m) < ${RZERO}) != (im(l) < ${RZERO});
      if (j != k && opposite && mag(m - conj(l)) < nearest) { nearest = mag(m - conj(l)); partner = j; }
    }
    if (partner != k) {
      let m = w[b * n + partner];
      let above = select(m, l, im(l) > ${RZERO});
      let below = select(l, m, im(l) > ${RZERO});
      let mean = ${T}((re(above) + re(below)) * 0.5, (im(above) - im(below)) * 0.5);
      value = select(conj(mean), mean, im(l) > ${RZERO});
      if (im(l) < ${RZERO}) {
        for (var i = 0u; i < n; i = i + 1u) { x[base + i * n + k] = conj(x[base + i * n + partner]); }
      }
    } else {
      value = from_re(re(l));
      var total = ${RZERO};
      for (var i = 0u; i < n; i = i + 1u) { total = total + re(x[base + i * n + k]) * re(x[base + i * n + k]); }
      let inv = select(${RONE}, ${RONE} / ${SQRT}(total), total > ${RZERO});
      for (var i = 0u; i < n; i = i + 1u) { x[base + i * n + k] = from_re(re(x[base + i * n + k]) * inv); }
    }
    work[wb + k] = value;
  }
  storageBarrier();
  for (var k = lid; k < n; k = k + ${WG}u) { w[b * n + k] = work[wb + k]; }
}
