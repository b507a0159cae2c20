// One pass of a Stockham FFT over the rows of a contiguous (rows, N) complex input, N a power of
// two. The pass does R-point DFTs in workgroup memory (R a power of two up to ${TILE}): DFT number
// g = (row, i), i < N / R, takes x[i + j N/R] w_{pR}^(jk) for j < R (k = i mod p, p the product of
// the radices of the passes before) and writes its outputs j to y[(i - k) R + k + j p]. After the
// passes, whose radices multiply to N, y holds the DFT in natural order. A workgroup does C = TILE / R
// DFTs side by side, so that its loads (and its stores) touch C neighbouring elements at a time.
// Workgroup memory holds point j of DFT c at j C + c, so that neighbouring threads, which work on
// neighbouring DFTs, touch neighbouring words (no bank conflicts).
// Inside the workgroup: the inputs in bit-reversed order, then decimation-in-time stages in place,
// radix 4 (a radix-2 stage first when log2 R is odd), so log2(R) / 2 barriers rather than log2 R.
// Twiddles w_N^m come from a two-level table: tab[m mod S] * tab[S + m / S] (S a power of two);
// those of the stages, w_R^m, from a third part of the table, w_M^m (M the largest radix) at
// tab[Q + (m << (log2 M - log2 R))], one read each.
// Every size is a power of two, so indices are computed with shifts and masks, not divisions.
// P: N, R, log2 R, log2 p, log2 C, DFTs in all, in base, out base, S, log2 S, inverse,
//    store j-first, scale (1 or 2 words), log2 N, Q, log2 M - log2 R
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> tab: array<${T}>;
var<workgroup> sh: array<${T}, ${TILE}>;

fn cmul(x: ${T}, y: ${T}) -> ${T} { return ${T}(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
fn stage_twiddle(m: u32, inverse: bool) -> ${T} {
  let w = tab[P[15] + m];
  return select(w, ${T}(w.x, -w.y), inverse);
}
fn twiddle(m: u32) -> ${T} {
  let w = cmul(tab[P[8] + (m >> P[9])], tab[m & (P[8] - 1u)]);
  return select(w, ${T}(w.x, -w.y), P[10] != 0u);
}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let r = P[1]; let lr = P[2]; let lp = P[3]; let lc = P[4]; let total = P[5];
  let ln = P[14];
  let cols = 1u << lc;
  let ls = ln - lr;                      // log2 of the stride N / R
  let g0 = (wid.y * nwg.x + wid.x) << lc;
  let lstep = ln - lp - lr;              // log2 of N / (p R)
  let pmask = (1u << lp) - 1u;
  let smask = (1u << ls) - 1u;
  for (var e = lid; e < cols * r; e = e + ${WG}u) {
    let j = e >> lc; let c = e & (cols - 1u); let g = g0 + c;
    if (g < total) {
      let row = g >> ls; let i = g & smask; let k = i & pmask;
      let v = cmul(a[P[6] + (row << ln) + i + (j << ls)], twiddle((j * k) << lstep));
      sh[((reverseBits(j) >> (32u - lr)) << lc) + c] = v;
    }
  }
  workgroupBarrier();
  let inverse = P[10] != 0u;
  var lh = 0u;
  if ((lr & 1u) == 1u) {  // a radix-2 stage: pairs of neighbours, no twiddles
    for (var b = lid; b < cols * (r >> 1u); b = b + ${WG}u) {
      let q = ((b >> lc) << (lc + 1u)) + (b & (cols - 1u));
      let u = sh[q]; let v = sh[q + cols];
      sh[q] = u + v;
      sh[q + cols] = u - v;
    }
    workgroupBarrier();
    lh = 1u;
  }
  // Radix-4 stages: four natural-order DFTs of h points in one block of 4h, holding the inputs
  // with residues 0, 2, 1, 3 (mod 4) in bit-reversed order, become one DFT of 4h points.
  for (; lh < lr; lh = lh + 2u) {
    let h = 1u << lh;
    let hc = h << lc;                    // h positions apart in workgroup memory
    let lstage = P[16] + lr - lh - 2u;   // w_{4h}^m = tab[Q + (m << lstage)]
    for (var b = lid; b < cols * (r >> 2u); b = b + ${WG}u) {
      let bt = b >> lc;
      let t = bt & (h - 1u);
      let q = ((((bt >> lh) << (lh + 2u)) + t) << lc) + (b & (cols - 1u));
      let a0 = sh[q];
      let a2 = cmul(sh[q + hc], stage_twiddle((2u * t) << lstage, inverse));
      let a1 = cmul(sh[q + 2u * hc], stage_twiddle(t << lstage, inverse));
      let a3 = cmul(sh[q + 3u * hc], stage_twiddle((3u * t) << lstage, inverse));
      let s02 = a0 + a2; let d02 = a0 - a2; let s13 = a1 + a3; let d13 = a1 - a3;
      // -i d13 forward, +i d13 inverse
      let rot = select(${T}(d13.y, -d13.x), ${T}(-d13.y, d13.x), inverse);
      sh[q] = s02 + s13;
      sh[q + hc] = d02 + rot;
      sh[q + 2u * hc] = s02 - s13;
      sh[q + 3u * hc] = d02 - rot;
    }
    workgroupBarrier();
  }
  let scale = ${SCALE};
  let j_first = P[11] != 0u;
  for (var e = lid; e < cols * r; e = e + ${WG}u) {
    let j = select(e >> lc, e & (r - 1u), j_first); let c = select(e & (cols - 1u), e >> lr, j_first);
    let g = g0 + c;
    if (g < total) {
      let row = g >> ls; let i = g & smask; let k = i & pmask;
      o[P[7] + (row << ln) + ((i - k) << lr) + k + (j << lp)] = sh[(j << lc) + c] * scale;
    }
  }
}
