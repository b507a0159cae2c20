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

import sys

import numpy as _np
from array_api_compat.numpy import (
    abs,
    acos,
    acosh,
    add,
    all,
    any,
    argmax,
    argmin,
    argsort,
    asin,
    asinh,
    astype,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    bool,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    can_cast,
    ceil,
    complex64,
    complex128,
    concat,
    conj,
    copysign,
    cos,
    cosh,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    diff,
    divide,
    e,
    empty,
    empty_like,
    equal,
    exp,
    expand_dims,
    eye,
    flip,
    float32,
    float64,
    floor,
    from_dlpack,
    greater,
    greater_equal,
    hypot,
    iinfo,
    imag,
    inf,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    isfinite,
    isin,
    isinf,
    isnan,
    less,
    less_equal,
    linspace,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matmul,
    matrix_transpose,
    max,
    maximum,
    mean,
    meshgrid,
    min,
    minimum,
    moveaxis,
    multiply,
    nan,
    negative,
    newaxis,
    nextafter,
    nonzero,
    not_equal,
    ones,
    ones_like,
    permute_dims,
    pi,
    positive,
    prod,
    real,
    reciprocal,
    remainder,
    repeat,
    reshape,
    result_type,
    roll,
    round,
    searchsorted,
    sign,
    signbit,
    sin,
    sinh,
    sort,
    sqrt,
    square,
    squeeze,
    stack,
    subtract,
    sum,
    take,
    take_along_axis,
    tan,
    tensordot,
    tile,
    tril,
    triu,
    trunc,
    uint8,
    uint16,
    uint32,
    uint64,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
    unstack,
    vecdot,
    where,
    zeros,
    zeros_like,
)

from ruda import _nan, spec
from ruda.host import fft, linalg
from ruda.host._checks import named
from ruda.host._fixes import (
    arange,
    asarray,
    clip,
    expm1,
    finfo,
    floor_divide,
    full,
    full_like,
    pow,
    std,
    tanh,
    var,
)
from ruda.host._info import __array_namespace_info__
from ruda.spec import API_VERSION as __array_api_version__

# the functions that read an attribute of what they are given first: a list or None met them as
# an AttributeError (see ruda._arguments); NumPy's ufuncs stay themselves (atan2(x, None) raises
# NumPy's own error, as in NumPy)
astype = named(astype)
clip = named(clip)
iinfo = named(iinfo, "NumPy arrays and dtypes")
matrix_transpose = named(matrix_transpose)
nonzero = named(nonzero)
sign = named(sign)
std = named(std)
take_along_axis = named(take_along_axis)
unique_all = named(unique_all)
unique_inverse = named(unique_inverse)
unstack = named(unstack)
var = named(var)

# beyond the standard: what array engines (Cubed, Dask) call on a namespace; on NumPy's arrays
# and scalars (a reduction of NumPy's may give a scalar)
nanmax, nanmean, nanmin, nanprod, nansum = _nan.NanReductions(
    sys.modules[__name__], (_np.ndarray, _np.generic)
).bound()

__all__ = spec.namespace_names(*_nan.NAMES)
