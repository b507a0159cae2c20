// One round of the block Jacobi methods applied to whole matrices: with u_t the rotation
// linalg_jacobi_block.wgsl found for pair t of blocks (W = 2 HALF indices, the pair's
// positions) and u the block-diagonal matrix of the u_t in the round's pairing, v becomes v u,
// and a becomes u^H a u (ONE_SIDED == 0, eigh) or a u (ONE_SIDED == 1, svd). One workgroup per
// tile of W x W entries, each tile read and written by its workgroup alone (so in place):
//  eigh: the tile of a in the positions of pairs (tx, ty), tx <= ty, u_tx^H a[tx, ty] u_ty,
//    written to its mirror (ty, tx) too, conjugated and transposed, so that a stays exactly
//    Hermitian;
//  svd: the tile of a in rows W k to W k + W - 1 and the positions of pair ty, a[k, ty] u_ty;
//  both: the tile of v in rows W k to W k + W - 1 and the positions of pair ty, v[k, ty] u_ty.
// Entries past n (or m) stay out (zeros in the tile; u is the identity there).
// P: n, matrices, round, row tiles of v (n / W rounded up), m, row tiles of a (svd)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> v: array<${T}>;
@group(0) @binding(3) var<storage, read> u: array<${T}>;
const PAIRS = ${PAIRS}u;
const W = ${W}u;
const HALF = ${W}u / 2u;
// the entries of a tile each thread computes (W x W is a multiple of the workgroup's size)
const PER = ${W}u * ${W}u / ${WG}u;
var<workgroup> x: array<${T}, ${W} * ${W}>;
var<workgroup> uy: array<${T}, ${W} * ${W}>;
var<workgroup> ux: array<${T}, ${W} * ${W}>;
${FIELD}
${ROTATION}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let r = P[2];
  let m = P[4];
  var a_tiles = PAIRS * (PAIRS + 1u) / 2u;
  if (${ONE_SIDED} == 1u) { a_tiles = P[5] * PAIRS; }
  let items = a_tiles + PAIRS * P[3];
  let g = wid.y * nwg.x + wid.x;
  let mat = g / items;
  if (mat >= P[1]) { return; }
  let k = g - mat * items;
  // a tile of a in the pairs' positions (eigh), or of the rows of a (svd) or v
  let of_a = k < a_tiles && ${ONE_SIDED} == 0u;
  let of_v = k >= a_tiles;
  var tx = 0u; var ty = 0u; var row0 = 0u;
  if (of_a) {  // k = ty (ty + 1) / 2 + tx, tx <= ty
    ty = u32((sqrt(f32(8u * k + 1u)) - 1.0) / 2.0);
    if (ty * (ty + 1u) / 2u > k) { ty = ty - 1u; }
    if ((ty + 1u) * (ty + 2u) / 2u <= k) { ty = ty + 1u; }
    tx = k - ty * (ty + 1u) / 2u;
  } else {
    let kr = select(k, k - a_tiles, of_v);
    row0 = kr / PAIRS * W; ty = kr % PAIRS;
  }
  let rows = pair(tx, r);
  let columns = pair(ty, r);
  let base = mat * m * n;  // (of a; v's matrices are n x n)
  let vbase = mat * n * n;
  let height = select(m, n, of_v);
  let ubase = mat * PAIRS * W * W;
  for (var e = lid; e < W * W; e = e + ${WG}u) {
    let i = e / W; let j = e % W;
    let gj = block_index(j, columns, HALF);
    var gi = row0 + i;
    if (of_a) { gi = block_index(i, rows, HALF); }
    var value = ${ZERO};
    if (gi < height && gj < n) {
      if (of_v) { value = v[vbase + gi * n + gj]; } else { value = a[base + gi * n + gj]; }
    }
    x[e] = value;
    uy[e] = u[ubase + ty * W * W + e];
    if (of_a) { ux[e] = u[ubase + tx * W * W + e]; }
  }
  workgroupBarrier();
  var out: array<${T}, PER>;
  for (var c = 0u; c < PER; c = c + 1u) {  // x u_ty
    let e = lid + c * ${WG}u;
    let i = e / W; let j = e % W;
    var acc = ${ZERO};
    for (var l = 0u; l < W; l = l + 1u) { acc = acc + mul(x[i * W + l], uy[l * W + j]); }
    out[c] = acc;
  }
  if (of_a) {  // then u_tx^H (x u_ty)
    workgroupBarrier();
    for (var c = 0u; c < PER; c = c + 1u) { x[lid + c * ${WG}u] = out[c]; }
    workgroupBarrier();
    for (var c = 0u; c < PER; c = c + 1u) {
      let e = lid + c * ${WG}u;
      let i = e / W; let j = e % W;
      var acc = ${ZERO};
      for (var l = 0u; l < W; l = l + 1u) { acc = acc + mul(conj(ux[l * W + i]), x[l * W + j]); }
      out[c] = acc;
    }
  }
  for (var c = 0u; c < PER; c = c + 1u) {
    let e = lid + c * ${WG}u;
    let i = e / W; let j = e % W;
    let gj = block_index(j, columns, HALF);
    if (of_a) {  // and the mirror tile, (tx, ty) below the diagonal
      let gi = block_index(i, rows, HALF);
      if (gi < n && gj < n) {
        a[base + gi * n + gj] = out[c];
        if (tx != ty) { a[base + gj * n + gi] = conj(out[c]); }
      }
    } else if (row0 + i < height && gj < n) {
      if (of_v) { v[vbase + (row0 + i) * n + gj] = out[c]; } else { a[base + (row0 + i) * n + gj] = out[c]; }
    }
  }
}
