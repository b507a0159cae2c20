// One pass of a mixed-radix Stockham FFT over the rows of a contiguous (rows, N) complex input,
// N a product of small primes. The pass does R-point DFTs, R any radix: DFT number g = (row, i),
// i < M = N / R, takes x[i + j M] w_{pR}^(jk) for j < R (k = i mod p, p the product of the
// radices of the passes before) and writes its outputs J to y[(i - k) R + k + J p]. After the
// passes, whose radices multiply to N, y holds the DFT in natural order.
// A thread does one DFT in its registers (straight-line code the Python side generates: the
// loads, the DFT and the stores below), reading and writing global memory only, so that any
// radix serves; neighbouring threads take neighbouring i, so their loads touch neighbouring words.
// Twiddles w_N^m come from a two-level table: tab[S + m / S] * tab[m mod S].
// P: DFTs in all, in base, out base, scale (1 or 2 words)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> tab: array<${T}>;

const N = ${N}u;
const M = ${M}u;              // N / R: the stride of a DFT's inputs
const R = ${R}u;
const PS = ${PS}u;            // p: the stride of a DFT's outputs
const STEP = ${STEP}u;        // N / (p R): w_{pR} = w_N^STEP
const S = ${S}u;              // the fine twiddles' count
const INVERSE = ${INVERSE};
const WG = ${WG}u;

fn cmul(x: ${T}, y: ${T}) -> ${T} { return ${T}(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
fn twiddle(m: u32) -> ${T} {
  let w = cmul(tab[S + m / S], tab[m % S]);
  return select(w, ${T}(w.x, -w.y), INVERSE);
}

${DFT}

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let g = gid.x + gid.y * groups.x * WG;
  if (g >= P[0]) { return; }
  let row = g / M;
  let i = g - row * M;
  let k = i % PS;
  let src = P[1] + row * N + i;
  var v: array<${T}, ${R}>;
${LOADS}
  let y = dft(v);
  let dst = P[2] + row * N + (i - k) * R + k;
  let scale = ${SCALE};
${STORES}
}
