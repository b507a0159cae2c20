// sort and argsort of each row of a contiguous (rows, n) array of short rows (n <= ${N}), a
// thread a row: a stable insertion sort of the row's keys (the radix sort's, make_key) in the
// thread's own memory, then the sorted values (from_key) or the row indices written out. The
// radix sort ranks a row in tiles of thousands of keys, so rows of a few elements left nearly
// every thread of its workgroups idle: on lavapipe 70000 rows of 3 took 12.8 s.
// A key's second word is the more significant (64-bit keys); one-word keys leave it 0.
// P: n, rows, in_base, out_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${OUT}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;

fn make_key(v: ${T}) -> vec2<u32> { ${KEY} }
fn from_key(k: vec2<u32>) -> ${T} { ${VALUE} }
fn less(x: vec2<u32>, y: vec2<u32>) -> bool { return x.y < y.y || (x.y == y.y && x.x < y.x); }

@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = P[0];
  let row = gid.y * nwg.x * ${WG}u + gid.x;
  if (row >= P[1]) { return; }
  var ks: array<vec2<u32>, ${N}>;
  var ps: array<u32, ${N}>;
  for (var j = 0u; j < n; j = j + 1u) {
    let k = make_key(a[P[2] + row * n + j]);
    var i = j;
    while (i > 0u && less(k, ks[i - 1u])) {
      ks[i] = ks[i - 1u];
      ps[i] = ps[i - 1u];
      i = i - 1u;
    }
    ks[i] = k;
    ps[i] = j;
  }
  for (var j = 0u; j < n; j = j + 1u) {
    ${PUT}
  }
}
