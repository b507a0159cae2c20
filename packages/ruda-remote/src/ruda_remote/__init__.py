"""ruda_remote: the Python Array API (2025.12) on a ruda server, over WebSocket.

    import ruda_remote as xp
    dev = xp.RemoteDevice("ws://127.0.0.1:3000", token="...")   # or set RUDA_REMOTE_URL
    x = xp.linspace(0, 1, 1000, device=dev)
    y = xp.sum(xp.exp(x))     # sent without waiting
    print(float(y))           # waits: the value comes back

Arrays are handles to arrays on the server, which computes with whichever ruda backend
it was started with (``ruda serve --backend cuda``). Operations are pipelined; only reads
wait, and a server-side error is raised at the next read, naming the operation.
"""

from __future__ import annotations

import numpy as _np
from ruda import spec as _spec

from ruda_remote import fft, linalg
from ruda_remote._array import Array
from ruda_remote._client import RemoteDevice
from ruda_remote._dispatch import default_device, set_default_device
from ruda_remote._functions import (
    arange,
    asarray,
    broadcast_arrays,
    broadcast_shapes,
    can_cast,
    empty,
    empty_like,
    eye,
    finfo,
    from_dlpack,
    full,
    full_like,
    iinfo,
    isdtype,
    linspace,
    meshgrid,
    nonzero,
    ones,
    ones_like,
    result_type,
    unstack,
    zeros,
    zeros_like,
)
from ruda_remote._functions import forward as _forward
from ruda_remote._info import __array_namespace_info__
from ruda_remote.errors import (
    RemoteAuthenticationError,
    RemoteConnectionError,
    RemoteError,
    RemoteTimeoutError,
)

__array_api_version__ = _spec.API_VERSION

# Every other function of the specification runs on the server as it is.
for _name in _spec.FUNCTIONS:
    if _name not in globals():
        globals()[_name] = _forward(_name)

# Dtypes are NumPy's scalar types, as in ruda.host (``x.dtype`` is a numpy.dtype equal to them):
# the client only names dtypes; the server's backend holds the data. (Not numpy.dtype objects:
# ``numpy.dtype("float64") == None`` is True.)
for _name in _spec.DTYPES:
    globals()[_name] = _np.dtype(_name).type

e, inf, nan, pi = _np.e, _np.inf, _np.nan, _np.pi
newaxis = None

__all__ = _spec.namespace_names(
    "Array",
    "RemoteDevice",
    "RemoteError",
    "RemoteConnectionError",
    "RemoteAuthenticationError",
    "RemoteTimeoutError",
    "default_device",
    "set_default_device",
)
