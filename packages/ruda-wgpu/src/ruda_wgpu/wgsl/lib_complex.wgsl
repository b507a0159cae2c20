// Complex helpers, linked on use; this file is a template rendered for complex64 (${C} = c64,
// pairs of f32, real helpers *_f) and complex128 (c128, pairs of f64, real helpers *_d). A
// complex number is a vec2: x the real part, y the imaginary part.
// The special cases are the standard's (those of C99's Annex G), spelled out with explicit
// tests: drivers may fold NaN-producing arithmetic such as y - y to 0, which C code relies on.
// The inverse functions follow FreeBSD's catrig.c (Hull, Fairgrieve and Tang's algorithm);
// division and integer powers follow NumPy's, so results match it.

fn isnan_${C}(z: vec2<${F}>) -> bool { return isnan_${S}(z.x) || isnan_${S}(z.y); }
fn isinf_${C}(z: vec2<${F}>) -> bool { return isinf_${S}(z.x) || isinf_${S}(z.y); }
fn isfinite_${C}(z: vec2<${F}>) -> bool { return !isnan_${C}(z) && !isinf_${C}(z); }
fn nan_${C}() -> vec2<${F}> { return vec2<${F}>(nan_${S}(), nan_${S}()); }
fn abs_${C}(z: vec2<${F}>) -> ${F} { return hypot_${S}(z.x, z.y); }
fn mul_${C}(a: vec2<${F}>, b: vec2<${F}>) -> vec2<${F}> {
  return vec2<${F}>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// A scan's running product starts from scan_one (a marked NaN pair, see marker_f), not (1, 0),
// and a factor that is it leaves the other as it is: multiplied by (1, 0), a first value with
// an infinite part, or a -0 imaginary part, changed (1 * inf + 0 * inf is NaN), where NumPy's
// cumprod gives the first value itself. Positions hold it only before their first value.
fn scan_one_${C}() -> vec2<${F}> { return vec2<${F}>(marker_${S}(), marker_${S}()); }
fn prod_${C}(a: vec2<${F}>, b: vec2<${F}>) -> vec2<${F}> {
  if (is_marker_${S}(a.x)) { return b; }
  if (is_marker_${S}(b.x)) { return a; }
  return mul_${C}(a, b);
}
// z * z with the cross product taken once: of mul(z, z), compilers fold x y + y x into (x + x) y,
// which overflows for x near the largest float (3e38 + 0.5j squared had an infinite imaginary part)
fn square_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let p = z.x * z.y;
  return vec2<${F}>(z.x * z.x - z.y * z.y, p + p);
}
// Smith's algorithm, as NumPy divides.
// a / (0 + 0j) as C99's Annex G gives it: infinite parts with the signs of a (and of the zero),
// NaN where a part of a is zero or NaN.
fn div_by_zero_${C}(a: vec2<${F}>, zero: ${F}) -> vec2<${F}> {
  let inf = inf_${S}();
  let x = select(inf, -inf, signbit_${S}(a.x) != signbit_${S}(zero));
  let y = select(inf, -inf, signbit_${S}(a.y) != signbit_${S}(zero));
  return vec2<${F}>(select(x, nan_${S}(), a.x == 0.0${L} || isnan_${S}(a.x)),
                    select(y, nan_${S}(), a.y == 0.0${L} || isnan_${S}(a.y)));
}
fn div_${C}(a: vec2<${F}>, b: vec2<${F}>) -> vec2<${F}> {
  let br = abs_${S}(b.x); let bi = abs_${S}(b.y);
  if (br >= bi) {
    if (br == 0.0${L} && bi == 0.0${L}) { return div_by_zero_${C}(a, b.x); }
    let rat = b.y / b.x;
    let scl = 1.0${L} / (b.x + b.y * rat);
    return vec2<${F}>((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  if (isnan_${S}(br)) { return nan_${C}(); }
  let rat = b.x / b.y;
  let scl = 1.0${L} / (b.y + b.x * rat);
  return vec2<${F}>((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
// 1 / z as NumPy's reciprocal computes it (Smith's quotient of 1 with the zero products left out,
// which make 0 * inf = NaN where |z| is subnormal: 1 / (1e-310 + 0j) is inf - 0j); zero and
// non-finite z as division gives them.
fn reciprocal_${C}(z: vec2<${F}>) -> vec2<${F}> {
  if (!isfinite_${C}(z) || (z.x == 0.0${L} && z.y == 0.0${L})) { return div_${C}(vec2<${F}>(1.0${L}, 0.0${L}), z); }
  if (abs_${S}(z.y) <= abs_${S}(z.x)) {
    let r = z.y / z.x;
    let d = z.x + z.y * r;
    return vec2<${F}>(1.0${L} / d, -r / d);
  }
  let r = z.x / z.y;
  let d = z.x * r + z.y;
  return vec2<${F}>(r / d, -1.0${L} / d);
}
fn sign_${C}(z: vec2<${F}>) -> vec2<${F}> {
  if (isnan_${C}(z)) { return nan_${C}(); }
  if (z.x == 0.0${L} && z.y == 0.0${L}) { return vec2<${F}>(0.0${L}, 0.0${L}); }
  if (isinf_${C}(z)) {  // the direction of the infinite parts
    let u = vec2<${F}>(select(0.0${L}, copysign_${S}(1.0${L}, z.x), isinf_${S}(z.x)),
                       select(0.0${L}, copysign_${S}(1.0${L}, z.y), isinf_${S}(z.y)));
    return u / sqrt_${S}(u.x * u.x + u.y * u.y);
  }
  // brought near 1 first by a power of two (exact) where |z| is far from it: |z| may overflow
  // (3e38 + 3e38j had sign 0), and a division by a |z| past 2^126 is out of WGSL's range of
  // accuracy (NVIDIA's gave 0: its reciprocal, a subnormal, flushed); so by one too small
  let largest = max(abs_${S}(z.x), abs_${S}(z.y));
  var w = z;
  if (largest > ${QUARTER_SQRT_MAX}) { w = z * ${SQRT_MAX_DOWN}; }
  if (largest < ${FOUR_SQRT_MIN}) { w = z * ${SQRT_MAX_UP}; }
  let m = abs_${C}(w);
  return vec2<${F}>(w.x / m, w.y / m);
}
// exp(x) * (c, s) where exp(x) alone may overflow (|c|, |s| <= 1).
fn scaled_cis_${C}(x: ${F}, c: ${F}, s: ${F}) -> vec2<${F}> {
  if (x < ${EXP_OVF}) { let e = exp_${S}(x); return vec2<${F}>(e * c, e * s); }
  let h = exp_${S}(0.5${L} * x);
  return vec2<${F}>(h * (h * c), h * (h * s));
}

// -- sqrt, exp, log -------------------------------------------------------------------------------
fn sqrt_${C}(z: vec2<${F}>) -> vec2<${F}> {
  var a = z.x; var b = z.y;
  if (a == 0.0${L} && b == 0.0${L}) { return vec2<${F}>(0.0${L}, b); }
  if (isinf_${S}(b)) { return vec2<${F}>(inf_${S}(), b); }
  if (isnan_${S}(a)) { return nan_${C}(); }
  if (isinf_${S}(a)) {
    if (signbit_${S}(a)) { return vec2<${F}>(select(0.0${L}, nan_${S}(), isnan_${S}(b)), copysign_${S}(inf_${S}(), b)); }
    return vec2<${F}>(a, select(copysign_${S}(0.0${L}, b), b, isnan_${S}(b)));
  }
  if (isnan_${S}(b)) { return nan_${C}(); }
  var scale = 1.0${L};
  if (abs_${S}(a) >= ${CSQRT_THRESH} || abs_${S}(b) >= ${CSQRT_THRESH}) { a = a * 0.25${L}; b = b * 0.25${L}; scale = 2.0${L}; }
  else if (abs_${S}(a) < ${SQRT_MIN} && abs_${S}(b) < ${SQRT_MIN}) { a = a * 4.0${L}; b = b * 4.0${L}; scale = 0.5${L}; }
  if (a >= 0.0${L}) {
    let t = sqrt_${S}((a + hypot_${S}(a, b)) * 0.5${L});
    return vec2<${F}>(t * scale, b / (2.0${L} * t) * scale);
  }
  let t = sqrt_${S}((-a + hypot_${S}(a, b)) * 0.5${L});
  return vec2<${F}>(abs_${S}(b) / (2.0${L} * t) * scale, copysign_${S}(t, b) * scale);
}
fn exp_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let x = z.x; let y = z.y;
  let cs = cis_${S}(y);  // (cos y, sin y), one argument reduction for every use
  if (y == 0.0${L}) { return vec2<${F}>(exp_${S}(x), y); }
  if (isnan_${S}(y) || isinf_${S}(y)) {
    if (isinf_${S}(x) && signbit_${S}(x)) { return vec2<${F}>(0.0${L}, 0.0${L}); }
    if (isinf_${S}(x)) { return vec2<${F}>(x, nan_${S}()); }
    return nan_${C}();
  }
  if (isnan_${S}(x)) { return nan_${C}(); }
  if (x == 0.0${L}) { return vec2<${F}>(cs.x, cs.y); }
  if (isinf_${S}(x)) {
    if (signbit_${S}(x)) { return vec2<${F}>(copysign_${S}(0.0${L}, cs.x), copysign_${S}(0.0${L}, cs.y)); }
    return vec2<${F}>(x * cs.x, x * cs.y);
  }
  return scaled_cis_${C}(x, cs.x, cs.y);
}
fn expm1_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let x = z.x; let y = z.y;
  let cs = cis_${S}(y);  // (cos y, sin y), one argument reduction for every use
  if (y == 0.0${L}) { return vec2<${F}>(select(expm1_${S}(x), 0.0${L}, x == 0.0${L}), y); }
  if (isnan_${S}(y) || isinf_${S}(y)) {
    if (isinf_${S}(x) && signbit_${S}(x)) { return vec2<${F}>(-1.0${L}, 0.0${L}); }
    if (isinf_${S}(x)) { return vec2<${F}>(x, nan_${S}()); }
    return nan_${C}();
  }
  if (isnan_${S}(x)) { return nan_${C}(); }
  if (isinf_${S}(x)) {
    if (signbit_${S}(x)) { return vec2<${F}>(-1.0${L}, copysign_${S}(0.0${L}, cs.y)); }
    return vec2<${F}>(x * cs.x, x * cs.y);
  }
  // expm1(x) cos(y) + (cos(y) - 1) = expm1(x) cos(y) - 2 sin(y/2)^2, without cancellation near 0
  let h = sin_${S}(0.5${L} * y);
  if (x > ${EXP_OVF}) { return scaled_cis_${C}(x, cs.x, cs.y); }
  return vec2<${F}>(expm1_${S}(x) * cs.x - 2.0${L} * h * h, exp_${S}(x) * cs.y);
}
// log|z| without overflow or underflow, and accurately near |z| = 1.
fn log_abs_${C}(z: vec2<${F}>) -> ${F} {
  let ax = max(abs_${S}(z.x), abs_${S}(z.y));
  let ay = min(abs_${S}(z.x), abs_${S}(z.y));
  // (|z| of parts past half the largest float may overflow: log |z / 2| + log 2, exact halves)
  if (ax > ${HALF_MAX}) { return log_${S}(hypot_${S}(z.x * 0.5${L}, z.y * 0.5${L})) + 0.6931471805599453${L}; }
  if (ay < ${SQRT_MIN} || ax > ${QUARTER_SQRT_MAX}) { return log_${S}(hypot_${S}(z.x, z.y)); }
  if (ax >= 0.5${L} && ax <= 2.0${L}) { return 0.5${L} * log1p_${S}((ax - 1.0${L}) * (ax + 1.0${L}) + ay * ay); }
  return 0.5${L} * log_${S}(ax * ax + ay * ay);
}
fn log_${C}(z: vec2<${F}>) -> vec2<${F}> {
  if (isinf_${C}(z)) { return vec2<${F}>(inf_${S}(), atan2_${S}(z.y, z.x)); }
  if (isnan_${C}(z)) { return nan_${C}(); }
  if (z.x == 0.0${L} && z.y == 0.0${L}) { return vec2<${F}>(-inf_${S}(), atan2_${S}(z.y, z.x)); }
  return vec2<${F}>(log_abs_${C}(z), atan2_${S}(z.y, z.x));
}
fn log1p_${C}(z: vec2<${F}>) -> vec2<${F}> {
  if (isinf_${C}(z)) { return vec2<${F}>(inf_${S}(), atan2_${S}(z.y, z.x + 1.0${L})); }
  if (isnan_${C}(z)) { return nan_${C}(); }
  let x = z.x; let y = z.y;
  if (abs_${S}(x) > 0.5${L} || abs_${S}(y) > 0.5${L}) { return log_${C}(vec2<${F}>(x + 1.0${L}, y)); }
  // |1 + z|^2 - 1 = x (2 + x) + y^2, exact enough near z = 0
  return vec2<${F}>(0.5${L} * log1p_${S}(x * (2.0${L} + x) + y * y), atan2_${S}(y, 1.0${L} + x));
}
fn log2_${C}(z: vec2<${F}>) -> vec2<${F}> { return log_${C}(z) * 1.4426950408889634${L}; }
fn log10_${C}(z: vec2<${F}>) -> vec2<${F}> { return log_${C}(z) * 0.4342944819032518${L}; }

// -- hyperbolic functions, and the trigonometric ones through them ----------------------------------
fn cosh_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let x = z.x; let y = z.y;
  let cs = cis_${S}(y);  // (cos y, sin y), one argument reduction for every use
  let fx = !isnan_${S}(x) && !isinf_${S}(x);
  let fy = !isnan_${S}(y) && !isinf_${S}(y);
  if (fx && fy) {
    if (y == 0.0${L}) { return vec2<${F}>(cosh_${S}(x), x * y); }
    if (abs_${S}(x) < ${BIG_X}) { return vec2<${F}>(cosh_${S}(x) * cs.x, sinh_${S}(x) * cs.y); }
    let w = scaled_cis_${C}(abs_${S}(x) - 0.6931471805599453${L}, cs.x, cs.y);  // exp(|x|)/2
    return vec2<${F}>(w.x, copysign_${S}(1.0${L}, x) * w.y);
  }
  if (x == 0.0${L}) { return vec2<${F}>(nan_${S}(), 0.0${L}); }
  if (y == 0.0${L}) {
    if (isinf_${S}(x)) { return vec2<${F}>(inf_${S}(), copysign_${S}(0.0${L}, x) * y); }
    return vec2<${F}>(nan_${S}(), 0.0${L});
  }
  if (fx) { return nan_${C}(); }
  if (isinf_${S}(x)) {
    if (!fy) { return vec2<${F}>(inf_${S}(), nan_${S}()); }
    return vec2<${F}>(copysign_${S}(inf_${S}(), cs.x), x * cs.y);
  }
  return nan_${C}();
}
fn sinh_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let x = z.x; let y = z.y;
  let cs = cis_${S}(y);  // (cos y, sin y), one argument reduction for every use
  let fx = !isnan_${S}(x) && !isinf_${S}(x);
  let fy = !isnan_${S}(y) && !isinf_${S}(y);
  if (fx && fy) {
    if (y == 0.0${L}) { return vec2<${F}>(sinh_${S}(x), y); }
    if (abs_${S}(x) < ${BIG_X}) { return vec2<${F}>(sinh_${S}(x) * cs.x, cosh_${S}(x) * cs.y); }
    let w = scaled_cis_${C}(abs_${S}(x) - 0.6931471805599453${L}, cs.x, cs.y);  // exp(|x|)/2
    return vec2<${F}>(copysign_${S}(1.0${L}, x) * w.x, w.y);
  }
  if (x == 0.0${L}) { return vec2<${F}>(x, nan_${S}()); }
  if (y == 0.0${L}) {
    if (isinf_${S}(x)) { return vec2<${F}>(x, y); }
    return vec2<${F}>(nan_${S}(), y);
  }
  if (fx) { return nan_${C}(); }
  if (isinf_${S}(x)) {
    if (!fy) { return vec2<${F}>(x, nan_${S}()); }
    return vec2<${F}>(x * cs.x, copysign_${S}(inf_${S}(), cs.y));
  }
  return nan_${C}();
}
fn tanh_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let x = z.x; let y = z.y;
  let cs = cis_${S}(y);  // (cos y, sin y), one argument reduction for every use
  if (isnan_${S}(x)) { return vec2<${F}>(x, select(nan_${S}(), y, y == 0.0${L})); }
  if (isinf_${S}(x)) {
    // the standard: +0 for any positive finite imaginary part (C99 takes the sign of sin(2y))
    let s = select(copysign_${S}(0.0${L}, y), 0.0${L}, isinf_${S}(y) || isnan_${S}(y));
    return vec2<${F}>(copysign_${S}(1.0${L}, x), s);
  }
  if (isinf_${S}(y) || isnan_${S}(y)) { return vec2<${F}>(select(nan_${S}(), x, x == 0.0${L}), nan_${S}()); }
  if (abs_${S}(x) >= ${BIG_X}) {
    let e = exp_${S}(-abs_${S}(x));
    return vec2<${F}>(copysign_${S}(1.0${L}, x), 4.0${L} * cs.y * cs.x * e * e);
  }
  // Kahan's algorithm
  let t = (cs.y / cs.x);
  let beta = 1.0${L} + t * t;
  let s = sinh_${S}(x);
  let rho = sqrt_${S}(1.0${L} + s * s);
  let denom = 1.0${L} + beta * s * s;
  return vec2<${F}>((beta * rho * s) / denom, t / denom);
}
// sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz)
fn sin_${C}(z: vec2<${F}>) -> vec2<${F}> { let w = sinh_${C}(vec2<${F}>(-z.y, z.x)); return vec2<${F}>(w.y, -w.x); }
fn cos_${C}(z: vec2<${F}>) -> vec2<${F}> { return cosh_${C}(vec2<${F}>(-z.y, z.x)); }
fn tan_${C}(z: vec2<${F}>) -> vec2<${F}> { let w = tanh_${C}(vec2<${F}>(-z.y, z.x)); return vec2<${F}>(w.y, -w.x); }

// -- inverse functions (catrig) -------------------------------------------------------------------
// f(a, b, hypot(a, b)) = (hypot(a, b) - b) / 2, without cancellation.
fn catrig_f_${C}(a: ${F}, b: ${F}, h: ${F}) -> ${F} {
  if (b < 0.0${L}) { return (h - b) * 0.5${L}; }
  if (b == 0.0${L}) { return a * 0.5${L}; }
  return a * a / (h + b) * 0.5${L};
}
// For x, y >= 0 below 1/eps: (rx = Re(asinh(x + iy)), B usable, B, sqrt(A^2 - y^2), new_y).
struct Hard${C} { rx: ${F}, usable: bool, b: ${F}, sqrt_a2my2: ${F}, new_y: ${F} }
fn hard_work_${C}(x: ${F}, y: ${F}) -> Hard${C} {
  let eps = ${EPS};
  let r = hypot_${S}(x, y + 1.0${L});
  let s = hypot_${S}(x, y - 1.0${L});
  var a = (r + s) * 0.5${L};
  if (a < 1.0${L}) { a = 1.0${L}; }
  var rx: ${F};
  if (a < 10.0${L}) {
    if (y == 1.0${L} && x < eps * eps / 128.0${L}) { rx = sqrt_${S}(x); }
    else if (x >= eps * abs_${S}(y - 1.0${L})) {
      let am1 = catrig_f_${C}(x, 1.0${L} + y, r) + catrig_f_${C}(x, 1.0${L} - y, s);
      rx = log1p_${S}(am1 + sqrt_${S}(am1 * (a + 1.0${L})));
    } else if (y < 1.0${L}) { rx = x / sqrt_${S}((1.0${L} - y) * (1.0${L} + y)); }
    else { rx = log1p_${S}((y - 1.0${L}) + sqrt_${S}((y - 1.0${L}) * (y + 1.0${L}))); }
  } else {
    rx = log_${S}(a + sqrt_${S}(a * a - 1.0${L}));
  }
  if (y < ${FOUR_SQRT_MIN}) { return Hard${C}(rx, false, 0.0${L}, a * (2.0${L} / eps), y * (2.0${L} / eps)); }
  let bb = y / a;
  if (bb <= 0.6417${L}) { return Hard${C}(rx, true, bb, 0.0${L}, y); }
  if (y == 1.0${L} && x < eps / 128.0${L}) {
    return Hard${C}(rx, false, bb, sqrt_${S}(x) * sqrt_${S}((a + y) * 0.5${L}), y);
  }
  if (x >= eps * abs_${S}(y - 1.0${L})) {
    let amy = catrig_f_${C}(x, y + 1.0${L}, r) + catrig_f_${C}(x, y - 1.0${L}, s);
    return Hard${C}(rx, false, bb, sqrt_${S}(amy * (a + y)), y);
  }
  if (y > 1.0${L}) {
    let k = 4.0${L} / eps / eps;
    return Hard${C}(rx, false, bb, x * k * y / sqrt_${S}((y + 1.0${L}) * (y - 1.0${L})), y * k);
  }
  return Hard${C}(rx, false, bb, sqrt_${S}((1.0${L} - y) * (1.0${L} + y)), y);
}
// log(z) for |z| finite and above about 1/eps.
fn log_large_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let ax = max(abs_${S}(z.x), abs_${S}(z.y));
  if (ax > ${HALF_MAX}) {
    let e = 2.718281828459045${L};
    return vec2<${F}>(log_${S}(hypot_${S}(z.x / e, z.y / e)) + 1.0${L}, atan2_${S}(z.y, z.x));
  }
  return vec2<${F}>(log_${S}(hypot_${S}(z.x, z.y)), atan2_${S}(z.y, z.x));
}
fn asinh_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let x = z.x; let y = z.y;
  let ax = abs_${S}(x); let ay = abs_${S}(y);
  if (isnan_${S}(x) || isnan_${S}(y)) {
    if (isinf_${S}(x)) { return vec2<${F}>(x, nan_${S}()); }
    if (isinf_${S}(y)) { return vec2<${F}>(y, nan_${S}()); }
    if (y == 0.0${L}) { return vec2<${F}>(nan_${S}(), y); }
    return nan_${C}();
  }
  if (ax > ${RECIP_EPS} || ay > ${RECIP_EPS}) {
    var w = log_large_${C}(select(z, -z, signbit_${S}(x)));
    w.x = w.x + 0.6931471805599453${L};
    return vec2<${F}>(copysign_${S}(w.x, x), copysign_${S}(w.y, y));
  }
  if (x == 0.0${L} && y == 0.0${L}) { return z; }
  if (ax < ${SQRT6_EPS} * 0.25${L} && ay < ${SQRT6_EPS} * 0.25${L}) { return z; }
  let h = hard_work_${C}(ax, ay);
  var ry: ${F};
  if (h.usable) { ry = asin_${S}(h.b); } else { ry = atan2_${S}(h.new_y, h.sqrt_a2my2); }
  return vec2<${F}>(copysign_${S}(h.rx, x), copysign_${S}(ry, y));
}
// asin(z) = reverse(asinh(reverse(z))), reverse(x + iy) = y + ix
fn asin_${C}(z: vec2<${F}>) -> vec2<${F}> { let w = asinh_${C}(vec2<${F}>(z.y, z.x)); return vec2<${F}>(w.y, w.x); }
fn acos_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let pio2 = 1.5707963267948966${L};
  let x = z.x; let y = z.y;
  let ax = abs_${S}(x); let ay = abs_${S}(y);
  if (isnan_${S}(x) || isnan_${S}(y)) {
    if (isinf_${S}(x)) { return vec2<${F}>(nan_${S}(), -inf_${S}()); }
    if (isinf_${S}(y)) { return vec2<${F}>(nan_${S}(), -y); }
    if (x == 0.0${L}) { return vec2<${F}>(pio2, nan_${S}()); }
    return nan_${C}();
  }
  if (ax > ${RECIP_EPS} || ay > ${RECIP_EPS}) {
    let w = log_large_${C}(z);
    let ry = w.x + 0.6931471805599453${L};
    return vec2<${F}>(abs_${S}(w.y), select(-ry, ry, signbit_${S}(y)));
  }
  if (x == 1.0${L} && y == 0.0${L}) { return vec2<${F}>(0.0${L}, -y); }
  if (ax < ${SQRT6_EPS} * 0.25${L} && ay < ${SQRT6_EPS} * 0.25${L}) { return vec2<${F}>(pio2 - x, -y); }
  let h = hard_work_${C}(ay, ax);
  var rx: ${F};
  if (h.usable) { rx = acos_${S}(select(h.b, -h.b, signbit_${S}(x))); }
  else { rx = atan2_${S}(h.sqrt_a2my2, select(h.new_y, -h.new_y, signbit_${S}(x))); }
  return vec2<${F}>(rx, select(-h.rx, h.rx, signbit_${S}(y)));
}
fn acosh_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let w = acos_${C}(z);
  if (isnan_${S}(w.x) && isnan_${S}(w.y)) { return w; }
  if (isnan_${S}(w.x)) { return vec2<${F}>(abs_${S}(w.y), w.x); }
  // acosh(+-0 + NaN j) = NaN + pi/2 j, as the standard says (C99 gives NaN + NaN j)
  if (isnan_${S}(w.y)) { return vec2<${F}>(w.y, select(w.y, w.x, z.x == 0.0${L})); }
  return vec2<${F}>(abs_${S}(w.y), copysign_${S}(w.x, z.y));
}
// Re(1 / (x + iy)) without spurious overflow or underflow.
fn real_part_reciprocal_${C}(x: ${F}, y: ${F}) -> ${F} {
  if (isinf_${S}(x)) { return 1.0${L} / x; }
  if (isinf_${S}(y)) { return copysign_${S}(0.0${L}, x); }
  let m = max(abs_${S}(x), abs_${S}(y));
  let a = x / m; let b = y / m;
  return a / (a * a + b * b) / m;
}
fn atanh_${C}(z: vec2<${F}>) -> vec2<${F}> {
  let pio2 = 1.5707963267948966${L};
  let x = z.x; let y = z.y;
  let ax = abs_${S}(x); let ay = abs_${S}(y);
  if (y == 0.0${L} && ax <= 1.0${L}) { return vec2<${F}>(atanh_${S}(x), y); }
  if (x == 0.0${L}) { return vec2<${F}>(x, atan_${S}(y)); }
  if (isnan_${S}(x) || isnan_${S}(y)) {
    if (isinf_${S}(x)) { return vec2<${F}>(copysign_${S}(0.0${L}, x), nan_${S}()); }
    if (isinf_${S}(y)) { return vec2<${F}>(copysign_${S}(0.0${L}, x), copysign_${S}(pio2, y)); }
    return nan_${C}();
  }
  if (ax > ${RECIP_EPS} || ay > ${RECIP_EPS}) {
    return vec2<${F}>(real_part_reciprocal_${C}(x, y), copysign_${S}(pio2, y));
  }
  if (ax < ${SQRT3_EPS} * 0.5${L} && ay < ${SQRT3_EPS} * 0.5${L}) { return z; }
  var rx: ${F};
  if (ax == 1.0${L} && ay < ${EPS}) { rx = (0.6931471805599453${L} - log_${S}(ay)) * 0.5${L}; }
  else {
    let d = ax - 1.0${L};
    let sq = select(d * d + ay * ay, d * d, ay < ${SQRT_MIN});
    rx = log1p_${S}(4.0${L} * ax / sq) * 0.25${L};
  }
  var ry: ${F};
  if (ax == 1.0${L}) { ry = atan2_${S}(2.0${L}, -ay) * 0.5${L}; }
  else if (ay < ${EPS}) { ry = atan2_${S}(2.0${L} * ay, (1.0${L} - ax) * (1.0${L} + ax)) * 0.5${L}; }
  else { ry = atan2_${S}(2.0${L} * ay, (1.0${L} - ax) * (1.0${L} + ax) - ay * ay) * 0.5${L}; }
  return vec2<${F}>(copysign_${S}(rx, x), copysign_${S}(ry, y));
}
fn atan_${C}(z: vec2<${F}>) -> vec2<${F}> { let w = atanh_${C}(vec2<${F}>(z.y, z.x)); return vec2<${F}>(w.y, w.x); }

// -- pow, as NumPy computes it ----------------------------------------------------------------------
fn pow_${C}(a: vec2<${F}>, b: vec2<${F}>) -> vec2<${F}> {
  let one = vec2<${F}>(1.0${L}, 0.0${L});
  if (b.x == 0.0${L} && b.y == 0.0${L}) { return one; }
  if (a.x == 0.0${L} && a.y == 0.0${L}) {  // (NumPy 2: 0 for a positive real part, any imaginary one)
    if (b.x > 0.0${L}) { return vec2<${F}>(0.0${L}, 0.0${L}); }
    return nan_${C}();
  }
  if (b.y == 0.0${L} && trunc_${S}(b.x) == b.x && abs_${S}(b.x) < 100.0${L}) {
    let n = i32(b.x);
    if (n == 1) { return a; }
    if (n == 2) { return mul_${C}(a, a); }
    if (n == 3) { return mul_${C}(mul_${C}(a, a), a); }
    var k = abs(n);
    var r = one;
    var p = a;
    loop {
      if ((k & 1) == 1) { r = mul_${C}(r, p); }
      k = k >> 1u;
      if (k == 0) { break; }
      p = mul_${C}(p, p);
    }
    if (n < 0) { return div_${C}(one, r); }
    return r;
  }
  return exp_${C}(mul_${C}(b, log_${C}(a)));
}
// The 2-norm's one-pass reduction (see _statistical.scaled_squares): pairs (scale, ssq) of real
// values whose squares sum to scale^2 * ssq, as LAPACK's nrm2 keeps them, so that the squares
// of large or tiny values neither overflow nor underflow. Of two pairs the one of larger scale
// keeps it and the other's ssq is rescaled to it; a NaN scale wins, then an infinite one.
fn scaled_sum_${S}(x: vec2<${F}>, y: vec2<${F}>) -> vec2<${F}> {
  if (isnan_${S}(x.x) || isnan_${S}(y.x)) { return vec2<${F}>(x.x + y.x, 1.0${L}); }
  let swap = y.x > x.x;
  let big = select(x, y, swap);
  let small = select(y, x, swap);
  if (isinf_${S}(big.x)) { return vec2<${F}>(big.x, 1.0${L}); }
  if (big.x == 0.0${L}) { return big; }
  let r = small.x / big.x;
  return vec2<${F}>(big.x, big.y + small.y * (r * r));
}
