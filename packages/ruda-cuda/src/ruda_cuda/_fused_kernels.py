"""CUDA code generation for ruda_cuda's fusion: one kernel for a chain of elementwise steps.

A chain is a list of steps, each one CuPy ufunc call whose loop (``_Op``: the input and output
types and the loop body CuPy compiles, its *routine*) was chosen for the step's input dtypes
exactly as CuPy's eager call chooses it. Each step becomes a block of the device function
``ruda_fused`` that declares the loop's ``in0``/``out0`` variables with the same types and
casts as CuPy's own ufunc kernel and runs the same routine; the step's value stays in a
register for the next step instead of going through memory. So a fused chain computes what
the unfused calls compute, bit for bit:

- each step's value passes through ``ruda_rounded``, an addition of -0.0 in inline PTX with
  explicit rounding (``add.rn``): it leaves every value as it is, and neither the compiler nor
  the assembler can see through it, so a multiplication that ends one step is never contracted
  with an addition of the next into a fused multiply-add (the unfused path rounds between
  them). The value of an addition or a subtraction needs no barrier (a sum is never the
  product a multiply-add contracts), nor does the last step's (it is stored). The kernels
  keep CuPy's compile options, so each step compiles as in its own kernel
  (``--fmad=false`` would change steps that contract internally, such as a complex product);
- Python scalars are converted on the host to the loop's input type, as CuPy converts them.

Two launchers run the function: a CuPy ``ElementwiseKernel`` (broadcasting, any strides and
dtypes) and, for contiguous float32/float64 operands of one shape, the vectorised grid-stride
kernel of :mod:`ruda_cuda._kernels` (CuPy's elementwise kernels stop well short of the copy
bandwidth on an H200). CuPy's own generator, ``cupy.fuse``, is not used: it traces Python
functions rather than taking a recorded chain, lets the compiler contract across steps, and
keeps its type casts private.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import cupy
import numpy as np
from cupy._core import _scalar  # get_typename: CuPy's C type of a dtype, with its header

from ruda_cuda import _kernels

#: the step barrier (see the module docstring); HIP has no inline PTX: there, values pass as
#: they are (untested: no AMD GPU was available)
_ROUNDED = r"""
#ifndef RUDA_ROUNDED
#define RUDA_ROUNDED
template <typename T> __device__ __forceinline__ T ruda_rounded(T x) { return x; }
#if !defined(__HIP_PLATFORM_AMD__)
__device__ __forceinline__ float ruda_rounded(float x) {
  float r; asm("add.rn.f32 %0, %1, 0f80000000;" : "=f"(r) : "f"(x)); return r;
}
__device__ __forceinline__ double ruda_rounded(double x) {
  double r; asm("add.rn.f64 %0, %1, 0d8000000000000000;" : "=d"(r) : "d"(x)); return r;
}
template <typename T>
__device__ __forceinline__ thrust::complex<T> ruda_rounded(thrust::complex<T> x) {
  return thrust::complex<T>(ruda_rounded(x.real()), ruda_rounded(x.imag()));
}
#endif
#endif
"""


#: the ufuncs whose value is a sum, never a product (see the barrier in the module docstring)
_SUMS = frozenset({"cupy_add", "cupy_subtract"})


class Step(NamedTuple):
    """One ufunc call of a chain: ``ufunc`` with its loop ``op`` on ``args``, which index the
    chain's values (its leaves first, then the steps' results in order)."""

    ufunc: Any
    op: Any
    args: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Chain:
    """What a fused kernel computes: leaves (arrays, or scalars passed as kernel parameters) and
    steps; the last step's value is the result. Equal chains share one compiled kernel."""

    leaf_dtypes: tuple[np.dtype[Any], ...]
    scalar_leaves: tuple[bool, ...]
    steps: tuple[Step, ...]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The result's dtype."""
        dtype: np.dtype[Any] = np.dtype(self.steps[-1].op.out_types[0])
        return dtype


def _cast(source: np.dtype[Any], target: np.dtype[Any], expr: str) -> str:
    """``expr`` of dtype ``source`` as ``target``, as CuPy's ufunc kernels cast their inputs
    (CuPy's ``fix_cast_expr``, which it keeps private: bool to number by ``? 1 : 0``, complex
    to real by its real part)."""
    if source.kind == target.kind:
        return expr
    if source.kind == "b":
        return f"({expr}) ? 1 : 0"
    if source.kind == "c":
        if target.kind == "b":
            return f"({expr}) != {_scalar.get_typename(source)}()"
        return f"({expr}).real()"
    return expr


def _typename(dtype: np.dtype[Any], headers: set[Any]) -> str:
    return str(_scalar.get_typename(dtype, headers))


def device_function(chain: Chain) -> str:
    """The CUDA source of ``ruda_fused(leaves...)``, the chain on one element, with the headers
    and ufunc preambles it needs."""
    headers: set[Any] = set()
    preambles: dict[str, None] = {}
    value_types = list(chain.leaf_dtypes)
    params = ", ".join(f"const {_typename(dtype, headers)} v{i}" for i, dtype in enumerate(chain.leaf_dtypes))
    body = []
    last = chain.steps[-1]
    for step in chain.steps:
        index = len(value_types)
        barrier = step is not last and step.ufunc.name not in _SUMS
        in_types = [np.dtype(t) for t in step.op.in_types]
        out_type = np.dtype(step.op.out_types[0])
        preambles[step.ufunc._preamble] = None
        typedefs = [f"typedef {_typename(t, headers)} in{j}_type;" for j, t in enumerate(in_types)]
        typedefs.append(f"typedef {_typename(out_type, headers)} out0_type;")
        inputs = [
            f"const in{j}_type in{j}({_cast(value_types[arg], in_types[j], f'v{arg}')});"
            for j, arg in enumerate(step.args)
        ]
        body.append(
            f"  // {step.ufunc.name}\n  {_typename(out_type, headers)} v{index};\n"
            f"  {{ {' '.join(typedefs)}\n    {' '.join(inputs)}\n    out0_type out0;\n"
            f"    {step.op.routine};\n    v{index} = {'ruda_rounded(out0)' if barrier else 'out0'}; }}"
        )
        value_types.append(out_type)
    result = _typename(chain.dtype, headers)
    return (
        f"{_scalar.format_type_decls(headers)}\n{''.join(preambles)}\n{_ROUNDED}\n"
        f"__device__ __forceinline__ {result} ruda_fused({params}) {{\n"
        + "\n".join(body)
        + f"\n  return v{len(value_types) - 1};\n}}\n"
    )


@functools.cache
def elementwise_kernel(chain: Chain) -> cupy.ElementwiseKernel:
    """The chain as a CuPy ``ElementwiseKernel``: array leaves broadcast against each other
    (any strides), scalar leaves are parameters."""
    names = [f"{'s' if scalar else 'a'}{i}" for i, scalar in enumerate(chain.scalar_leaves)]
    in_params = ", ".join(f"{t.name} {name}" for t, name in zip(chain.leaf_dtypes, names, strict=True))
    return cupy.ElementwiseKernel(
        in_params,
        f"{chain.dtype.name} out",
        f"out = ruda_fused({', '.join(names)})",
        "ruda_fused_kernel",
        preamble=device_function(chain),
    )


@functools.cache
def stream_kernel(chain: Chain) -> cupy.RawKernel:
    """The chain as a vectorised grid-stride kernel (``stream_kernel(leaves..., out, n)``):
    every array leaf is a contiguous, 16-byte-aligned array of the result's shape and dtype
    (float32 or float64)."""
    headers: set[Any] = set()
    operands = [
        f"const {_typename(dtype, headers)} s{i}" if is_scalar else None
        for i, (dtype, is_scalar) in enumerate(zip(chain.leaf_dtypes, chain.scalar_leaves, strict=True))
    ]
    # CuPy's ElementwiseKernel sources start with its complex type and carray.cuh (the helpers
    # ufunc preambles use); a raw kernel includes them itself
    prelude = "#include <cupy/complex.cuh>\n#include <cupy/carray.cuh>\n" + device_function(chain)
    source = _kernels.stream_source(prelude, "ruda_fused", operands, chain.dtype.name, vectors=1)
    return cupy.RawKernel(source, "stream_kernel")


#: reductions a chain can end in, by the expression that combines two partial results; only
#: order-independent ones: the unfused reductions are CuPy's (CUB's order for floats), so a
#: fused float sum, or a float max meeting +0.0 and -0.0, could differ in its last bit
REDUCTIONS: dict[str, str] = {
    "sum": "a + b",
    "prod": "a * b",
    "max": "max(a, b)",
    "min": "min(a, b)",
    "any": "a || b",
    "all": "a && b",
}


#: max and min of booleans, which C++'s max and min do not take
_BOOL_REDUCTIONS = {"max": "a || b", "min": "a && b"}


def _identity(reduction: str, dtype: np.dtype[Any]) -> str:
    """The C literal that ``reduction`` starts from in ``dtype`` (bool or an integer)."""
    if dtype.kind == "b":  # any, all, and max and min of booleans
        return "true" if reduction in ("all", "min") else "false"
    if reduction in ("sum", "prod"):
        return "0" if reduction == "sum" else "1"
    info = np.iinfo(dtype)
    value = info.min if reduction == "max" else info.max
    # the most negative integer has no literal of its own type: one above it, minus one
    return f"(({_scalar.get_typename(dtype)})({value + 1}LL) - 1)" if value < 0 else f"{value}ULL"


@functools.cache
def reduction_kernel(chain: Chain, reduction: str, dtype: np.dtype[Any]) -> cupy.ReductionKernel:
    """The chain ending in ``reduction`` (a key of :data:`REDUCTIONS`) in ``dtype``: each
    element's value converted to ``dtype`` (to bool for any/all, as a comparison with zero),
    then reduced; leaves broadcast as in :func:`elementwise_kernel`."""
    names = [f"{'s' if scalar else 'a'}{i}" for i, scalar in enumerate(chain.scalar_leaves)]
    in_params = ", ".join(f"{t.name} {name}" for t, name in zip(chain.leaf_dtypes, names, strict=True))
    headers: set[Any] = set()
    value = f"ruda_fused({', '.join(names)})"
    combine = REDUCTIONS[reduction]
    if dtype.kind == "b":
        value = _cast(chain.dtype, dtype, value)
        combine = _BOOL_REDUCTIONS.get(reduction, combine)
    return cupy.ReductionKernel(
        in_params,
        f"{dtype.name} out",
        f"({_typename(dtype, headers)})({value})",
        combine,
        "out = a",
        _identity(reduction, dtype),
        f"ruda_fused_{reduction}",
        reduce_type=_typename(dtype, headers),
        preamble=device_function(chain),
    )
