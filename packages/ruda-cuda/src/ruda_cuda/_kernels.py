"""Elementwise kernels for the functions CuPy computes non-conformingly.

Each is one fused pass over the data (CuPy compiles it on first use and
caches it), written in CUDA C that HIP also compiles, so the fixes cost no
extra memory traffic and hold on ROCm builds of CuPy too.
"""

from __future__ import annotations

import cupy

# numpy's npy_divmod, which is exact (CuPy uses floor(a / b)), plus the standard's
# infinities: with exactly one infinite operand the quotient is a / b itself.
FLOOR_DIVIDE = cupy.ElementwiseKernel(
    "T a, T b", "T out",
    """
    if (b == 0 || (isinf(a) != isinf(b) && !isnan(a) && !isnan(b))) {
        out = a / b;
    } else {
        T mod = fmod(a, b);
        T div = (a - mod) / b;
        if (mod != 0 && ((b < 0) != (mod < 0))) { div -= 1; }
        if (div != 0) {
            T fl = floor(div);
            out = (div - fl > (T)0.5) ? fl + 1 : fl;
        } else {
            out = copysign((T)0, a / b);
        }
    }
    """,
    "ruda_floor_divide",
)

# numpy's npy_divmod remainder: exact, with the sign of the divisor (CuPy computes
# a - floor(a / b) * b, which loses precision and signed zeros).
REMAINDER = cupy.ElementwiseKernel(
    "T a, T b", "T out",
    """
    T mod = fmod(a, b);
    if (b == 0 || isnan(mod)) {
        out = mod;
    } else if (mod != 0) {
        out = ((b < 0) != (mod < 0)) ? mod + b : mod;
    } else {
        out = copysign((T)0, b);
    }
    """,
    "ruda_remainder",
)

# nextafter(x, y) is y when x == y (C99), so nextafter(+0, -0) is -0.
NEXTAFTER_EQUAL = cupy.ElementwiseKernel(
    "T a, T b, T n", "T out", "out = (a == b) ? b : n", "ruda_nextafter_equal",
)

# Complex special cases CuPy's complex functions get wrong, patched on their result r.
# a, b are the real and imaginary parts of the input; NaN is written b - b (b infinite
# or NaN) and infinity fabs() of an infinite part, so no constant depends on a header.
_COMPLEX_PATCHES = {
    "tanh": """
        if (a == 0 && !isfinite(b)) { out = T(a, b - b); }
        else if (isinf(a) && isfinite(b)) { out = T(copysign(1.0, a), copysign(0.0, b)); }
        else if (isinf(a)) { out = T(copysign(1.0, a), 0.0); }
    """,
    "sqrt": """
        if (isinf(b)) { out = T(fabs(b), b); }
        else if (isinf(a) && a > 0 && isfinite(b)) { out = T(a, copysign(0.0, b)); }
        else if (isinf(a) && isfinite(b)) { out = T(0.0, copysign(fabs(a), b)); }
        else if (isinf(a) && a > 0) { out = T(a, b); }
        else if (isinf(a)) { out = T(b, fabs(a)); }
        else if (a == 0 && b == 0) { out = T(0.0, b); }
    """,
    "log": """
        if (isinf(a) && isnan(b)) { out = T(fabs(a), b); }
        else if (isnan(a) && isinf(b)) { out = T(fabs(b), a); }
    """,
    "log1p": """
        if (isinf(a) && isnan(b)) { out = T(fabs(a), b); }
        else if (isnan(a) && isinf(b)) { out = T(fabs(b), a); }
        else if (a == -1 && b == 0) { out = T(log(0.0), b); }
    """,
    "acosh": """
        if (a == 0 && isnan(b)) { out = T(b, 1.5707963267948966); }
    """,
}

COMPLEX_PATCH = {
    name: cupy.ElementwiseKernel(
        "T x, T r", "T out",
        f"double a = x.real(), b = x.imag(); out = r; {body}",
        f"ruda_complex_{name}",
    )
    for name, body in _COMPLEX_PATCHES.items()
}
