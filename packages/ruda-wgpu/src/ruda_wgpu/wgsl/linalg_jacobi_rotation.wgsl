// The pairs and rotations of the Jacobi methods (linalg_jacobi*.wgsl), placed into their kernels,
// and the arithmetic of a rotation and of a two-sided round's 2 x 2 block.
// Pair t of round r, (p, q) with p < q, in the parallel round-robin ordering of 2 ``pairs``
// positions: on a circle, position 0 stays and the others turn one place a round.
fn circle_pair(t: u32, r: u32, pairs: u32) -> vec2<u32> {
  let nn = 2u * pairs;
  var i0 = 0u;
  if (t > 0u) { i0 = (t - 1u + r) % (nn - 1u) + 1u; }
  let i1 = (nn - 2u - t + r) % (nn - 1u) + 1u;
  return vec2<u32>(min(i0, i1), max(i0, i1));
}

// The matrix index of position l of the submatrix of blocks (blocks.x, blocks.y) of half
// indices each (the block Jacobi method)
fn block_index(l: u32, blocks: vec2<u32>, half: u32) -> u32 {
  if (l < half) { return blocks.x * half + l; }
  return blocks.y * half + l - half;
}

// Pair t of round r of the kernel's PAIRS pairs
fn pair(t: u32, r: u32) -> vec2<u32> { return circle_pair(t, r, ${PAIRS}u); }

// The phase w and the real size of g (real matrices: w = 1 and g itself, with its sign)
fn phase(g: ${T}) -> ${T} { return select(${ONE}, div(conj(g), from_re(mag(g))), mag(g) > ${RZERO} && im(g) != ${RZERO}); }
fn size(g: ${T}) -> ${R} { return select(re(g), mag(g), im(g) != ${RZERO}); }

// (cos, sin) of the rotation that zeroes x[p, q] = g given x[p, p] = e and x[q, q] = f (or, one
// sided, the dot product g of two columns with squared norms e and f).
fn rotation(e: ${R}, f: ${R}, g: ${R}) -> vec2<${R}> {
  let small = ${ABS}(g) <= ${EPS} * ${SQRT}(${ABS}(e) * ${ABS}(f)) || ${ABS}(g) < ${TINY};
  if (small) { return vec2<${R}>(${RONE}, ${RZERO}); }
  let z = (f - e) / (g + g);
  var t = ${RONE} / (${ABS}(z) + ${SQRT}(${RONE} + z * z));
  if (z < ${RZERO}) { t = -t; }
  let c = ${RONE} / ${SQRT}(${RONE} + t * t);
  return vec2<${R}>(c, c * t);
}

// x and y (y already times the phase) turned by the rotation (c, s)
fn turned(x: ${T}, y: ${T}, c: ${R}, s: ${R}) -> array<${T}, 2> {
  return array<${T}, 2>(c * x - s * y, s * x + c * y);
}

// The 2 x 2 block [[x[0], x[1]], [x[2], x[3]]] of a two-sided round, in rows (p1, q1) and
// columns (p2, q2): its rows turned by the rotation (c1, s1) with phase w1, then its columns by
// (c2, s2) with phase w2. A rotation whose s is 0 (the spare index of an odd n among them) leaves
// the block as it is.
fn block_turned(x: array<${T}, 4>, c1: ${R}, s1: ${R}, w1: ${T}, c2: ${R}, s2: ${R}, w2: ${T}) -> array<${T}, 4> {
  var x00 = x[0]; var x01 = x[1]; var x10 = x[2]; var x11 = x[3];
  if (s1 != ${RZERO}) {  // rows p1 and q1
    let left = turned(x00, mul(conj(w1), x10), c1, s1); x00 = left[0]; x10 = left[1];
    let right = turned(x01, mul(conj(w1), x11), c1, s1); x01 = right[0]; x11 = right[1];
  }
  if (s2 != ${RZERO}) {  // then columns p2 and q2
    let top = turned(x00, mul(w2, x01), c2, s2); x00 = top[0]; x01 = top[1];
    let bottom = turned(x10, mul(w2, x11), c2, s2); x10 = bottom[0]; x11 = bottom[1];
  }
  return array<${T}, 4>(x00, x01, x10, x11);
}
