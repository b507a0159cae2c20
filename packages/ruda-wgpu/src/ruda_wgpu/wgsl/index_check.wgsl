// Bounds check of an index array: sets bad[slot] when an element of ix (rank ${RANK}, strided) lies
// outside [-n, n), compared in the index's own width (the condition comes from check_in_bounds).
// P: total, ix_base, n, slot (the word of bad to set), shape[R], is[R]
@group(0) @binding(0) var<storage, read> P: array<u32, ${WORDS}>;
@group(0) @binding(1) var<storage, read_write> bad: array<u32>;
@group(0) @binding(2) var<storage, read> ix: array<${IT}>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  var r = i;
  var ia = bitcast<i32>(P[1]);
  for (var d = ${RANK}; d > 0; d = d - 1) {
    let k = u32(d - 1);
    let c = i32(r % param(4u + k));
    r = r / param(4u + k);
    ia = ia + c * bitcast<i32>(param(4u + ${RANK}u + k));
  }
  let raw = ix[u32(ia)];
  if (${OUTSIDE}) { bad[P[3]] = 1u; }
}
