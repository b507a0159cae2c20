// Inclusive scan of each row of a contiguous (rows, n) input, in tiles of ${TILE} elements:
// one workgroup per (row, tile); each thread scans ${IPT} consecutive elements in registers,
// then the thread totals are scanned in workgroup memory. Writes each tile's scan to o and
// the tile's total to s[row * tiles + tile], which a second pass scans and adds back.
// P: n, rows, tiles, a_base, o_base, o_stride (elements between rows of o)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${ACC}>;
@group(0) @binding(2) var<storage, read_write> s: array<${ACC}>;
@group(0) @binding(3) var<storage, read> a: array<${SRC}>;
var<workgroup> t: array<${ACC}, ${WG}>;

fn combine(x: ${ACC}, y: ${ACC}) -> ${ACC} { return ${COMBINE}; }
fn load(v: ${SRC}) -> ${ACC} { return ${LOAD}; }
fn store(x: ${ACC}) -> ${ACC} { return ${STORE}; }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let tiles = P[2];
  let w = wid.y * nwg.x + wid.x;
  if (w >= P[1] * tiles) { return; }
  let row = w / tiles; let tile = w % tiles;
  let first = tile * ${TILE}u + lid * ${IPT}u;
  let a_row = P[3] + row * n; let o_row = P[4] + row * P[5];
  // the thread's elements v0, v1, ... (see _scan.unrolled), then their running values
  ${READ_VALUES}
  var acc: ${ACC} = ${IDENTITY};
  ${SCAN_VALUES}
  t[lid] = acc;
  workgroupBarrier();
  for (var off = 1u; off < ${WG}u; off = off << 1u) {
    var y: ${ACC} = ${IDENTITY};
    if (lid >= off) { y = t[lid - off]; }
    workgroupBarrier();
    t[lid] = combine(y, t[lid]);
    workgroupBarrier();
  }
  var prefix: ${ACC} = ${IDENTITY};
  if (lid > 0u) { prefix = t[lid - 1u]; }
  ${WRITE_VALUES}
  if (lid == ${WG}u - 1u) { s[w] = t[lid]; }
}
