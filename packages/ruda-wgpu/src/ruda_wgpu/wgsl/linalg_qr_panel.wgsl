// One panel of the blocked QR on GPUs (see linalg_qr.wgsl, which it stands for there): the NB
// columns [kb, kb + NB) of each matrix of a contiguous (batch, m, n) array, rows from kb,
// factorised in place as linalg_qr.wgsl does (R on and above the diagonal, the reflectors below
// it, tau; column norms scaled by their largest element), one workgroup per matrix; then its
// reflectors applied to the columns [kb + NB, lim) of the block the panel belongs to, CH columns
// at a time. The panel stays in registers: thread lid holds the rows kb + lid + WG r, a variable
// an element (written out by the Python side, as are the steps), so that a step's norms, dot
// products and updates read no memory. The threads' partial sums meet in workgroup memory and
// are added in a fixed order, in groups of 16 threads, then the groups' sums.
// P: m, n, batch, kb, lim
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> a: array<${T}>;
@group(0) @binding(2) var<storage, read_write> tau: array<${T}>;
alias Elem = ${T};
alias Real = ${R};
const WG = ${WG}u;
const GROUPS = ${WG}u / 16u;
const NB = ${NB}u;
const CH = ${CH}u;
var<workgroup> part: array<Elem, ${PARTS}>;    // value c of thread t at c * WG + t
var<workgroup> part16: array<Elem, ${WG}>;     // their sums over 16 threads, GROUPS a value
var<workgroup> total: array<Elem, 16>;
var<workgroup> rpart: array<Real, ${WG}>;
var<workgroup> rpart16: array<Real, 16>;
var<workgroup> alpha_s: Elem;                  // the diagonal element of a step's column
${FIELD}

fn one() -> Elem { return ${ONE}; }
fn root(x: Real) -> Real { return ${SQRT}(x); }

// total[c] = the sum over the threads of part[c * WG + t], for the first k values (k <= 16):
// thread g of value c adds the threads g, g + GROUPS, ... (neighbouring threads read
// neighbouring words), then one thread a value the GROUPS sums
fn sum_parts(lid: u32, k: u32) {
  workgroupBarrier();
  if (lid < k * GROUPS) {
    let first = (lid / GROUPS) * WG + lid % GROUPS;
    var s: Elem;
    for (var i = 0u; i < 16u; i = i + 1u) { s = s + part[first + i * GROUPS]; }
    part16[lid] = s;
  }
  workgroupBarrier();
  if (lid < k) {
    var s: Elem;
    for (var g = 0u; g < GROUPS; g = g + 1u) { s = s + part16[lid * GROUPS + g]; }
    total[lid] = s;
  }
  workgroupBarrier();
}

// The largest of the threads' x, or their sum (every thread gets it; added in the same fixed
// order as sum_parts).
fn reduce_real(lid: u32, x: Real, largest: bool) -> Real {
  rpart[lid] = x;
  workgroupBarrier();
  if (lid < GROUPS) {
    var s = rpart[lid];
    for (var i = 1u; i < 16u; i = i + 1u) {
      let y = rpart[lid + i * GROUPS];
      s = select(s + y, max(s, y), largest);
    }
    rpart16[lid] = s;
  }
  workgroupBarrier();
  var s = rpart16[0];
  for (var g = 1u; g < GROUPS; g = g + 1u) { s = select(s + rpart16[g], max(s, rpart16[g]), largest); }
  return s;
}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let m = P[0]; let n = P[1]; let kb = P[3]; let lim = P[4];
  let b = wid.y * nwg.x + wid.x;
  if (b >= P[2]) { return; }
  let rows = m - kb;                   // the panel's rows
  let base = (b * m + kb) * n + kb;    // its first element
  let tb = b * min(m, n) + kb;         // its first entry of tau
  ${LOAD}
${STEPS}
  ${STORE}
  for (var c0 = kb + NB; c0 < lim; c0 = c0 + CH) {
    let cb = c0 - kb;  // the chunk's first column, from the panel's
    ${CHUNK}
  }
}
