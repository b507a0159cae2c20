"""ruda_router: one Array API (2025.12) namespace over two to four backends.

    import ruda
    from ruda_router import Router, duo

    xp = Router((ruda.host, ruda.torch))        # or Router(("host", "torch"))
    x = xp.arange(4.0)                           # on the first backend's default device
    y = xp.ones(4, device=duo.MultiDevice.B2(torch.device("cpu")))
    x + y                                        # DeviceMismatchError: names both devices
    x.to_device(y.device) + y                    # explicit migration, then torch computes

Operations run on the backend that holds their inputs; nothing moves between
backends except through ``to_device``. ``ruda.router`` is a ready-made router
over every available backend (see :mod:`ruda_router._plugin`).
"""

from __future__ import annotations

from ruda_router import duo, quad, trio
from ruda_router._array import Array
from ruda_router._devices import MultiDeviceBase
from ruda_router._dtypes import DTYPES, DType
from ruda_router._router import DeviceMismatchError, Router

globals().update(DTYPES)  # ruda_router.float32 is the router's float32, as its repr says

__all__ = [
    "Array",
    "DType",
    "DeviceMismatchError",
    "MultiDeviceBase",
    "Router",
    "duo",
    "quad",
    "trio",
    *DTYPES,
]
