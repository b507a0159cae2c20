// sort and argsort of each row of a contiguous (rows, n) array of rows that fit one workgroup's
// memory (n <= ${TILE}), a workgroup a row: the row's keys (the radix sort's, make_key) are
// loaded into workgroup memory, padded to ${TILE} with keys that sort last, and put in order by
// a bitonic sorting network; then the sorted values (from_key) or the row indices are written.
// The radix sort takes four passes of three kernels each and ranks a row in tiles of thousands
// of keys, so a row of a few hundred left most of each workgroup idle and twelve dispatches
// waited on each other.
// Stability (argsort; with PAYLOAD): each key carries its index in the row and equal keys are
// ordered by it, so the network's order is the stable one. A sort writes the values back from
// the keys, and equal keys are equal values: it carries no index.
// A key's second word is the more significant (64-bit keys); one-word keys keep only the first.
// P: n, rows, in_base, out_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${OUT}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
var<workgroup> sk: array<${KT}, ${TILE}>;
var<workgroup> sp: array<u32, ${SP}>;

fn make_key(v: ${T}) -> vec2<u32> { ${KEY} }
fn from_key(k: vec2<u32>) -> ${T} { ${VALUE} }
fn wide(k: ${KT}) -> vec2<u32> { ${WIDE} }
fn narrow(k: vec2<u32>) -> ${KT} { ${NARROW} }

// whether the element at i goes after the one at l (ties by index, where indices are kept)
fn after(i: u32, l: u32) -> bool {
  let x = wide(sk[i]);
  let y = wide(sk[l]);
  if (x.y != y.y) { return x.y > y.y; }
  if (x.x != y.x) { return x.x > y.x; }
  return ${PAYLOAD} && sp[i] > sp[l];
}

@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = P[0];
  let row = wid.y * nwg.x + wid.x;
  if (row >= P[1]) { return; }  // (uniform: the whole workgroup leaves)
  for (var i = lid; i < ${TILE}u; i = i + ${WG}u) {
    if (i < n) {
      sk[i] = narrow(make_key(a[P[2] + row * n + i]));
      if (${PAYLOAD}) { sp[i] = i; }
    } else {  // past the row: after every key, even the largest
      sk[i] = narrow(vec2<u32>(0xffffffffu, 0xffffffffu));
      if (${PAYLOAD}) { sp[i] = 0xffffffffu; }
    }
  }
  workgroupBarrier();
  // the bitonic network: merges of sorted runs of k / 2 into runs of k, ascending where bit k
  // of the position is clear, each merge by compare-exchanges j = k / 2, k / 4, ... 1 apart
  for (var k = 2u; k <= ${TILE}u; k = k << 1u) {
    for (var j = k >> 1u; j > 0u; j = j >> 1u) {
      for (var t = lid; t < ${TILE}u / 2u; t = t + ${WG}u) {
        let i = 2u * t - (t & (j - 1u));
        let l = i + j;
        if (after(i, l) == ((i & k) == 0u)) {
          let key = sk[i];
          sk[i] = sk[l];
          sk[l] = key;
          if (${PAYLOAD}) {
            let p = sp[i];
            sp[i] = sp[l];
            sp[l] = p;
          }
        }
      }
      workgroupBarrier();
    }
  }
  for (var j = lid; j < n; j = j + ${WG}u) {
    ${PUT}
  }
}
