"""Elementwise kernels for the functions CuPy computes non-conformingly.

Each is one fused pass over the data (CuPy compiles it on first use and
caches it), written in CUDA C that HIP also compiles, so the fixes cost no
extra memory traffic and hold on ROCm builds of CuPy too.
"""

from __future__ import annotations

import functools

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

# log2 and log10 of complex numbers: log(x) with each part divided by log(2) or log(10), the
# standard's change of base (CuPy divides by a complex log(2), and the complex division makes
# NaN of a part beside an infinite one: log2(-inf + 3j) gave nan + nanj, not inf + 4.53j).
COMPLEX_CHANGE_OF_BASE = cupy.ElementwiseKernel(
    "T r, float64 k", "T out", "out = T(r.real() / k, r.imag() / k)", "ruda_complex_change_of_base"
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
#: Arrays at least this large, contiguous, 16-byte aligned float32/float64, take the streaming
#: kernels (below that, CuPy's kernels are as fast).
STREAM_MIN_SIZE = 1 << 20


@functools.cache
def _multiprocessors(device_id: int) -> int:
    return int(cupy.cuda.Device(device_id).attributes["MultiProcessorCount"])


def stream_blocks(size: int, device: cupy.cuda.Device) -> int:
    """Blocks of 512 threads to launch a streaming kernel with over ``size`` elements: enough to
    fill the GPU (8 per multiprocessor), fewer when there is less work."""
    return min((size + 511) // 512, 8 * _multiprocessors(int(device.id)))


# ``vectors`` vectors per thread and iteration, all loaded before any is stored: two keep two
# independent loads in flight per thread (one is not enough for a one-input op); a long fused
# chain has work enough between loads, and one vector keeps its registers free.
_STREAM_SOURCE = r"""
{prelude}
extern "C" __global__ void stream_kernel({params}, {scalar}* __restrict__ out, long long n) {{
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long nv = n / {width};
    for (long long i0 = first; i0 < nv; i0 += {vectors} * stride) {{
        {indices}
        {vload}
        {vstore}
    }}
    for (long long j = nv * {width} + first; j < n; j += stride) {{
        out[j] = {sresult};
    }}
}}
"""


def stream_source(
    prelude: str, function: str, operands: list[str | None], dtype: str, vectors: int = 2
) -> str:
    """A grid-stride kernel ``stream_kernel(operands..., out, n)`` writing
    ``out[j] = function(operands at j)`` with 16-byte vector loads and stores, ``vectors`` of
    them per thread and iteration.

    ``operands`` lists the function's arguments in order: ``None`` for an array (a contiguous,
    16-byte-aligned array of ``n`` elements of ``dtype``, float32 or float64), else the C
    declaration of a scalar parameter (``"const float s1"``), passed as it is. ``prelude``
    defines ``function``."""
    scalar, vector, width = VECTOR_DTYPES[dtype]
    lanes = "xyzw"[:width]
    zero = f"make_{vector}({', '.join(['0'] * width)})"
    # vector m of an iteration is i{m}; every one but the first may lie past the end
    indices = " ".join(f"const long long i{m} = i0 + {m} * stride;" for m in range(1, vectors))
    params, loads, names = [], [], []
    for i, declaration in enumerate(operands):
        if declaration is not None:
            params.append(declaration)
            names.append(declaration.split()[-1])
            continue
        params.append(f"const {scalar}* __restrict__ a{i}")
        names.append(f"a{i}")
        va = f"reinterpret_cast<const {vector}*>(a{i})"
        loads.append(f"const {vector} x0_{i} = {va}[i0];")
        loads += [f"const {vector} x{m}_{i} = i{m} < nv ? {va}[i{m}] : {zero};" for m in range(1, vectors)]

    def call(m: int, lane: str) -> str:
        args = [f"x{m}_{i}.{lane}" if d is None else names[i] for i, d in enumerate(operands)]
        return f"{function}({', '.join(args)})"

    vout = f"reinterpret_cast<{vector}*>(out)"
    stores = [f"{vout}[i0] = make_{vector}({', '.join(call(0, lane) for lane in lanes)});"]
    stores += [
        f"if (i{m} < nv) {{ {vout}[i{m}] = make_{vector}({', '.join(call(m, lane) for lane in lanes)}); }}"
        for m in range(1, vectors)
    ]
    scalar_args = [f"a{i}[j]" if d is None else names[i] for i, d in enumerate(operands)]
    sresult = f"{function}({', '.join(scalar_args)})"
    return _STREAM_SOURCE.format(
        prelude=prelude,
        params=", ".join(params),
        scalar=scalar,
        width=width,
        vectors=vectors,
        indices=indices,
        vload=" ".join(loads),
        vstore=" ".join(stores),
        sresult=sresult,
    )


_STREAM_CACHE: dict[tuple[str, str], cupy.RawKernel] = {}


def stream_kernel(name: str, dtype: str) -> cupy.RawKernel:
    """The streaming kernel for ``name`` on ``dtype`` (compiled once, then cached)."""
    key = (name, dtype)
    kernel = _STREAM_CACHE.get(key)
    if kernel is None:
        binary = name in STREAM_BINARY
        prelude = (
            f"#define OP(x, y) {STREAM_BINARY[name]}" if binary else f"#define OP(x) {STREAM_UNARY[name]}"
        )
        source = stream_source(prelude, "OP", [None, None] if binary else [None], dtype)
        kernel = _STREAM_CACHE[key] = cupy.RawKernel(source, "stream_kernel")
    return kernel
