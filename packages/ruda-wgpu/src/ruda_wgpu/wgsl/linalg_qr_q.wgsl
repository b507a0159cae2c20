// Q of a Householder QR (linalg_qr.wgsl): the reflectors applied, last first, to q (batch, m, mq),
// which holds the first mq columns of the identity. One workgroup per matrix; each thread takes
// whole columns of q. Reflectors j1 - 1 down to j0 in one dispatch (Q may take several, in order).
// P: m, n (of the factored matrix), mq, batch, j0, j1
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> q: array<${T}>;
@group(0) @binding(2) var<storage, read> a: array<${T}>;
@group(0) @binding(3) var<storage, read> tau: array<${T}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let n = P[1]; let mq = P[2];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[3]) { return; }
  let k = min(m, n);
  let abase = b * m * n;
  let qbase = b * m * mq;
  for (var jj = P[5]; jj > P[4]; jj = jj - 1u) {
    let j = jj - 1u;
    let t_j = tau[b * k + j];
    for (var c = lid; c < mq; c = c + ${WG}u) {
      var w = q[qbase + j * mq + c];
      for (var i = j + 1u; i < m; i = i + 1u) { w = w + mul(conj(a[abase + i * n + j]), q[qbase + i * mq + c]); }
      w = mul(t_j, w);  // H_j = I - tau_j v v^H
      q[qbase + j * mq + c] = q[qbase + j * mq + c] - w;
      for (var i = j + 1u; i < m; i = i + 1u) { q[qbase + i * mq + c] = q[qbase + i * mq + c] - mul(w, a[abase + i * n + j]); }
    }
    storageBarrier();
  }
}
