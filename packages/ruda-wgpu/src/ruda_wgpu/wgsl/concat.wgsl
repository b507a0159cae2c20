// concat of ${K} parts in one dispatch: o[o_base + sum_d c[d] * os[d]] = part k at c for every
// index c of the result (rank ${RANK}, row-major i), where part k covers the positions
// start[k] <= c[${AXIS}] < start[k + 1] of the joined axis (c[${AXIS}] - start[k] in the part),
// read at base[k] + sum_d c[d] * s_k[d] and converted to the result's dtype. A part a dispatch
// had cost a concat of two small arrays twice the host's time.
// P: total, o_base, start[K], shape[R], os[R], then per part: base, s[R]
@group(0) @binding(0) var<storage, read> P: array<u32, ${WORDS}>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
${BINDINGS}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  let shape_at = 2u + ${K}u;
  var c: array<u32, ${RANK}>;
  var r = i;
  var at = bitcast<i32>(P[1]);
  for (var d = ${RANK}; d > 0; d = d - 1) {
    let k = u32(d - 1);
    c[k] = r % param(shape_at + k);
    r = r / param(shape_at + k);
    at = at + i32(c[k]) * bitcast<i32>(param(shape_at + ${RANK}u + k));
  }
  var part = 0u;
  for (var k = 1u; k < ${K}u; k = k + 1u) {
    if (c[${AXIS}] >= param(2u + k)) { part = k; }
  }
  c[${AXIS}] = c[${AXIS}] - param(2u + part);
  let words = shape_at + 2u * ${RANK}u + part * (1u + ${RANK}u);
  var src = bitcast<i32>(param(words));
  for (var k = 0u; k < ${RANK}u; k = k + 1u) {
    src = src + i32(c[k]) * bitcast<i32>(param(words + 1u + k));
  }
  switch part {
${READS}
    default: {}
  }
}
