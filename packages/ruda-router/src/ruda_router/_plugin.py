"""Registry entry for the router (entry point ``router`` in ``ruda.backends``).

A router is built at run time from namespaces (``Router((ruda.host,
ruda.torch))``), so the entry point stands for the package: its probe says the
router is available and how to build one. ``ruda.router`` (or
``ruda.namespace("router")``) is a default router over every available
backend, host first then by name, at most four; on a machine where only one
backend can run it is a router over that backend twice, so generic code still
meets two positions and the device discipline.
"""

from __future__ import annotations

import functools
from typing import Any

from ruda.plugin import Availability, Backend

_NOTE = (
    "routers are built at run time with ruda_router.Router((ns1, ns2, ...)); "
    "ruda.router routes over every available backend (at most four)"
)


class RouterBackend(Backend):
    """The router package; its namespace is the default router."""

    name = "router"
    module = "ruda_router"
    extra = "router"
    device_kinds = ()
    array_packages = ("ruda_router",)

    def probe(self) -> Availability:
        # Cheap and independent of the other backends: it must not probe them (ruda.backends()
        # probes every backend, this one included).
        return Availability(available=True, details={"note": _NOTE})

    def namespace(self) -> Any:
        return default_router()

    def array_type(self) -> type:
        from ruda_router._array import Array

        return Array

    def device_of_native(self, native: Any) -> Any:
        raise ValueError(
            f"{native!r} is a router device (a MultiDevice variant), not one of ruda's canonical devices; "
            "use x.device, or ruda.device_of(x.inner) for the holding backend's canonical device"
        )


@functools.cache
def default_router() -> Any:
    """The router over every available backend (host first, then by name; at most four)."""
    import ruda

    from ruda_router._router import Router

    names = [b.name for b in ruda.backends() if b.available and b.name != RouterBackend.name]
    namespaces = []
    for name in names[:4]:
        try:
            namespaces.append(ruda.namespace(name))
        except (ruda.BackendNotFoundError, ruda.BackendUnavailableError):
            continue
    if len(namespaces) == 1:
        namespaces.append(namespaces[0])
    return Router(tuple(namespaces), name="ruda.router")


PLUGIN = RouterBackend()
