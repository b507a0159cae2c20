// Radix-sort keys of a contiguous (rows, n) input: ${NW} u32 words per element, least
// significant first, whose unsigned order is the order wanted (make_key comes from Python);
// with P[3] != 0, also each element's index within its row, the payload argsort returns.
// P: total, n, a_base, payload
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> k: array<u32>;
@group(0) @binding(2) var<storage, read_write> p: array<u32>;
@group(0) @binding(3) var<storage, read> a: array<${T}>;

fn make_key(v: ${T}) -> vec2<u32> { ${KEY} }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  let key = make_key(a[P[2] + i]);
  for (var w = 0u; w < ${NW}u; w = w + 1u) { k[i * ${NW}u + w] = key[w]; }
  if (P[3] != 0u) { p[i] = i % P[1]; }
}
