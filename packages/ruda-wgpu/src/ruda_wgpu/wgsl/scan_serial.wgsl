// Inclusive scan of each row of a contiguous (rows, n) input, one thread per row, element after
// element: for many short rows (one workgroup each would idle), and for float16, whose NumPy
// sums round at every step, which only this order of additions reproduces.
// Elements j0 to j1 - 1 of each row in one dispatch, going on from element j0 - 1's result.
// P: n, rows, a_base, o_base, o_stride, j0, j1
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${ACC}>;
@group(0) @binding(2) var<storage, read> a: array<${SRC}>;

fn combine(x: ${ACC}, y: ${ACC}) -> ${ACC} { return ${COMBINE}; }
fn load(v: ${SRC}) -> ${ACC} { return ${LOAD}; }
fn store(x: ${ACC}) -> ${ACC} { return ${STORE}; }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  let n = P[0];
  if (row >= P[1]) { return; }
  let j0 = P[5];
  var acc: ${ACC} = ${IDENTITY};
  if (j0 > 0u) { acc = o[P[3] + row * P[4] + j0 - 1u]; }
  for (var j = j0; j < P[6]; j = j + 1u) {
    acc = store(combine(acc, load(a[P[2] + row * n + j])));
    o[P[3] + row * P[4] + j] = acc;
  }
}
