"""The ruda_torch namespace itself, loaded on first use by ``ruda_torch/__init__.py``.

Most functions come from ``array_api_compat.torch``; the ones it leaves
non-conforming come from the topic modules beside this one.
"""

from __future__ import annotations

import sys

from array_api_compat import torch as _compat
from array_api_compat.torch import *  # noqa: F403
from ruda import _nan
from ruda.spec import API_VERSION
from torch import Tensor as _Tensor

from ruda_torch import fft, linalg  # noqa: F401
from ruda_torch._checks import named
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
    add,
    clip,
    expm1,
    floor_divide,
    log1p,
    negative,
    pow,
    remainder,
    round,
    sign,
    subtract,
    tanh,
)
from ruda_torch._info import __array_namespace_info__  # noqa: F401
from ruda_torch._manipulation import broadcast_shapes, moveaxis, roll, take, take_along_axis, tile  # noqa: F401
from ruda_torch._searching import searchsorted  # noqa: F401
from ruda_torch._set import isin, unique_all, unique_counts, unique_inverse, unique_values  # noqa: F401
from ruda_torch._statistical import count_nonzero, std, var  # noqa: F401

__array_api_version__ = API_VERSION


# the functions that read an attribute of what they are given first: a list or None met them as
# an AttributeError (see ruda._arguments)
broadcast_arrays = named(_compat.broadcast_arrays)
can_cast = named(can_cast, "torch tensors and dtypes")
clip = named(clip)
expand_dims = named(_compat.expand_dims)
finfo = named(finfo, "torch tensors and dtypes")
flip = named(_compat.flip)
iinfo = named(iinfo, "torch tensors and dtypes")
matrix_transpose = named(_compat.matrix_transpose)
nonzero = named(_compat.nonzero)
result_type = named(result_type, "torch tensors and dtypes")
squeeze = named(_compat.squeeze)
unstack = named(_compat.unstack)

# beyond the standard: what array engines (Cubed, Dask) call on a namespace
nanmax, nanmean, nanmin, nanprod, nansum = _nan.NanReductions(sys.modules[__name__], _Tensor).bound()
