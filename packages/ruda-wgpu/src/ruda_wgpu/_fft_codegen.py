"""Straight-line WGSL for the DFTs an FFT pass does in registers.

Generators rather than WGSL loops, because only unrolled code keeps a thread's points in
registers whatever the driver's compiler decides (a private array indexed by a variable lives in
memory; on an H200 a pass then took twice as long). Twiddles are literals, exactly rounded to
the dtype, and the trivial ones (1, -1, -i, +i) cost no multiplication.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ruda_wgpu._kernels import real_literal, wgsl_type


def register_dft(name: str, r: int, dtype: np.dtype[Any], inverse: bool) -> str:
    """WGSL ``fn name(v: array<T, r>) -> array<T, r>``: the r-point DFT (r a power of two) of
    ``v``, natural order in and out, as straight-line code that keeps every point in a register.

    Radix-2 decimation in time: the inputs in bit-reversed order, then log2 r stages of
    butterflies; twiddles are literals, and the trivial ones (1, -i) cost no multiplication. A
    generator rather than WGSL loops, because only unrolled code keeps the points in registers
    whatever the driver's compiler decides.
    """
    t = wgsl_type(dtype)
    bits = r.bit_length() - 1
    names = [f"v[{int(format(j, f'0{bits}b')[::-1] or '0', 2)}]" for j in range(r)]
    lines, count, h = [], 0, 1
    while h < r:
        for q in range(0, r, 2 * h):
            for k in range(h):
                u, w = names[q + k], names[q + k + h]
                angle = (2 if inverse else -2) * math.pi * k / (2 * h)
                if k == 0:
                    product = w
                elif 4 * k == 2 * h:  # w = -i forward, +i inverse
                    product = f"{t}({w}.y, -{w}.x)" if not inverse else f"{t}(-{w}.y, {w}.x)"
                else:
                    c, s = real_literal(math.cos(angle), dtype), real_literal(math.sin(angle), dtype)
                    product = f"{t}({w}.x * {c} - {w}.y * {s}, {w}.x * {s} + {w}.y * {c})"
                lines.append(f"  let p{count} = {product};")
                lines.append(f"  let a{count} = {u} + p{count}; let b{count} = {u} - p{count};")
                names[q + k], names[q + k + h] = f"a{count}", f"b{count}"
                count += 1
        h *= 2
    points = f"array<{t}, {r}>"
    body = "\n".join([*lines, f"  return {points}({', '.join(names)});"])
    return f"fn {name}(v: {points}) -> {points} {{\n{body}\n}}"


def smallest_prime_factor(n: int) -> int:
    """The smallest prime dividing ``n`` (n itself when prime; n > 1)."""
    return next((p for p in range(2, math.isqrt(n) + 1) if n % p == 0), n)


def mixed_dft(r: int, dtype: np.dtype[Any], inverse: bool) -> str:
    """WGSL ``fn dft(v: array<T, r>) -> array<T, r>``: the r-point DFT for any ``r``, natural
    order in and out (Cooley-Tukey splits down to 2-, 4- and prime-point DFTs)."""
    code = _StraightLine(wgsl_type(dtype), dtype, 1 if inverse else -1)
    out = code.dft([f"v[{j}]" for j in range(r)])
    points = f"array<{code.t}, {r}>"
    body = "\n".join([*code.lines, f"  return {points}({', '.join(out)});"])
    return f"fn dft(v: {points}) -> {points} {{\n{body}\n}}"


class _StraightLine:
    """The lines of a straight-line DFT: every value a ``let``, named t0, t1, ..."""

    def __init__(self, t: str, dtype: np.dtype[Any], sign: int) -> None:
        self.t, self.dtype, self.sign = t, dtype, sign  # sign: of the exponent, -1 forward
        self.lines: list[str] = []

    def let(self, expr: str) -> str:
        name = f"t{len(self.lines)}"
        self.lines.append(f"  let {name} = {expr};")
        return name

    def rotate(self, x: str, m: int, n: int) -> str:
        """``x`` times w_n^m = exp(sign 2 pi i m / n)."""
        m %= n
        if m == 0:
            return x
        if 4 * m % n == 0:  # a quarter turn or a half
            quarter = 4 * m // n
            if quarter == 2:
                return self.let(f"-{x}")
            turn_left = (quarter == 1) == (self.sign > 0)  # times +i
            return self.let(f"{self.t}(-{x}.y, {x}.x)" if turn_left else f"{self.t}({x}.y, -{x}.x)")
        angle = self.sign * 2 * math.pi * m / n
        c, s = (real_literal(v, self.dtype) for v in (math.cos(angle), math.sin(angle)))
        return self.let(f"{self.t}({x}.x * {c} - {x}.y * {s}, {x}.x * {s} + {x}.y * {c})")

    def dft(self, xs: list[str]) -> list[str]:
        n = len(xs)
        if n == 1:
            return xs
        if n == 2:
            return [self.let(f"{xs[0]} + {xs[1]}"), self.let(f"{xs[0]} - {xs[1]}")]
        if n == 4:
            sum02, diff02 = self.let(f"{xs[0]} + {xs[2]}"), self.let(f"{xs[0]} - {xs[2]}")
            sum13 = self.let(f"{xs[1]} + {xs[3]}")
            turned13 = self.rotate(self.let(f"{xs[1]} - {xs[3]}"), 1, 4)
            out = [
                f"{sum02} + {sum13}",
                f"{diff02} + {turned13}",
                f"{sum02} - {sum13}",
                f"{diff02} - {turned13}",
            ]
            return [self.let(e) for e in out]
        p = smallest_prime_factor(n)
        if p == n:
            return self.prime(xs)
        # n = a b: x[b q1 + q2] -> a-point DFTs over q1, twiddles w_n^(q2 s1), b-point DFTs over
        # q2; output s1 + a s2
        a = 4 if n % 4 == 0 else p
        b = n // a
        inner = [self.dft([xs[b * q1 + q2] for q1 in range(a)]) for q2 in range(b)]
        turned = [[self.rotate(inner[q2][s1], q2 * s1, n) for s1 in range(a)] for q2 in range(b)]
        out = [""] * n
        for s1 in range(a):
            for s2, value in enumerate(self.dft([turned[q2][s1] for q2 in range(b)])):
                out[s1 + a * s2] = value
        return out

    def prime(self, xs: list[str]) -> list[str]:
        """The DFT of an odd prime length p, pairing x_q with x_(p-q): X_s and X_(p-s) share
        x_0 + sum (x_q + x_(p-q)) cos and sum (x_q - x_(p-q)) sin."""
        p, half = len(xs), len(xs) // 2
        sums = [self.let(f"{xs[q]} + {xs[p - q]}") for q in range(1, half + 1)]
        diffs = [self.let(f"{xs[q]} - {xs[p - q]}") for q in range(1, half + 1)]
        out = [""] * p
        out[0] = self.let(" + ".join([xs[0], *sums]))
        for s in range(1, half + 1):
            turns = [2 * math.pi * q * s / p for q in range(1, half + 1)]
            cos = " + ".join(
                f"{v} * {real_literal(math.cos(t), self.dtype)}" for v, t in zip(sums, turns, strict=True)
            )
            sin = " + ".join(
                f"{v} * {real_literal(math.sin(t), self.dtype)}" for v, t in zip(diffs, turns, strict=True)
            )
            c, d = self.let(f"{xs[0]} + {cos}"), self.let(sin)
            # X_s = c + sign i d, X_(p-s) = c - sign i d
            plus_i = self.let(f"{self.t}(-{d}.y, {d}.x)")
            out[s], out[p - s] = (
                (self.let(f"{c} + {plus_i}"), self.let(f"{c} - {plus_i}"))
                if self.sign > 0
                else (self.let(f"{c} - {plus_i}"), self.let(f"{c} + {plus_i}"))
            )
        return out


def mixed_pass_subs(r: int, stride: int, dtype: np.dtype[Any], inverse: bool) -> dict[str, str]:
    """The generated parts of a ``wgsl/fft_mixed.wgsl`` pass of radix ``r`` whose outputs lie
    ``stride`` (p) apart: the DFT, the loads (twiddled unless p is 1) and the stores, unrolled."""
    loads = []
    if stride > 1:
        loads.append("  let kstep = k * STEP;")
    for q in range(r):
        value = f"a[src + {q}u * M]"
        if stride > 1 and q:
            value = f"cmul({value}, twiddle({q}u * kstep))"
        loads.append(f"  v[{q}] = {value};")
    stores = [f"  o[dst + {q * stride}u] = y[{q}] * scale;" for q in range(r)]
    return {"DFT": mixed_dft(r, dtype, inverse), "LOADS": "\n".join(loads), "STORES": "\n".join(stores)}
