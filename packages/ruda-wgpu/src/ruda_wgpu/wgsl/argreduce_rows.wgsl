// argmax/argmin of each row of a contiguous (m, k) input, one thread a row, for a CPU adapter:
// there a workgroup a row (argreduce.wgsl) pays its tree's barriers for every row, and rows of
// 16 took seconds for a million of them. better() is argreduce.wgsl's: NaN first, then the
// larger (argmax) or smaller (argmin) value, then the lower index.
// P: m, k, a_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ov: array<${T}>;
@group(0) @binding(2) var<storage, read_write> oi: array<u32>;
@group(0) @binding(3) var<storage, read> a: array<${T}>;

fn better(v: ${T}, i: u32, w: ${T}, j: u32) -> bool { ${BETTER} }

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let m = P[0]; let k = P[1];
  let row = gid.y * nwg.x * ${WG}u + gid.x;
  if (row >= m) { return; }
  let start = P[2] + row * k;
  var bv = a[start];
  var bi = 0u;
  for (var j = 1u; j < k; j = j + 1u) {
    let v = a[start + j];
    if (better(v, j, bv, bi)) { bv = v; bi = j; }
  }
  ov[row] = bv; oi[row] = bi;
}
