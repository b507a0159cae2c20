// One pass of the radix sort (see radix_count.wgsl): moves each key (and its payload) to its
// place. Thread t holds the ${IPT} consecutive keys t*${IPT}.. of its tile, so ranks within
// the tile follow positions and the sort is stable. c[d * ${WG} + t] counts digit d in
// thread t's keys; its exclusive scan in that (digit-major) order gives each thread the rank
// of its first key of each digit. No subgroup operations: this runs on any adapter.
// The per-key parts (loading keys, payloads and digits into registers and counting them; moving
// each key to its place) come unrolled from Python, a variable per key: NVIDIA's compiler keeps
// arrays indexed by a loop counter in local memory.
// P: n, rows, tiles, word, shift, payload; offsets: radix_count's counts, each (row, digit)
// scanned over its tiles
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ko: array<u32>;
@group(0) @binding(2) var<storage, read_write> po: array<u32>;
@group(0) @binding(3) var<storage, read> ki: array<u32>;
@group(0) @binding(4) var<storage, read> pi: array<u32>;
@group(0) @binding(5) var<storage, read> offsets: array<u32>;
var<workgroup> c: array<u32, ${COUNTERS}>;
var<workgroup> t: array<u32, ${WG}>;
var<workgroup> tile_start: array<u32, 16>;
var<workgroup> out_start: array<u32, 16>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let tiles = P[2];
  let w = wid.y * nwg.x + wid.x;
  if (w >= P[1] * tiles) { return; }
  let row = w / tiles; let tile = w % tiles;
  for (var d = 0u; d < 16u; d = d + 1u) { c[d * ${WG}u + lid] = 0u; }
  let first = tile * ${TILE}u + lid * ${IPT}u;
${LOAD}
  workgroupBarrier();
  var sum = 0u;
  for (var e = 0u; e < 16u; e = e + 1u) {
    let v = c[lid * 16u + e];
    c[lid * 16u + e] = sum;
    sum = sum + v;
  }
  t[lid] = sum;
  workgroupBarrier();
  for (var off = 1u; off < ${WG}u; off = off << 1u) {
    var y = 0u;
    if (lid >= off) { y = t[lid - off]; }
    workgroupBarrier();
    t[lid] = t[lid] + y;
    workgroupBarrier();
  }
  var before = 0u;
  if (lid > 0u) { before = t[lid - 1u]; }
  for (var e = 0u; e < 16u; e = e + 1u) { c[lid * 16u + e] = c[lid * 16u + e] + before; }
  workgroupBarrier();
  if (lid < 16u) {
    tile_start[lid] = c[lid * ${WG}u];
    var o = row * n;  // the row, then every smaller digit of the row, then this digit's earlier tiles
    for (var e = 0u; e < lid; e = e + 1u) { o = o + offsets[(row * 16u + e) * tiles + tiles - 1u]; }
    if (tile > 0u) { o = o + offsets[(row * 16u + lid) * tiles + tile - 1u]; }
    out_start[lid] = o;
  }
  workgroupBarrier();
${SCATTER}
}
