// Values back from radix-sort keys (the inverse of make_key in sort_keys.wgsl).
// P: total, o_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> k: array<u32>;

fn from_key(k: vec2<u32>) -> ${T} { ${VALUE} }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  o[P[1] + i] = from_key(vec2<u32>(k[i * ${NW}u], k[i * ${NW}u + ${NW}u - 1u]));
}
