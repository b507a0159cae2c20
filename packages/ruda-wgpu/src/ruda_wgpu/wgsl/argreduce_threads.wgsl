// argmax/argmin over the middle axis of an (A, K, B) view, a thread per (a, part, b): element
// (a, k, b) lies at base + a*sA + k*sK + b*sB. Each row of K is cut into g interleaved parts
// (part p reads k = p, p + g, ...), so that neighbouring threads read neighbouring elements
// whether they differ in b (B > 1) or in p (B = 1); the (A, g, B) best pairs of the parts are
// written in that order, and a later pass (the input is then pairs, their indices in ai)
// reduces them over g. A workgroup a row (argreduce.wgsl) leaves most of its threads idle
// on short rows, and pays its tree's barriers for every row (on lavapipe rows of 16 took
// seconds for a million of them). better() is argreduce.wgsl's: NaN first, then the larger
// (argmax) or smaller (argmin) value, then the lower index. g <= K: no part is empty.
// SPLIT finds row, part and b of thread t with no more divisions than the layout needs (B or g
// of 1 need none: a CPU adapter divides a lane at a time); INDEX is the index of element at: k
// in the first pass, ai[at] in later ones; AT the element k of the row (start + k * sK).
// P: A, K, B, g, base, sA, sK, sB
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ov: array<${T}>;
@group(0) @binding(2) var<storage, read_write> oi: array<${OI}>;
@group(0) @binding(3) var<storage, read> a: array<${T}>;
@group(0) @binding(4) var<storage, read> ai: array<u32>;

fn better(v: ${T}, i: u32, w: ${T}, j: u32) -> bool { ${BETTER} }
// the index as the pass writes it: u32 between passes, the result's dtype in the last
fn to_index(i: u32) -> ${OI} { return ${TO_INDEX}; }

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let nb = P[2]; let g = P[3];
  let t = gid.y * nwg.x * ${WG}u + gid.x;
  if (t >= P[0] * g * nb) { return; }
  ${SPLIT}
  let start = P[4] + row * P[5] + b * P[7];
  var k = part;
  var at = ${AT};
  var bv = a[at];
  var bi = ${INDEX};
  for (k = part + g; k < P[1]; k = k + g) {
    at = ${AT};
    let v = a[at];
    let i = ${INDEX};
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
  ov[t] = bv; oi[t] = to_index(bi);
}
