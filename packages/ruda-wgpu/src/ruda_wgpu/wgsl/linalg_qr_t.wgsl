// The triangular factor T of a block of nb Householder reflectors (LAPACK's larft, forward,
// columnwise): H_0 H_1 ... H_(nb-1) = I - V T V^H, from S = V^H V and the reflectors' tau, for
// each matrix of a batch: T[i, i] = tau_i and T[r, i] = -tau_i sum_(c = r .. i-1) T[r, c] S[c, i]
// for r < i. Thread r computes row r of T, which reads only its own row: no barriers.
// P: nb, batch, k (tau's row length), kb (the block's first reflector)
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> t: array<${T}>;
@group(0) @binding(2) var<storage, read> s: array<${T}>;
@group(0) @binding(3) var<storage, read> tau: array<${T}>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) r: u32) {
  let nb = P[0];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[1] || r >= nb) { return; }
  let base = b * nb * nb + r * nb;
  for (var i = 0u; i < nb; i = i + 1u) {
    let tau_i = tau[b * P[2] + P[3] + i];
    var x = ${ZERO};
    if (i == r) {
      x = tau_i;
    } else if (r < i) {
      var sum = ${ZERO};
      for (var c = r; c < i; c = c + 1u) { sum = sum + mul(t[base + c], s[b * nb * nb + c * nb + i]); }
      x = -mul(tau_i, sum);
    }
    t[base + i] = x;
  }
}
