"""The shared property-based checks, through a router, on each of its two backends.

Arrays drawn by the kit land on the router's first backend, so each class puts
a different library first: the host (NumPy) and torch each compute every check
behind the router, and results are compared with NumPy's.
"""

from __future__ import annotations

from typing import ClassVar

import ruda
from router_backends import second_backend
from ruda.testing.conformance import ConformanceChecks
from ruda_router import Router

_TORCH = second_backend()


class TestRouterHostFirst(ConformanceChecks):
    xp = Router((ruda.host, _TORCH))
    max_examples = 15


class TestRouterTorchFirst(ConformanceChecks):
    xp = Router((_TORCH, ruda.host))
    max_examples = 10
    # The kit draws complex arrays for min and max, whose order the standard leaves undefined;
    # torch refuses them ("max_values_cpu" not implemented for 'ComplexFloat').
    unsupported: ClassVar[dict[str, str]] = {
        "min": "complex min/max: undefined by the standard, refused by torch",
        "max": "complex min/max: undefined by the standard, refused by torch",
        # The kit's values overflow prod; torch accumulates unsigned ints in int64 where NumPy
        # uses uint64, so the wrapped results differ (overflow is undefined by the standard).
        "prod": "overflowing prod: torch accumulates uint8 in int64, NumPy in uint64",
    }
