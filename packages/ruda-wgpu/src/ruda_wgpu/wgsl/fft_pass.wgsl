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
// Everything that depends only on the length and the pass is a constant of the kernel, so that
// the compiler unrolls its loops and issues a thread's loads together; sizes are powers of two,
// so indices are shifts and masks.
// P: DFTs in all, in base, out base, scale (1 or 2 words)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> tab: array<${T}>;
var<workgroup> sh: array<${T}, ${TILE}>;

const LN = ${LN}u;            // log2 N
const LR = ${LR}u;            // log2 R
const LP = ${LP}u;            // log2 p
const LC = ${LC}u;            // log2 C
const LS = LN - LR;           // log2 of the stride N / R
const LSTEP = LN - LP - LR;   // log2 of N / (p R)
const R = 1u << LR;
const COLS = 1u << LC;
const S = ${S}u;              // the fine twiddles' count
const LSF = ${LSF}u;          // log2 S
const Q = ${Q}u;              // where the stages' twiddles start
const LM = ${LM}u;            // log2 M - log2 R
const INVERSE = ${INVERSE};
const J_FIRST = ${J_FIRST};   // store point-major (when p < C): runs of p outputs are neighbours

fn cmul(x: ${T}, y: ${T}) -> ${T} { return ${T}(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
fn conj_if_inverse(w: ${T}) -> ${T} { return select(w, ${T}(w.x, -w.y), INVERSE); }
fn twiddle(m: u32) -> ${T} { return conj_if_inverse(cmul(tab[S + (m >> LSF)], tab[m & (S - 1u)])); }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let total = P[0];
  let g0 = (wid.y * nwg.x + wid.x) << LC;
  for (var e = lid; e < COLS * R; e = e + ${WG}u) {
    let j = e >> LC; let c = e & (COLS - 1u); let g = g0 + c;
    if (g < total) {
      let row = g >> LS; let i = g & ((1u << LS) - 1u); let k = i & ((1u << LP) - 1u);
      let v = cmul(a[P[1] + (row << LN) + i + (j << LS)], twiddle((j * k) << LSTEP));
      sh[((reverseBits(j) >> (32u - LR)) << LC) + c] = v;
    }
  }
  workgroupBarrier();
  var lh = 0u;
  if ((LR & 1u) == 1u) {  // a radix-2 stage: pairs of neighbours, no twiddles
    for (var b = lid; b < COLS * (R >> 1u); b = b + ${WG}u) {
      let q = ((b >> LC) << (LC + 1u)) + (b & (COLS - 1u));
      let u = sh[q]; let v = sh[q + COLS];
      sh[q] = u + v;
      sh[q + COLS] = u - v;
    }
    workgroupBarrier();
    lh = 1u;
  }
  // Radix-4 stages: four natural-order DFTs of h points in one block of 4h, holding the inputs
  // with residues 0, 2, 1, 3 (mod 4) in bit-reversed order, become one DFT of 4h points.
  for (; lh < LR; lh = lh + 2u) {
    let h = 1u << lh;
    let hc = h << LC;                    // h positions apart in workgroup memory
    let lstage = LM + LR - lh - 2u;      // w_{4h}^m = tab[Q + (m << lstage)]
    for (var b = lid; b < COLS * (R >> 2u); b = b + ${WG}u) {
      let bt = b >> LC;
      let t = bt & (h - 1u);
      let q = ((((bt >> lh) << (lh + 2u)) + t) << LC) + (b & (COLS - 1u));
      let a0 = sh[q];
      let a2 = cmul(sh[q + hc], conj_if_inverse(tab[Q + ((2u * t) << lstage)]));
      let a1 = cmul(sh[q + 2u * hc], conj_if_inverse(tab[Q + (t << lstage)]));
      let a3 = cmul(sh[q + 3u * hc], conj_if_inverse(tab[Q + ((3u * t) << lstage)]));
      let s02 = a0 + a2; let d02 = a0 - a2; let s13 = a1 + a3; let d13 = a1 - a3;
      // -i d13 forward, +i d13 inverse
      let rot = select(${T}(d13.y, -d13.x), ${T}(-d13.y, d13.x), INVERSE);
      sh[q] = s02 + s13;
      sh[q + hc] = d02 + rot;
      sh[q + 2u * hc] = s02 - s13;
      sh[q + 3u * hc] = d02 - rot;
    }
    workgroupBarrier();
  }
  let scale = ${SCALE};
  for (var e = lid; e < COLS * R; e = e + ${WG}u) {
    let j = select(e >> LC, e & (R - 1u), J_FIRST); let c = select(e & (COLS - 1u), e >> LR, J_FIRST);
    let g = g0 + c;
    if (g < total) {
      let row = g >> LS; let i = g & ((1u << LS) - 1u); let k = i & ((1u << LP) - 1u);
      o[P[2] + (row << LN) + ((i - k) << LR) + k + (j << LP)] = sh[(j << LC) + c] * scale;
    }
  }
}
