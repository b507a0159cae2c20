// One pass of a stable LSD radix sort of the rows of a (rows, n) array of keys, 8 bits at a
// time: the histogram of the pass's digit in each tile of ${TILE} keys, written as
// counts[(row * 256 + digit) * tiles + tile]. Scanned along the tiles, each (row, digit) gives
// radix_scatter.wgsl the place of every tile's keys of that digit.
// The first pass makes the keys from the values (key_at, as in radix_scatter.wgsl).
// P: n, rows, tiles, word, shift, in_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
@group(0) @binding(2) var<storage, read> ki: array<${KIN}>;
var<workgroup> h: array<atomic<u32>, 256>;

fn make_key(v: ${T}) -> vec2<u32> { ${KEY} }
fn key_at(e: u32) -> vec2<u32> { ${KEY_AT} }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let tiles = P[2];
  let w = wid.y * nwg.x + wid.x;
  if (w >= P[1] * tiles) { return; }
  let row = w / tiles; let tile = w % tiles;
  for (var d = lid; d < 256u; d = d + ${WG}u) { atomicStore(&h[d], 0u); }
  workgroupBarrier();
  // the thread's keys q * ${WG} + lid of the tile, all loaded before the first is counted, so
  // that their loads are in flight together
${COUNT}
  workgroupBarrier();
  for (var d = lid; d < 256u; d = d + ${WG}u) {
    counts[(row * 256u + d) * tiles + tile] = atomicLoad(&h[d]);
  }
}
