// One pass of the radix sort (see radix_count.wgsl): moves each key (and its payload) to its
// place. The tile is first sorted by the pass's 8-bit digit in workgroup memory, stably, by two
// 4-bit splits (low half, then high half); then consecutive threads store consecutive keys, so
// the stores of a digit's run are coalesced.
// A split: thread t holds the ${IPT} consecutive keys t*${IPT}.. of the tile, so ranks follow
// positions and the split is stable. c[d * ${WG} + t] counts digit d in thread t's keys; its
// exclusive scan in that (digit-major) order gives each thread the rank of its first key of
// each digit. Workgroup arrays are padded by one word in 32 (pad()) so that threads reading
// ${IPT} apart do not meet in one bank. The scans over the workgroup take subgroup operations
// where the device has them (see _sorting.exclusive_scan).
// The per-key parts come unrolled from Python, a variable per key: NVIDIA's compiler keeps
// arrays indexed by a loop counter in local memory. The first pass makes the keys from the
// values (key_at) and the row indices argsort returns (payload_at); the last one writes what
// the caller wants (put): the values back from the keys for sort, the indices for argsort.
// P: n, rows, tiles, word, shift, in_base, out_base; offsets: radix_count's counts, each
// (row, digit) scanned over its tiles (inclusive)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> ko: array<${KOUT}>;
@group(0) @binding(2) var<storage, read_write> po: array<u32>;
@group(0) @binding(3) var<storage, read> ki: array<${KIN}>;
@group(0) @binding(4) var<storage, read> pi: array<u32>;
@group(0) @binding(5) var<storage, read> offsets: array<u32>;
var<workgroup> c: array<u32, ${COUNTERS}>;
var<workgroup> t: array<vec2<u32>, ${WG}>;
var<workgroup> sk: array<u32, ${SK}>;
var<workgroup> sp: array<u32, ${SP}>;
// where the tile's i-th sorted key of digit d goes: dest[d] + i
var<workgroup> dest: array<u32, 256>;

fn pad(i: u32) -> u32 { return i + (i >> 5u); }

fn make_key(v: ${T}) -> vec2<u32> { ${KEY} }
fn from_key(k: vec2<u32>) -> ${T} { ${VALUE} }
// the key of element e of the (rows, n) input
fn key_at(e: u32) -> vec2<u32> { ${KEY_AT} }
// the payload of element e, the i-th of its row
fn payload_at(e: u32, i: u32) -> u32 { ${PAYLOAD_AT} }
// key k and payload p to their place, pos
fn put(pos: u32, k: vec2<u32>, p: u32) { ${PUT} }

// The sum of v over the workgroup's threads before thread lid. Its caller has passed a
// barrier since t was last read.
${EXCLUSIVE}

// Exclusive scan of c in digit-major order, in place; each thread holds the 16 counters
// c[lid * 16 ..] of that order.
fn rank(lid: u32) {
  workgroupBarrier();
  var sum = 0u;
  for (var e = 0u; e < 16u; e = e + 1u) {
    let v = c[pad(lid * 16u + e)];
    c[pad(lid * 16u + e)] = sum;
    sum = sum + v;
  }
  let before = exclusive(vec2<u32>(sum, 0u), lid).x;
  for (var e = 0u; e < 16u; e = e + 1u) { c[pad(lid * 16u + e)] = c[pad(lid * 16u + e)] + before; }
  workgroupBarrier();
}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32${LANE_PARAMS}) {
${LANE_INIT}
  let n = P[0]; let tiles = P[2]; let shift = P[4];
  let w = wid.y * nwg.x + wid.x;
  if (w >= P[1] * tiles) { return; }
  let row = w / tiles; let tile = w % tiles;
  let base = row * n + tile * ${TILE}u;
  let len = min(${TILE}u, n - tile * ${TILE}u);
  let first = lid * ${IPT}u;

  // The offsets of the thread's digits, loaded first: these reads are spread over the whole
  // table (a digit's tiles are consecutive), and their latency passes while the tile is ranked.
${OFFSETS}
  for (var d = 0u; d < 16u; d = d + 1u) { c[pad(d * ${WG}u + lid)] = 0u; }

${LOAD}
  rank(lid);
${SPLIT}
  for (var d = 0u; d < 16u; d = d + 1u) { c[pad(d * ${WG}u + lid)] = 0u; }
  workgroupBarrier();
${RELOAD}
  rank(lid);
${SPLIT}

  // dest: the row's keys of smaller digits, then this digit's keys in earlier tiles, less the
  // tile's keys of smaller digits (a scan over the 256 digits of (tile count, row total))
${OWN}
  var run = exclusive(sum, lid);
${DEST}
  workgroupBarrier();
${STORE}
}
