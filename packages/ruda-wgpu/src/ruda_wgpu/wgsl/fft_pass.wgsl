// One pass of a Stockham FFT over the rows of a contiguous (rows, N) complex input, N a power of
// two. The pass does R-point DFTs in workgroup memory (R a power of two up to ${TILE}): DFT number
// g = (row, i), i < N / R, takes x[i + j N/R] w_{pR}^(jk) for j < R (k = i mod p, p the product of
// the radices of the passes before) and writes its outputs j to y[(i - k) R + k + j p]. After the
// passes, whose radices multiply to N, y holds the DFT in natural order. A workgroup does C = TILE / R
// DFTs side by side, so that its loads (and its stores) touch C neighbouring elements at a time.
// Inside the workgroup: the inputs in bit-reversed order, then log2(R) radix-2 stages in place.
// Twiddles w_N^m come from a two-level table: tab[m mod S] * tab[S + m / S] (S a power of two).
// Every size is a power of two, so indices are computed with shifts and masks, not divisions.
// P: N, R, log2 R, log2 p, log2 C, DFTs in all, in base, out base, S, log2 S, inverse,
//    store j-first, scale (1 or 2 words), log2 N
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> tab: array<${T}>;
var<workgroup> sh: array<${T}, ${TILE}>;

fn cmul(x: ${T}, y: ${T}) -> ${T} { return ${T}(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
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
      sh[(c << lr) + (reverseBits(j) >> (32u - lr))] = v;
    }
  }
  workgroupBarrier();
  let half_r = r >> 1u;
  for (var s = 0u; s < lr; s = s + 1u) {
    let h = 1u << s;
    let ltstep = ln - s - 1u;
    for (var b = lid; b < cols * half_r; b = b + ${WG}u) {
      let c = b >> (lr - 1u); let t = b & (half_r - 1u);
      let th = t & (h - 1u);
      let q = (c << lr) + ((t >> s) << (s + 1u)) + th;
      let u = sh[q];
      let v = cmul(sh[q + h], twiddle(th << ltstep));
      sh[q] = u + v;
      sh[q + h] = u - v;
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
      o[P[7] + (row << ln) + ((i - k) << lr) + k + (j << lp)] = sh[(c << lr) + j] * scale;
    }
  }
}
