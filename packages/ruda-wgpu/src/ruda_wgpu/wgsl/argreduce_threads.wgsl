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
// in the first pass, ai[at] in later ones; AT the element k of the row (start + k * sK). A
// thread loads four elements at a time, their loads in flight together rather than one after
// the other (better() orders pairs fully, so the order they are kept in is free).
// P: A, K, B, g, base, sA, sK, sB
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ov: array<${T}>;
@group(0) @binding(2) var<storage, read_write> oi: array<${OI}>;
@group(0) @binding(3) var<storage, read> a: array<${T}>;
@group(0) @binding(4) var<storage, read> ai: array<u32>;

fn better(v: ${T}, i: u32, w: ${T}, j: u32) -> bool { ${BETTER} }
// the index as the pass writes it: u32 between passes, the result's dtype in the last
fn to_index(i: u32) -> ${OI} { return ${TO_INDEX}; }
fn element(start: u32, k: u32) -> u32 { return ${AT}; }
fn index_of(k: u32, at: u32) -> u32 { return ${INDEX}; }
// the thread's best pair (bv, bi) becomes (v, i) where that is better
fn keep(bv: ptr<function, ${T}>, bi: ptr<function, u32>, v: ${T}, i: u32) {
  if (better(v, i, *bv, *bi)) { *bv = v; *bi = i; }
}

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let nk = P[1]; let nb = P[2]; let g = P[3];
  let t = gid.y * nwg.x * ${WG}u + gid.x;
  if (t >= P[0] * g * nb) { return; }
  ${SPLIT}
  let start = P[4] + row * P[5] + b * P[7];
  let first = element(start, part);
  var bv = a[first];
  var bi = index_of(part, first);
  var k = part + g;
  for (; k + 3u * g < nk; k = k + 4u * g) {
    let k1 = k + g; let k2 = k1 + g; let k3 = k2 + g;
    let e0 = element(start, k); let e1 = element(start, k1);
    let e2 = element(start, k2); let e3 = element(start, k3);
    let v0 = a[e0]; let v1 = a[e1]; let v2 = a[e2]; let v3 = a[e3];
    keep(&bv, &bi, v0, index_of(k, e0)); keep(&bv, &bi, v1, index_of(k1, e1));
    keep(&bv, &bi, v2, index_of(k2, e2)); keep(&bv, &bi, v3, index_of(k3, e3));
  }
  for (; k < nk; k = k + g) {
    let e = element(start, k);
    keep(&bv, &bi, a[e], index_of(k, e));
  }
  ov[t] = bv; oi[t] = to_index(bi);
}
