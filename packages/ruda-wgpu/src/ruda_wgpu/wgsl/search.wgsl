// searchsorted: for each query v, the number of elements of the sorted x1 that come before
// it: those less than v (side left) or not greater than v (side right), in the order of
// before(), where NaN is the largest value, as sort puts it.
// P: n, total, a_base, q_base, right
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> q: array<${T}>;

fn less(x: ${T}, y: ${T}) -> bool { ${LESS} }

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[1]) { return; }
  let v = q[P[3] + i];
  var lo = 0u; var hi = P[0];
  loop {
    if (lo >= hi) { break; }
    let mid = lo + (hi - lo) / 2u;
    let x = a[P[2] + mid];
    var before = less(x, v);
    if (P[4] != 0u) { before = !less(v, x); }
    if (before) { lo = mid + 1u; } else { hi = mid; }
  }
  o[i] = lo;
}
