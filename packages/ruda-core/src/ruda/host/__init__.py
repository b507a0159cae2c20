"""ruda.host: NumPy 2, conforming to the Python Array API (2025.12).

Functions return plain ``numpy.ndarray`` objects: no wrapper, NumPy's full
speed, and SciPy and scikit-learn keep their fast paths. Most functions come
from ``array_api_compat.numpy``; the ones it leaves non-conforming are fixed
in :mod:`ruda.host._fixes`.

One limit follows from returning NumPy's own arrays: operators (``x // y``)
are NumPy's, so the spec's special cases that NumPy's operators get wrong
(floor division by infinity) are right only in the functions
(``floor_divide``). The official suite's skips file lists them.
"""

from __future__ import annotations

from array_api_compat.numpy import (  # noqa: F401  (re-exported)
    arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid, ones,
    ones_like, tril, triu, zeros, zeros_like, astype, can_cast, iinfo, isdtype, result_type, abs,
    acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_left_shift,
    bitwise_invert, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clip, conj, copysign, cos,
    cosh, divide, equal, exp, floor, greater, greater_equal, hypot, imag, isfinite, isinf, isnan,
    less, less_equal, log, log1p, log2, log10, logaddexp, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, multiply, negative, nextafter, not_equal, positive, pow, real,
    reciprocal, remainder, round, sign, signbit, sin, sinh, square, sqrt, subtract, tan, trunc,
    take, take_along_axis, matmul, matrix_transpose, tensordot, vecdot, broadcast_arrays,
    broadcast_shapes, broadcast_to, concat, expand_dims, flip, moveaxis, permute_dims, repeat,
    reshape, roll, squeeze, stack, tile, unstack, argmax, argmin, count_nonzero, nonzero,
    searchsorted, where, isin, unique_all, unique_counts, unique_inverse, unique_values, argsort,
    sort, cumulative_sum, cumulative_prod, max, mean, min, prod, std, sum, var, all, any, diff,
)
from array_api_compat.numpy import (  # noqa: F401  (re-exported)
    e, inf, nan, newaxis, pi, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float32, float64, complex64, complex128,
)

from ruda.host import fft, linalg
from ruda.host._fixes import expm1, finfo, floor_divide, tanh
from ruda.host._info import __array_namespace_info__
from ruda import spec
from ruda.spec import API_VERSION as __array_api_version__

__all__ = sorted(
    set(spec.FUNCTIONS) | set(spec.CONSTANTS) | set(spec.DTYPES)
    | {"fft", "linalg", "__array_namespace_info__", "__array_api_version__"}
)
