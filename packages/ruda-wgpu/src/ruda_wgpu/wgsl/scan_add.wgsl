// Second pass of a tiled row scan: element j of tile k > 0 of a row is combined with the
// inclusive scan of the tile totals up to tile k - 1 (c[row * tiles + k - 1]).
// P: n, rows, tiles, o_base, o_stride
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${ACC}>;
@group(0) @binding(2) var<storage, read> c: array<${ACC}>;

fn combine(x: ${ACC}, y: ${ACC}) -> ${ACC} { return ${COMBINE}; }
fn store(x: ${ACC}) -> ${ACC} { return ${STORE}; }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let tiles = P[2];
  let w = wid.y * nwg.x + wid.x;
  if (w >= P[1] * tiles) { return; }
  let row = w / tiles; let tile = w % tiles;
  if (tile == 0u) { return; }
  let carry = c[w - 1u];
  for (var k = 0u; k < ${IPT}u; k = k + 1u) {
    let j = tile * ${TILE}u + k * ${WG}u + lid;
    if (j < n) {
      let at = P[3] + row * P[4] + j;
      o[at] = store(combine(carry, o[at]));
    }
  }
}
