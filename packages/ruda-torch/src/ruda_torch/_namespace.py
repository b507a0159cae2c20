"""The ruda_torch namespace itself, loaded on first use by ``ruda_torch/__init__.py``.

Most functions come from ``array_api_compat.torch``; the ones it leaves
non-conforming come from the topic modules beside this one.
"""

from __future__ import annotations

import sys

from array_api_compat.torch import (  # noqa: F401  (re-exported)
    abs,
    add,
    all,
    any,
    argmax,
    argmin,
    argsort,
    asin,
    asinh,
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
    broadcast_to,
    ceil,
    clip,
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
    equal,
    exp,
    expand_dims,
    flip,
    float32,
    float64,
    floor,
    greater,
    greater_equal,
    hypot,
    imag,
    inf,
    int8,
    int16,
    int32,
    int64,
    isfinite,
    isin,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matrix_transpose,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    nan,
    negative,
    newaxis,
    nextafter,
    nonzero,
    not_equal,
    permute_dims,
    pi,
    positive,
    pow,
    prod,
    real,
    reciprocal,
    repeat,
    reshape,
    roll,
    round,
    searchsorted,
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
    trunc,
    uint8,
    uint16,
    uint32,
    uint64,
    unstack,
    where,
)
from ruda import _nan
from ruda.spec import API_VERSION

from ruda_torch import fft, linalg  # noqa: F401
from ruda_torch._contraction import matmul, tensordot, vecdot  # noqa: F401
from ruda_torch._creation import (  # noqa: F401
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ruda_torch._dtypes import astype, can_cast, finfo, iinfo, isdtype, result_type  # noqa: F401
from ruda_torch._elementwise import (  # noqa: F401
    acos,
    acosh,
    expm1,
    floor_divide,
    log1p,
    remainder,
    sign,
    tanh,
)
from ruda_torch._info import __array_namespace_info__  # noqa: F401
from ruda_torch._manipulation import broadcast_shapes, moveaxis, tile  # noqa: F401
from ruda_torch._set import unique_all, unique_counts, unique_inverse, unique_values  # noqa: F401
from ruda_torch._statistical import std, var  # noqa: F401

__array_api_version__ = API_VERSION

# beyond the standard: what array engines (Cubed, Dask) call on a namespace
_nan_reductions = _nan.NanReductions(sys.modules[__name__])
nanmax = _nan_reductions.nanmax
nanmean = _nan_reductions.nanmean
nanmin = _nan_reductions.nanmin
nanprod = _nan_reductions.nanprod
nansum = _nan_reductions.nansum
