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
    "T a, T b",
    "T out",
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
    "T a, T b",
    "T out",
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
    "T a, T b, T n",
    "T out",
    "out = (a == b) ? b : n",
    "ruda_nextafter_equal",
)

# log2 and log10 of a negative subnormal give -inf through CUDA's libdevice (the input is
# treated as zero); the standard asks NaN for every x < 0. One pass, like CuPy's own.
REAL_LOG = {
    name: cupy.ElementwiseKernel("T x", "T out", f'out = (x < 0) ? (T)nan("") : {name}(x)', f"ruda_{name}")
    for name in ("log2", "log10")
}

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
        "T x, T r",
        "T out",
        f"double a = x.real(), b = x.imag(); out = r; {body}",
        f"ruda_complex_{name}",
    )
    for name, body in _COMPLEX_PATCHES.items()
}


# Streaming kernels for large contiguous float arrays. CuPy's generic elementwise kernel
# moves one element per thread per iteration and reaches about 60% of the copy bandwidth
# on an H200 for add (40% for exp); 16-byte vector loads and stores in a grid-stride loop
# reach the copy bandwidth. Same C expressions as CuPy's ufuncs, so results are identical.
STREAM_BINARY = {
    "add": "((x) + (y))",
    "subtract": "((x) - (y))",
    "multiply": "((x) * (y))",
    "divide": "((x) / (y))",
}
STREAM_UNARY = {"exp": "exp(x)", "sin": "sin(x)", "cos": "cos(x)"}
VECTOR_DTYPES = {"float32": ("float", "float4", 4), "float64": ("double", "double2", 2)}

# Two vectors per thread and iteration, both loaded before either is stored, so each
# thread keeps two independent loads in flight (one is not enough for a one-input op).
_STREAM_SOURCE = r"""
#define OP(x, y) {expr}
extern "C" __global__ void stream_kernel({args}, long long n) {{
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long nv = n / {width};
    for (long long i = first; i < nv; i += 2 * stride) {{
        const long long k = i + stride;
        const bool second = k < nv;
        {vload}
        {vstore}
    }}
    for (long long j = nv * {width} + first; j < n; j += stride) {{
        {sstore}
    }}
}}
"""


def _stream_source(expr: str, dtype: str, binary: bool) -> str:
    scalar, vector, width = VECTOR_DTYPES[dtype]
    lanes = "xyzw"[:width]
    va = f"reinterpret_cast<const {vector}*>(a)"
    vb = f"reinterpret_cast<const {vector}*>(b)"
    zero = f"make_{vector}({', '.join(['0'] * width)})"
    if binary:
        args = f"const {scalar}* __restrict__ a, const {scalar}* __restrict__ b, {scalar}* __restrict__ c"
        vload = (
            f"const {vector} x0 = {va}[i]; const {vector} y0 = {vb}[i]; "
            f"const {vector} x1 = second ? {va}[k] : {zero}; "
            f"const {vector} y1 = second ? {vb}[k] : {zero};"
        )
        results = [", ".join(f"OP(x{m}.{lane}, y{m}.{lane})" for lane in lanes) for m in (0, 1)]
        sstore = "c[j] = OP(a[j], b[j]);"
    else:
        args = f"const {scalar}* __restrict__ a, {scalar}* __restrict__ c"
        vload = f"const {vector} x0 = {va}[i]; const {vector} x1 = second ? {va}[k] : {zero};"
        results = [", ".join(f"OP(x{m}.{lane}, 0)" for lane in lanes) for m in (0, 1)]
        sstore = "c[j] = OP(a[j], 0);"
    vc = f"reinterpret_cast<{vector}*>(c)"
    vstore = (
        f"{vc}[i] = make_{vector}({results[0]}); if (second) {{ {vc}[k] = make_{vector}({results[1]}); }}"
    )
    return _STREAM_SOURCE.format(expr=expr, args=args, width=width, vload=vload, vstore=vstore, sstore=sstore)


_STREAM_CACHE: dict[tuple[str, str], cupy.RawKernel] = {}


def stream_kernel(name: str, dtype: str) -> cupy.RawKernel:
    """The streaming kernel for ``name`` on ``dtype`` (compiled once, then cached)."""
    key = (name, dtype)
    kernel = _STREAM_CACHE.get(key)
    if kernel is None:
        binary = name in STREAM_BINARY
        expr = STREAM_BINARY[name] if binary else STREAM_UNARY[name]
        kernel = _STREAM_CACHE[key] = cupy.RawKernel(_stream_source(expr, dtype, binary), "stream_kernel")
    return kernel
