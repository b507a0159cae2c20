// argmax/argmin of each row of a contiguous (m, k) input, in g parts per row: one workgroup
// per (row, part) keeps the best (value, index) pair of its part, a tree in workgroup memory
// combines the threads' pairs, and a later pass combines the parts (P[5] == 0: the input is
// then pairs, with their indices in ai). better() prefers NaN, then the larger (argmax) or
// smaller (argmin) value, then the lower index, so the first occurrence wins as in NumPy.
// P: m, k, g, a_base, w0, first_pass
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ov: array<${T}>;
@group(0) @binding(2) var<storage, read_write> oi: array<${OI}>;
@group(0) @binding(3) var<storage, read> a: array<${T}>;
@group(0) @binding(4) var<storage, read> ai: array<u32>;
var<workgroup> tv: array<${T}, ${WG}>;
var<workgroup> ti: array<u32, ${WG}>;

const NONE = 0xffffffffu;

fn better(v: ${T}, i: u32, w: ${T}, j: u32) -> bool { ${BETTER} }
// the index as the pass writes it: u32 between passes, the result's dtype in the last
fn to_index(i: u32) -> ${OI} { return ${TO_INDEX}; }
// the thread's best pair (bv, bi) becomes (v, i) where that is better
fn keep(bv: ptr<function, ${T}>, bi: ptr<function, u32>, v: ${T}, i: u32) {
  if (*bi == NONE || better(v, i, *bv, *bi)) { *bv = v; *bi = i; }
}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let k = P[1]; let g = P[2];
  let w = P[4] + wid.y * nwg.x + wid.x;
  let row = w / g; let part = w % g;
  let chunk = (k + g - 1u) / g;
  let lo = min(part * chunk, k); let hi = min(lo + chunk, k);
  var bv: ${T};
  var bi = NONE;
  if (row < m) {
    let base = P[3] + row * k;
    let first = P[5] != 0u;
    var j = lo + lid;
    // four elements a thread at a time: their loads are in flight together rather than one
    // after the other (better() orders pairs fully, so the order they are kept in is free)
    for (; j + 3u * ${WG}u < hi; j = j + 4u * ${WG}u) {
      let j1 = j + ${WG}u; let j2 = j1 + ${WG}u; let j3 = j2 + ${WG}u;
      let v0 = a[base + j]; let v1 = a[base + j1]; let v2 = a[base + j2]; let v3 = a[base + j3];
      var i0 = j; var i1 = j1; var i2 = j2; var i3 = j3;
      if (!first) { i0 = ai[base + j]; i1 = ai[base + j1]; i2 = ai[base + j2]; i3 = ai[base + j3]; }
      keep(&bv, &bi, v0, i0); keep(&bv, &bi, v1, i1); keep(&bv, &bi, v2, i2); keep(&bv, &bi, v3, i3);
    }
    for (; j < hi; j = j + ${WG}u) {
      var i = j;
      if (!first) { i = ai[base + j]; }
      keep(&bv, &bi, a[base + j], i);
    }
  }
  tv[lid] = bv; ti[lid] = bi;
  workgroupBarrier();
  for (var s = ${WG}u / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let j = ti[lid + s];
      if (j != NONE && (ti[lid] == NONE || better(tv[lid + s], j, tv[lid], ti[lid]))) {
        tv[lid] = tv[lid + s]; ti[lid] = j;
      }
    }
    workgroupBarrier();
  }
  if (lid == 0u && row < m) { ov[row * g + part] = tv[0]; oi[row * g + part] = to_index(ti[0]); }
}
