// The trailing update of a blocked LU: A22 = A22 - L21 U12, in place, for each matrix of a
// contiguous (batch, n, n) array, where L21 is the panel's columns [kb, kb + nb) below it, U12 its
// rows right of it and A22 the rows and columns from s = kb + nb. A workgroup of 16 x 16 threads
// updates a 64 x 64 tile, each thread 4 x 4 of its elements (rows and columns 16 apart, so that
// neighbouring threads touch neighbouring words), reading L21 and U12 through workgroup memory in
// steps of 16. A thread's 16 sums are a variable each (written out by the Python side): NVIDIA
// keeps an array indexed by loop counters in local memory.
// P: n, batch offset, kb, nb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
var<workgroup> sl: array<${T}, 1024>;   // 64 rows x 16 of L21
var<workgroup> su: array<${T}, 1024>;   // 16 rows x 64 of U12
${FIELD}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let n = P[0]; let kb = P[2]; let nb = P[3];
  let s = kb + nb;
  let base = (P[1] + wid.z) * n * n;
  let r0 = s + wid.y * 64u; let c0 = s + wid.x * 64u;
  ${DECLARE}
  for (var l0 = 0u; l0 < nb; l0 = l0 + 16u) {
    for (var e = li; e < 1024u; e = e + 256u) {
      let i = e / 16u; let l = e % 16u;
      let r = r0 + i; let kl = l0 + l;
      sl[e] = select(${ZERO}, a[base + min(r, n - 1u) * n + kb + min(kl, nb - 1u)], r < n && kl < nb);
      let lu = e / 64u; let ju = e % 64u;
      let c = c0 + ju; let ku = l0 + lu;
      su[e] = select(${ZERO}, a[base + (kb + min(ku, nb - 1u)) * n + min(c, n - 1u)], c < n && ku < nb);
    }
    workgroupBarrier();
    for (var l = 0u; l < 16u; l = l + 1u) { ${STEP} }
    workgroupBarrier();
  }
  ${STORE}
}
