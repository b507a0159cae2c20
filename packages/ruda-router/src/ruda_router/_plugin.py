"""Registry entry for the router (entry point ``router`` in ``ruda.backends``).

A router is built at run time from namespaces (``Router((ruda.host,
ruda.torch))``), so the entry point stands for the package: its probe says the
router is available, how to build one, and which devices the default router
holds (the canonical devices of the backends it routes over, so ``ruda info``
lists them like any backend's). ``ruda.router`` (or
``ruda.namespace("router")``) is a default router over every available
backend, host first then by name, at most four; on a machine where only one
backend can run it is a router over that backend twice, so generic code still
meets two positions and the device discipline.
"""

from __future__ import annotations

import functools
from typing import Any

import ruda
from ruda.plugin import Availability, Backend

_NOTE = (
    "routers are built at run time with ruda_router.Router((ns1, ns2, ...)); "
    "ruda.router routes over every available backend (at most four)"
)


class RouterBackend(Backend):
    """The router package; its namespace is the default router."""

    name = "router"
    device_kinds = ()  # a router's devices are the canonical devices of the backends it routes over

    def probe(self) -> Availability:
        # Never through ruda.backends(): it probes every backend, this one included.
        xp = default_router()
        plugins = [ruda.backend_plugin(name) for name, _ in _positions()]
        devices = [
            plugins[d.index].device_of_native(d.device) for d in xp.__array_namespace_info__().devices()
        ]
        routes = ", ".join(
            f"{v.variant} {p.name}" for v, p in zip(xp.MultiDevice.variants, plugins, strict=True)
        )
        details = {"note": _NOTE, "default routing": routes}
        return Availability(available=True, devices=tuple(dict.fromkeys(devices)), details=details)

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
def _positions() -> tuple[tuple[str, Any], ...]:
    """Backend name and namespace of each position of the default router: the first four
    available backends, host first then by name (one twice where only one is available).
    Each is probed alone, through ruda.namespace, so the router's own probe can call this."""
    routed: list[tuple[str, Any]] = []
    for name in ruda.installed():
        if name == RouterBackend.name:
            continue
        try:
            routed.append((name, ruda.namespace(name)))
        except (ruda.BackendNotFoundError, ruda.BackendUnavailableError):
            continue
        if len(routed) == 4:
            break
    return tuple(routed * 2 if len(routed) == 1 else routed)


@functools.cache
def default_router() -> Any:
    """The router over every available backend (host first, then by name; at most four)."""
    from ruda_router._router import Router

    return Router(tuple(ns for _, ns in _positions()), name="ruda.router")


PLUGIN = RouterBackend()
