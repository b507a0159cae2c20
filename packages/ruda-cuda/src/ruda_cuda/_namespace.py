"""Everything ``ruda_cuda`` exports; imported on first use (it imports CuPy)."""

from __future__ import annotations

from cupy import (  # noqa: F401  (re-exported)
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

from ruda_cuda._creation import *  # noqa: F403
from ruda_cuda._dtypes import *  # noqa: F403
from ruda_cuda._elementwise import *  # noqa: F403
from ruda_cuda._functions import *  # noqa: F403

e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
pi = 3.141592653589793

