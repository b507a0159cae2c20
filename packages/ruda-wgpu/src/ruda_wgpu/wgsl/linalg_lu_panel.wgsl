// One panel of a blocked LU with partial pivoting (see linalg_lu.wgsl, which it stands for on
// GPUs from LU_BLOCKED_MIN rows): the NB columns [kb, kb + NB) of each matrix of a contiguous
// (batch, n, n) array, rows from kb, factorised in place, one workgroup per matrix. The panel
// stays in registers: thread lid holds the rows kb + lid + WG r, a variable an element (written
// out by the Python side, as are the NB steps), and their entries of perm, so that a step's
// pivot search, multipliers and update read no memory; the pivot's row and row k pass between
// threads through workgroup memory. Rows are exchanged whole, so that the factors, piv, perm and
// info are those of the unblocked factorisation: the columns outside the panel in global
// memory, where a thread's first SWAP_COLUMNS columns are loaded once a step's pivot is known
// and stored after the next step's pivot search, so that the loads wait behind its barriers.
// P: n, batch, kb
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> piv: array<u32>;
@group(0) @binding(3) var<storage, read_write> info: array<u32>;
@group(0) @binding(4) var<storage, read_write> perm: array<u32>;
alias Elem = ${T};
const NB = ${NB}u;
const WG = ${WG}u;
var<workgroup> best_v: array<${R}, ${WG}>;
var<workgroup> best_i: array<u32, ${WG}>;
var<workgroup> pivot_row: array<Elem, ${NB}>;  // the pivot's row, row k after the exchange
var<workgroup> row_k: array<Elem, ${NB}>;      // row k before it, for the pivot's row
var<workgroup> pivot_perm: u32;                  // their entries of perm
var<workgroup> perm_k: u32;
${FIELD}

// The row with the largest magnitude (the first of equals) among the threads' candidates.
fn pivot(lid: u32, bv: ${R}, bi: u32) -> u32 {
  best_v[lid] = bv; best_i[lid] = bi;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let v = best_v[lid + s];
      if (v > best_v[lid] || (v == best_v[lid] && best_i[lid + s] < best_i[lid])) {
        best_v[lid] = v; best_i[lid] = best_i[lid + s];
      }
    }
    workgroupBarrier();
  }
  return best_i[0];
}

fn outside(c: u32, n: u32, kb: u32) -> bool { return c < n && (c < kb || c >= kb + NB); }

// Rows k and p (from the panel's first) exchanged in the columns outside the panel from a
// thread's first SWAP_COLUMNS: each thread takes the same columns at every step, so no barrier
// orders the steps' exchanges.
fn swap_rest(base: u32, n: u32, kb: u32, lid: u32, k: u32, p: u32) {
  let rk = base + k * n; let rp = base + p * n;
  for (var c = lid + ${SWAP_STRIDE}u; c < n; c = c + ${SWAP_STRIDE}u) {
    ${SWAP}
  }
}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let n = P[0]; let kb = P[2];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[1]) { return; }
  let m = n - kb;              // the panel's rows
  let base = (b * n + kb) * n; // the panel's first row
  let pb = b * n + kb;         // its entries of piv and perm
  ${LOAD}
  let no_pivot = ${RZERO} - ${RONE};  // below every magnitude
  var first_zero = 0u;
${STEPS}
  ${STORE}
  if (lid == 0u && (kb == 0u || info[b] == 0u)) { info[b] = first_zero; }
}
