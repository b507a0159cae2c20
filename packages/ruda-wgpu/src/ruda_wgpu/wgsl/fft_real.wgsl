// Real FFTs of even length N = 2H through complex FFTs of H points, on contiguous rows. A real
// signal's samples in pairs, z_j = x_2j + i x_2j+1, have the DFT Z; the DFTs of its even and odd
// samples are E_k = (Z_k + conj(Z_(H-k))) / 2 and O_k = -i (Z_k - conj(Z_(H-k))) / 2 (indices
// mod H), and its own DFT is X_k = E_k + w^k O_k, w = exp(-2 pi i / N).
// FORWARD: Z (rows, H) to X_0 .. X_H (rows, H + 1). Otherwise the way back, X (rows, H + 1) to
// Z (rows, H): Z_k = E_k + i O_k with E_k = (X_k + conj(X_(H-k))) / 2 and
// O_k = (X_k - conj(X_(H-k))) conj(w^k) / 2, the imaginary parts of X_0 and X_H ignored as every
// irfft does; the inverse DFT of Z (scaled by 1 / H) holds the signal's sample pairs.
// Twiddles w^m from the two-level table of N: tab[S + m / S] * tab[m mod S].
// P: outputs in all, in base, out base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> tab: array<${T}>;

const H = ${H}u;
const IN_ROW = ${IN_ROW}u;
const OUT_ROW = ${OUT_ROW}u;
const S = ${S}u;              // the fine twiddles' count
const FORWARD = ${FORWARD};
const HALF: ${R} = 0.5;
const WG = ${WG}u;

fn cmul(x: ${T}, y: ${T}) -> ${T} { return ${T}(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }
fn conjugate(x: ${T}) -> ${T} { return ${T}(x.x, -x.y); }

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let g = gid.x + gid.y * groups.x * WG;
  if (g >= P[0]) { return; }
  let row = g / OUT_ROW;
  let k = g - row * OUT_ROW;
  let src = P[1] + row * IN_ROW;
  let w = cmul(tab[S + k / S], tab[k % S]);
  if (FORWARD) {
    let zk = a[src + k % H];
    let zc = conjugate(a[src + (H - k) % H]);
    let even = (zk + zc) * HALF;
    let diff = (zk - zc) * HALF;
    o[P[2] + g] = even + cmul(w, ${T}(diff.y, -diff.x));
  } else {
    var xk = a[src + k];
    var xc = conjugate(a[src + H - k]);
    if (k == 0u) { xk = ${T}(xk.x, 0.0); xc = ${T}(xc.x, 0.0); }
    let even = (xk + xc) * HALF;
    let odd = cmul((xk - xc) * HALF, conjugate(w));
    o[P[2] + g] = even + ${T}(-odd.y, odd.x);
  }
}
