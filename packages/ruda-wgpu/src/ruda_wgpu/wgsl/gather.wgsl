// o[i] = x[at(c)] for every index c of the result (rank ${RANK}, row-major i), where
//   at(c) = x_base + sum_d c[d] * xs[d] + fix(ix[ix_base + sum_d c[d] * is[d]]) * x_step
// and fix adds n to a negative index when n != 0. take, take_along_axis and integer-array
// indexing are all this gather with other strides (zero strides broadcast). With a bounds check
// (gather() fills in its condition), an index outside [-n, n), compared in the index's own width,
// sets bad[0] instead.
// P: total, x_base, ix_base, n, x_step, shape[R], xs[R], is[R]
@group(0) @binding(0) var<storage, read> P: array<u32, ${WORDS}>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> x: array<${T}>;
@group(0) @binding(3) var<storage, read> ix: array<${IT}>;
${CHECK_BINDING}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  var r = i;
  var at = bitcast<i32>(P[1]);
  var ia = bitcast<i32>(P[2]);
  for (var d = ${RANK}; d > 0; d = d - 1) {
    let k = u32(d - 1);
    let c = i32(r % param(5u + k));
    r = r / param(5u + k);
    at = at + c * bitcast<i32>(param(5u + ${RANK}u + k));
    ia = ia + c * bitcast<i32>(param(5u + 2u * ${RANK}u + k));
  }
  let raw = ix[u32(ia)];
  ${CHECK}
  var v = i32(raw);
  if (v < 0 && P[3] != 0u) { v = v + i32(P[3]); }
  o[i] = x[u32(at + v * bitcast<i32>(P[4]))];
}
