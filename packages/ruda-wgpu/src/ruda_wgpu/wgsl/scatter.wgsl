// The inverse of gather.wgsl: x[at(c)] = v[v_base + sum_d c[d] * vs[d]] for every index c of
// the indexed shape (rank ${RANK}), with at(c) as in gather.wgsl. Where several c reach the
// same element, one of the values is kept (which one is not specified, as in the standard).
// Nothing is written when one of the device's check words lo..hi-1 is set: the bounds checks of
// this scatter's indices, run before it (index_check.wgsl), found one out of bounds; the error is
// raised by the next read back to the host.
// P: total, x_base, ix_base, n, x_step, v_base, lo, hi, shape[R], xs[R], is[R], vs[R]
@group(0) @binding(0) var<storage, read> P: array<u32, ${WORDS}>;
@group(0) @binding(1) var<storage, read_write> x: array<${T}>;
@group(0) @binding(2) var<storage, read> v: array<${T}>;
@group(0) @binding(3) var<storage, read> ix: array<${IT}>;
@group(0) @binding(4) var<storage, read> bad: array<u32>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  for (var s = P[6]; s < P[7]; s = s + 1u) {
    if (bad[s] != 0u) { return; }
  }
  var r = i;
  var at = bitcast<i32>(P[1]);
  var ia = bitcast<i32>(P[2]);
  var va = bitcast<i32>(P[5]);
  for (var d = ${RANK}; d > 0; d = d - 1) {
    let k = u32(d - 1);
    let c = i32(r % param(8u + k));
    r = r / param(8u + k);
    at = at + c * bitcast<i32>(param(8u + ${RANK}u + k));
    ia = ia + c * bitcast<i32>(param(8u + 2u * ${RANK}u + k));
    va = va + c * bitcast<i32>(param(8u + 3u * ${RANK}u + k));
  }
  var w = i32(ix[u32(ia)]);
  if (w < 0 && P[3] != 0u) { w = w + i32(P[3]); }
  x[u32(at + w * bitcast<i32>(P[4]))] = v[u32(va)];
}
