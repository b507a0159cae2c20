"""Everything ``ruda_cuda`` exports; imported on first use (it imports CuPy)."""

from __future__ import annotations

import sys

from cupy import bool_ as bool
from cupy import (
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from cupy import ndarray as _cupy_ndarray
from ruda import _nan
from ruda.spec import API_VERSION as __array_api_version__  # noqa: N811

import ruda_cuda.fft as fft
import ruda_cuda.linalg as linalg
from ruda_cuda._array import Array
from ruda_cuda._creation import *  # noqa: F403
from ruda_cuda._dtypes import *  # noqa: F403
from ruda_cuda._elementwise import *  # noqa: F403
from ruda_cuda._functions import *  # noqa: F403
from ruda_cuda._info import __array_namespace_info__

e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
pi = 3.141592653589793

# beyond the standard: what array engines (Cubed, Dask) call on a namespace, computed on the
# array's device
nanmax, nanmean, nanmin, nanprod, nansum = _nan.NanReductions(sys.modules[__name__], _cupy_ndarray).bound()

__all__ = [  # what ruda_cuda re-exports (the package checks it against the standard's names)
    "Array",
    "__array_api_version__",
    "__array_namespace_info__",
    "bool",
    "complex64",
    "complex128",
    "e",
    "fft",
    "float32",
    "float64",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "linalg",
    "nan",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nansum",
    "newaxis",
    "pi",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
