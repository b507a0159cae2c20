// Integer helpers, linked on use; one template rendered for 32- and 64-bit integers (${I}, with
// unsigned ${U}; literal suffixes ${IS} and ${US}). Signed division and remainder go through
// unsigned magnitudes: WGSL defines signed `/` and `%`, but NVIDIA's Vulkan driver computes some
// of them wrongly, while unsigned division is right everywhere. Division by zero gives 0, as
// NumPy's does.

fn floordiv_${I}(a: ${I}, b: ${I}) -> ${I} {
  if (b == 0${IS}) { return 0${IS}; }
  let ua = select(bitcast<${U}>(a), 0${US} - bitcast<${U}>(a), a < 0${IS});
  let ub = select(bitcast<${U}>(b), 0${US} - bitcast<${U}>(b), b < 0${IS});
  let q = ua / ub;
  if ((a < 0${IS}) == (b < 0${IS})) { return bitcast<${I}>(q); }
  return bitcast<${I}>(0${US} - q - select(0${US}, 1${US}, q * ub != ua));
}
fn remainder_${I}(a: ${I}, b: ${I}) -> ${I} {
  if (b == 0${IS}) { return 0${IS}; }
  let ua = select(bitcast<${U}>(a), 0${US} - bitcast<${U}>(a), a < 0${IS});
  let ub = select(bitcast<${U}>(b), 0${US} - bitcast<${U}>(b), b < 0${IS});
  let r = ua - (ua / ub) * ub;
  if (r == 0${US}) { return 0${IS}; }
  let t = select(bitcast<${I}>(r), bitcast<${I}>(0${US} - r), a < 0${IS});   // the truncated remainder
  return select(t, t + b, (a < 0${IS}) != (b < 0${IS}));
}
