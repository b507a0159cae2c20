// Register-blocked matmul of batches (B, M, K) @ (B, K, N) in ${T}: a workgroup of
// 16 x 16 threads computes a ${BM} x ${BM} block of the output, each thread ${R} x ${R} of its
// elements (rows ty + 16 i, columns tx + 16 j, so that neighbouring threads store neighbouring
// columns and read neighbouring words of workgroup memory). The K axis goes in steps of ${BK}:
// both tiles are loaded into workgroup memory, A transposed so that a step reads one row of each;
// every product then comes from registers. Out-of-range rows, columns and k read as zero.
// The per-thread parts (initialisation, one k step, the stores) come unrolled from Python, every
// register a variable of its own: NVIDIA's compiler kept arrays indexed by loop counters in local
// memory (0.75 TFLOP/s on the H200). So do the tiles' element type and where an element of row r
// (column c) of a k step sits in them: with ${TILE} a vec4, a thread's 4 rows ty + 16 i, i = 4 q ...
// 4 q + 3, are one vec4 (and its columns too), so that a k step reads 2 R / 4 vectors of workgroup
// memory rather than 2 R words, neighbouring threads reading neighbouring vectors.
// A and B are strided: P holds the strides of their outer and inner batch, rows and columns
// (product z of the batch takes outer matrix z / inner and inner one z % inner); where their
// matrices start and their elements' offsets leave out the strides that are 1 (see
// MatmulLayout). Which tile element a thread loads follows the layout too: neighbouring threads
// load neighbouring elements in memory, along k for A and along n for B, or down the columns of
// a transposed operand.
// P: M, K, N, first batch, A base, B base, inner, A's strides, B's strides, the K of each
// outer matrix's last inner product (the bases read k)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> b: array<${T}>;
// A's tile as [k][row] (padded against bank conflicts on the transposed stores), B's as [k][column]
var<workgroup> ta: array<${TILE}, ${BK} * ${ROW}>;
var<workgroup> tb: array<${TILE}, ${BK} * ${ROW}>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let m = P[0]; let n = P[2];
  let batch = P[3] + wid.z;
  let row0 = wid.y * ${BM}u; let col0 = wid.x * ${BM}u;
  ${BASES}
${INIT}
  for (var k0 = 0u; k0 < k; k0 = k0 + ${BK}u) {
    // ${BM} x ${BK} of A and ${BK} x ${BM} of B, (${BM} * ${BK}) / 256 elements a thread each
    for (var e = li; e < ${BM}u * ${BK}u; e = e + 256u) {
      ${A_ELEMENT}
      let gr = row0 + r; let gc = k0 + c;
      ${AT_A} = select(${ZERO}, a[abase + ${A_OFFSET}], gr < m && gc < k);
      ${B_ELEMENT}
      let gk = k0 + br; let gn = col0 + bc;
      ${AT_B} = select(${ZERO}, b[bbase + ${B_OFFSET}], gk < k && gn < n);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < ${BK}u; kk = kk + 1u) {
      let ka = kk * ${ROW}u + lid.y; let kb = kk * ${ROW}u + lid.x;
${STEP}
    }
    workgroupBarrier();
  }
  let obase = batch * m * n;
${STORE}
}
