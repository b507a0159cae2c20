// One pass of a Stockham FFT over the rows of a contiguous (rows, N) complex input, N a power of
// two. The pass does R-point DFTs (R a power of two): DFT number g = (row, i), i < N / R, takes
// x[i + j N/R] w_{pR}^(jk) for j < R (k = i mod p, p the product of the radices of the passes
// before) and writes its outputs J to y[(i - k) R + k + J p]. After the passes, whose radices
// multiply to N, y holds the DFT in natural order. A workgroup does C DFTs side by side, so that
// its loads (and its stores) touch C neighbouring elements at a time.
//
// Inside the workgroup an R-point DFT is itself a Stockham FFT of STAGES stages, radix R0 first
// and RR after (R = R0 RR^(STAGES - 1)). A thread does one stage's R0- or RR-point DFT in its
// registers (straight-line code the Python side generates, placed below), so values pass through
// workgroup memory only between stages: a 256-point DFT is 16 x 16, one barrier. The first stage
// reads global memory and the last one writes it. Workgroup memory holds point j of DFT c at
// j C + c, so that neighbouring threads, which work on neighbouring DFTs, touch neighbouring words.
// Twiddles w_N^m come from a two-level table: tab[m mod S] * tab[S + m / S] (S a power of two);
// the stages' w_L^e (L at most the largest radix M of the passes) from a third part of the table,
// w_M^m at tab[Q + m].
// Everything that depends only on the length and the pass is a constant of the kernel, so that
// the compiler unrolls its loops and keeps each thread's points in registers.
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
const LR0 = ${LR0}u;          // log2 of the first stage's radix
const LRR = ${LRR}u;          // log2 of the later stages' radix
const STAGES = ${STAGES}u;
const LS = LN - LR;           // log2 of the stride N / R
const LSTEP = LN - LP - LR;   // log2 of N / (p R)
const C = 1u << LC;
const R0 = 1u << LR0;
const RR = 1u << LRR;
const S = ${S}u;              // the fine twiddles' count
const LSF = ${LSF}u;          // log2 S
const Q = ${Q}u;              // where the stages' twiddles start
const LM = ${LM}u;            // log2 M
const INVERSE = ${INVERSE};
const J_FIRST = ${J_FIRST};   // the last stage's threads go point-major (when p < C), so runs of
                              // neighbouring outputs are stored together

fn cmul(x: ${T}, y: ${T}) -> ${T} { return ${T}(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
fn conj_if_inverse(w: ${T}) -> ${T} { return select(w, ${T}(w.x, -w.y), INVERSE); }
fn twiddle(m: u32) -> ${T} { return conj_if_inverse(cmul(tab[S + (m >> LSF)], tab[m & (S - 1u)])); }
// w_L^e for L = 2^ll
fn stage_twiddle(e: u32, ll: u32) -> ${T} { return conj_if_inverse(tab[Q + (e << (LM - ll))]); }

// Input point j of DFT g (g < P[0]), times the pass's twiddle.
fn load(g: u32, j: u32) -> ${T} {
  let row = g >> LS; let i = g & ((1u << LS) - 1u);
  let x = a[P[1] + (row << LN) + i + (j << LS)];
  if (LP == 0u) { return x; }
  return cmul(x, twiddle((j * (i & ((1u << LP) - 1u))) << LSTEP));
}

// Output point J of DFT g (g < P[0]).
fn store(g: u32, J: u32, v: ${T}) {
  let row = g >> LS; let i = g & ((1u << LS) - 1u); let k = i & ((1u << LP) - 1u);
  o[P[2] + (row << LN) + ((i - k) << LR) + k + (J << LP)] = v;
}

${DFTS}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let total = P[0];
  let g0 = (wid.y * nwg.x + wid.x) << LC;
  let scale = ${SCALE};
  // The first stage: R / R0 DFTs of R0 points per DFT, point jb + m R / R0 of each; its outputs,
  // in Stockham order, are points jb R0 + m.
  for (var b = lid; b < (C << (LR - LR0)); b = b + ${WG}u) {
    let c = b & (C - 1u); let jb = b >> LC; let g = g0 + c;
    var v: array<${T}, R0>;
    if (g < total) {
      for (var m = 0u; m < R0; m = m + 1u) { v[m] = load(g, jb + (m << (LR - LR0))); }
    }
    v = dft_first(v);
    if (STAGES == 1u) {
      if (g < total) {
        for (var m = 0u; m < R0; m = m + 1u) { store(g, (jb << LR0) + m, v[m] * scale); }
      }
    } else {
      for (var m = 0u; m < R0; m = m + 1u) { sh[(((jb << LR0) + m) << LC) + c] = v[m]; }
    }
  }
  // The later stages: one RR-point DFT a thread (the workgroup has C R / RR threads). Before a
  // stage, the sub-DFTs done so far have 2^lns points; a thread's inputs are twiddled by
  // w_{2^(lns + LRR)}^(e m) and its outputs land RR-fold further apart.
  var lns = LR0;
  for (var s = 1u; s < STAGES; s = s + 1u) {
    workgroupBarrier();
    let last = s == STAGES - 1u;
    var c = lid & (C - 1u);
    var jb = lid >> LC;
    if (last && J_FIRST) {
      jb = lid & ((1u << (LR - LRR)) - 1u);
      c = lid >> (LR - LRR);
    }
    let e = jb & ((1u << lns) - 1u);
    var v: array<${T}, RR>;
    for (var m = 0u; m < RR; m = m + 1u) { v[m] = sh[((jb + (m << (LR - LRR))) << LC) + c]; }
    for (var m = 0u; m < RR; m = m + 1u) { v[m] = select(cmul(v[m], stage_twiddle(e * m, lns + LRR)), v[m], m == 0u); }
    v = dft_rest(v);
    let base = ((jb >> lns) << (lns + LRR)) + e;
    if (last) {
      let g = g0 + c;
      if (g < total) {
        for (var m = 0u; m < RR; m = m + 1u) { store(g, base + (m << lns), v[m] * scale); }
      }
    } else {
      workgroupBarrier();
      for (var m = 0u; m < RR; m = m + 1u) { sh[((base + (m << lns)) << LC) + c] = v[m]; }
    }
    lns = lns + LRR;
  }
}
