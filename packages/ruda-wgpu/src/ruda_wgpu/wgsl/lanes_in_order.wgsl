// Whether the subgroups of a workgroup are runs of consecutive threads, as the scans that add
// the totals of the subgroups before a thread's own assume (Vulkan leaves the mapping to the
// driver): ok[lid] = 1 where thread lid is lane lid % size of a subgroup of a power-of-two size
// from 4 to 128 whose first thread is lid - lane.
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ok: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) size: u32) {
  let first = subgroupMin(lid);
  let sized = size >= 4u && size <= 128u && (size & (size - 1u)) == 0u;
  ok[lid] = select(0u, 1u, sized && lane == lid % size && first == lid - lane && P[0] == 0u);
}
