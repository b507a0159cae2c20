// Solve A X = B for each matrix of a batch, given the LU factors and pivots of linalg_lu.wgsl:
// the pivots' row exchanges, then forward substitution with the unit lower L and backward with
// U, in place in x (batch, n, k). A workgroup takes C columns of one matrix's x (workgroup
// (i, j): columns [i C, i C + C) of matrix j), so that many right-hand sides (an inverse) spread
// over the GPU; each step updates every remaining (row, column) of its columns in parallel.
// P: n, k, first matrix of this dispatch, C
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> x: array<${T}>;
@group(0) @binding(2) var<storage, read> lu: array<${T}>;
@group(0) @binding(3) var<storage, read> piv: array<u32>;
${FIELD}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kc = P[1];
  let b = P[2] + wid.y;
  let c0 = wid.x * P[3];
  let w = min(P[3], kc - c0);   // this workgroup's columns
  let a0 = b * n * n;
  let x0 = b * n * kc + c0;     // element (row r, column c0 + c) at x0 + r * kc + c
  for (var i = 0u; i < n; i = i + 1u) {
    let p = piv[b * n + i];
    if (p != i) {
      for (var c = lid; c < w; c = c + ${WG}u) {
        let t = x[x0 + i * kc + c];
        x[x0 + i * kc + c] = x[x0 + p * kc + c];
        x[x0 + p * kc + c] = t;
      }
    }
    storageBarrier();
  }
  for (var i = 0u; i < n; i = i + 1u) {
    let m = n - i - 1u;
    for (var t = lid; t < m * w; t = t + ${WG}u) {
      let r = i + 1u + t / w; let c = t % w;
      x[x0 + r * kc + c] = x[x0 + r * kc + c] - mul(lu[a0 + r * n + i], x[x0 + i * kc + c]);
    }
    storageBarrier();
  }
  for (var ii = n; ii > 0u; ii = ii - 1u) {
    let i = ii - 1u;
    for (var c = lid; c < w; c = c + ${WG}u) { x[x0 + i * kc + c] = div(x[x0 + i * kc + c], lu[a0 + i * n + i]); }
    storageBarrier();
    for (var t = lid; t < i * w; t = t + ${WG}u) {
      let r = t / w; let c = t % w;
      x[x0 + r * kc + c] = x[x0 + r * kc + c] - mul(lu[a0 + r * n + i], x[x0 + i * kc + c]);
    }
    storageBarrier();
  }
}
