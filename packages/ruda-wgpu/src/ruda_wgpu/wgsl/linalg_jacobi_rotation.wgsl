// The pairs and rotations of the Jacobi methods (linalg_jacobi*.wgsl), placed into their kernels.
// Pair t of round r, (p, q) with p < q, in the parallel round-robin ordering: on a circle of
// 2 PAIRS positions, position 0 stays and the others turn one place a round.
fn pair(t: u32, r: u32) -> vec2<u32> {
  let nn = 2u * ${PAIRS}u;
  var i0 = 0u;
  if (t > 0u) { i0 = (t - 1u + r) % (nn - 1u) + 1u; }
  let i1 = (nn - 2u - t + r) % (nn - 1u) + 1u;
  return vec2<u32>(min(i0, i1), max(i0, i1));
}

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
