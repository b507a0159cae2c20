// Integer helpers, linked on use. Signed division and remainder go through unsigned magnitudes:
// WGSL defines signed `/` and `%`, but NVIDIA's Vulkan driver computes some of them wrongly,
// while unsigned division is right everywhere. Division by zero gives 0, as NumPy's does.

fn floordiv_i32(a: i32, b: i32) -> i32 {
  if (b == 0i) { return 0i; }
  let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
  let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
  let q = ua / ub;
  if ((a < 0i) == (b < 0i)) { return bitcast<i32>(q); }
  return bitcast<i32>(0u - q - select(0u, 1u, q * ub != ua));
}
fn remainder_i32(a: i32, b: i32) -> i32 {
  if (b == 0i) { return 0i; }
  let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0i);
  let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0i);
  let r = ua - (ua / ub) * ub;
  if (r == 0u) { return 0i; }
  let t = select(bitcast<i32>(r), bitcast<i32>(0u - r), a < 0i);   // the truncated remainder
  return select(t, t + b, (a < 0i) != (b < 0i));
}
fn floordiv_i64(a: i64, b: i64) -> i64 {
  if (b == 0li) { return 0li; }
  let ua = select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li);
  let ub = select(bitcast<u64>(b), 0lu - bitcast<u64>(b), b < 0li);
  let q = ua / ub;
  if ((a < 0li) == (b < 0li)) { return bitcast<i64>(q); }
  return bitcast<i64>(0lu - q - select(0lu, 1lu, q * ub != ua));
}
fn remainder_i64(a: i64, b: i64) -> i64 {
  if (b == 0li) { return 0li; }
  let ua = select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li);
  let ub = select(bitcast<u64>(b), 0lu - bitcast<u64>(b), b < 0li);
  let r = ua - (ua / ub) * ub;
  if (r == 0lu) { return 0li; }
  let t = select(bitcast<i64>(r), bitcast<i64>(0lu - r), a < 0li);
  return select(t, t + b, (a < 0li) != (b < 0li));
}
