// Stream compaction: o[pos[i] - 1] = i for every i whose flag is set, where pos is the
// inclusive scan of the flags (0/1 words), so the set positions come out in order.
// P: total, f_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<u32>;
@group(0) @binding(2) var<storage, read> pos: array<u32>;
@group(0) @binding(3) var<storage, read> f: array<u32>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  if (f[P[1] + i] != 0u) { o[pos[i] - 1u] = i; }
}
