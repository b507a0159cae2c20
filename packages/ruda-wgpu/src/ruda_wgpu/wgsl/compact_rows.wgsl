// Boolean-mask selection: o[(pos[r] - 1) * R + j] = x[x_base + r * R + j] for every row r whose
// flag is set and every j < R (R elements a row; 1 when the mask covers every dimension), where
// pos is the inclusive scan of the flags (0/1 words), so the selected rows come out in order.
// P: total (rows * R), R, f_base, x_base
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<${T}>;
@group(0) @binding(2) var<storage, read> pos: array<u32>;
@group(0) @binding(3) var<storage, read> f: array<u32>;
@group(0) @binding(4) var<storage, read> x: array<${T}>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * ${WG}u + lid;
  if (i >= P[0]) { return; }
  let r = i / P[1];
  if (f[P[2] + r] != 0u) { o[(pos[r] - 1u) * P[1] + (i - r * P[1])] = x[P[3] + i]; }
}
