// Inclusive scan of each row of a contiguous (rows, n) input by one workgroup per row: chunks
// of ${TILE} elements in turn, each scanned like a tile of scan_tiles.wgsl and offset by the
// running total of the chunks before it. One dispatch, for rows short enough that a single
// workgroup gets through them quickly (the tiled scan is for long rows).
// P: n, rows, a_base, o_base, o_stride
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${ACC}>;
@group(0) @binding(2) var<storage, read> a: array<${SRC}>;
var<workgroup> t: array<${ACC}, ${WG}>;

fn combine(x: ${ACC}, y: ${ACC}) -> ${ACC} { return ${COMBINE}; }
fn load(v: ${SRC}) -> ${ACC} { return ${LOAD}; }
fn store(x: ${ACC}) -> ${ACC} { return ${STORE}; }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0];
  let row = wid.y * nwg.x + wid.x;
  if (row >= P[1]) { return; }
  var carry: ${ACC} = ${IDENTITY};
  let a_row = P[2] + row * n; let o_row = P[3] + row * P[4];
  for (var start = 0u; start < n; start = start + ${TILE}u) {
    let first = start + lid * ${IPT}u;
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
    var prefix = carry;
    if (lid > 0u) { prefix = combine(carry, t[lid - 1u]); }
    ${WRITE_VALUES}
    carry = combine(carry, t[${WG}u - 1u]);
    workgroupBarrier();
  }
}
