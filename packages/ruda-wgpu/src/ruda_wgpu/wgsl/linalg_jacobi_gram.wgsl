// The Gram matrices of one round of the block svd (linalg_jacobi_block.wgsl with ONE_SIDED ==
// 1), in slices of rows: a workgroup per pair of blocks and slice of rows sums the W x W Gram
// matrix of a's (m x n) columns in both blocks down its slice, a tile of W rows at a time with
// each tile summed first (fewer roundings along each sum), and writes it to gram; the rotating
// kernel adds the slices in order. One workgroup summing all m rows of a pair left most of a
// GPU idle: a round has only n / W pairs.
// P: n, matrices, round, m, tiles of W rows a slice, slices
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> gram: array<${T}>;
const PAIRS = ${PAIRS}u;
const W = ${W}u;
const HALF = ${W}u / 2u;
// the entries of the Gram matrix each thread sums (W x W is a multiple of the workgroup's size)
const PER = ${W}u * ${W}u / ${WG}u;
var<workgroup> q: array<${T}, ${W} * ${W}>;
${FIELD}
${ROTATION}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let m = P[3]; let slices = P[5];
  let g = wid.y * nwg.x + wid.x;
  let mat = g / (PAIRS * slices);
  if (mat >= P[1]) { return; }
  let t = (g / slices) % PAIRS;
  let slice = g % slices;
  let blocks = pair(t, P[2]);
  let base = mat * m * n;
  let k_end = min(m, (slice + 1u) * P[4] * W);
  var acc: array<${T}, PER>;
  for (var c = 0u; c < PER; c = c + 1u) { acc[c] = ${ZERO}; }
  for (var k0 = slice * P[4] * W; k0 < k_end; k0 = k0 + W) {
    for (var c = 0u; c < PER; c = c + 1u) {  // q: a tile of W rows of the pair's columns
      let e = lid + c * ${WG}u;
      let k = k0 + e / W; let gj = block_index(e % W, blocks, HALF);
      var x = ${ZERO};
      if (k < k_end && gj < n) { x = a[base + k * n + gj]; }
      q[e] = x;
    }
    workgroupBarrier();
    for (var c = 0u; c < PER; c = c + 1u) {
      let e = lid + c * ${WG}u;
      let i = e / W; let j = e % W;
      var tile_sum = ${ZERO};
      for (var l = 0u; l < W; l = l + 1u) { tile_sum = tile_sum + mul(conj(q[l * W + i]), q[l * W + j]); }
      acc[c] = acc[c] + tile_sum;
    }
    workgroupBarrier();
  }
  for (var c = 0u; c < PER; c = c + 1u) { gram[g * W * W + lid + c * ${WG}u] = acc[c]; }
}
