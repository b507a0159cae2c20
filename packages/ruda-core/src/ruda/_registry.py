"""Backend discovery through the ``ruda.backends`` entry point group.

Plugins are found by entry point only, so the core never imports a GPU
library. A plugin whose entry point fails to load, or whose probe raises,
is reported unavailable with its error; it never breaks ``import ruda`` or
another backend.
"""

from __future__ import annotations

import contextlib
import functools
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ruda._device import Device
from ruda.plugin import Availability, Backend, install_command

if TYPE_CHECKING:
    import importlib.metadata as md

GROUP = "ruda.backends"

#: Backends the project knows, with the pip extra of ``ruda`` that installs each.
KNOWN_EXTRAS: dict[str, str] = {
    "host": "",
    "cuda": "cuda",
    "wgpu": "wgpu",
    "torch": "torch",
    "router": "router",
    "remote": "remote",
}


class BackendNotFoundError(LookupError):
    """No installed backend has the requested name."""


class BackendUnavailableError(RuntimeError):
    """The backend is installed but cannot run here (no driver, no device, broken import)."""


@dataclass(frozen=True)
class BackendInfo:
    """One row of :func:`ruda.backends`."""

    name: str
    distribution: str | None
    version: str | None
    available: bool
    reason: str | None
    fix: str | None
    devices: tuple[Device, ...]
    details: dict[str, str]

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "available": self.available,
            "reason": self.reason,
            "fix": self.fix,
            "devices": [str(d) for d in self.devices],
            "details": dict(self.details),
        }


@functools.cache  # scanning installed metadata costs tens of milliseconds
def _entry_points() -> dict[str, md.EntryPoint]:
    import importlib.metadata as md  # on use: it is most of what ``import ruda`` would cost

    found: dict[str, md.EntryPoint] = {}
    for ep in md.entry_points(group=GROUP):
        found.setdefault(ep.name, ep)
    return found


@functools.cache
def _load_plugin(name: str) -> Backend:
    ep = _entry_points()[name]
    plugin = ep.load()
    if not isinstance(plugin, Backend):
        raise TypeError(f"entry point {ep.value!r} is a {type(plugin).__name__}, not a ruda.plugin.Backend")
    return plugin


def installed() -> list[str]:
    """Names of every backend with an entry point, sorted (host first)."""
    return sorted(_entry_points(), key=lambda n: (n != "host", n))


def plugin(name: str) -> Backend:
    """The plugin object of an installed backend; errors name what to install."""
    if name not in _entry_points():
        raise BackendNotFoundError(_not_found_message(name))
    try:
        return _load_plugin(name)
    except Exception as err:  # a broken plugin must not break the caller's other backends
        message = f"backend {name!r} failed to load: {type(err).__name__}: {err}"
        raise BackendUnavailableError(message) from err


@functools.cache
def _probe(name: str) -> Availability:
    try:
        return plugin(name).probe()
    except BackendUnavailableError as err:
        cause = err.__cause__
        if isinstance(cause, ImportError) and cause.name:
            # The plugin's own library is missing (e.g. CuPy): say which, and how to get it.
            extra = KNOWN_EXTRAS.get(name)
            fix = install_command(extra) if extra else f"install the package providing {cause.name!r}"
            return Availability.unavailable(f"cannot import {cause.name!r}: {cause}", fix=fix)
        return Availability.unavailable(str(err), fix=_reinstall_hint(name))
    except Exception as err:
        last = traceback.format_exception_only(err)[-1].strip()
        return Availability.unavailable(f"plugin error: {last}", fix=_reinstall_hint(name))


def backends() -> list[BackendInfo]:
    """Every installed backend: distribution, version, availability and devices."""
    rows = []
    for name in installed():
        ep = _entry_points()[name]
        dist = ep.dist.name if ep.dist is not None else None
        version = ep.dist.version if ep.dist is not None else None
        status = _probe(name)
        rows.append(
            BackendInfo(
                name,
                dist,
                version,
                status.available,
                status.reason,
                status.fix,
                tuple(status.devices),
                dict(status.details),
            )
        )
    return rows


def namespace(name: str) -> ModuleType:
    """The Array API namespace of backend ``name``, imported on first use."""
    if name not in _entry_points():
        raise BackendNotFoundError(_not_found_message(name))
    status = _probe(name)
    if not status.available:
        raise unavailable(name, status)
    return plugin(name).namespace()


def unavailable(name: str, status: Availability | None = None) -> BackendUnavailableError:
    """The error for installed backend ``name`` that cannot run here, saying why and what fixes
    it (``status``: its probe's answer, asked for here when not given)."""
    status = status or _probe(name)
    fix = f" Fix: {status.fix}" if status.fix else ""
    return BackendUnavailableError(f"backend {name!r} is installed but unavailable: {status.reason}.{fix}")


def _loadable_plugins() -> Iterator[Backend]:
    """Every installed plugin that loads, in :func:`installed` order (broken ones are skipped)."""
    for name in installed():
        try:
            yield plugin(name)
        except BackendUnavailableError:
            continue


def plugin_for_device(device: Device) -> Backend:
    """The installed backend that owns devices of ``device.kind``."""
    for candidate in _loadable_plugins():
        if device.kind in candidate.device_kinds:
            return candidate
    kinds = sorted({k for candidate in _loadable_plugins() for k in candidate.device_kinds})
    raise BackendNotFoundError(
        f"no installed backend owns device {str(device)!r} (kind {device.kind!r}); "
        f"installed device kinds: {', '.join(kinds) or 'none'}"
    )


def plugin_for_array(x: object) -> Backend:
    """The installed backend whose arrays include ``x``."""
    for candidate in _loadable_plugins():
        if candidate.owns(x):
            return candidate
    raise TypeError(
        f"{type(x).__module__}.{type(x).__qualname__} is not an array of any installed ruda backend "
        f"({', '.join(installed())})"
    )


def exporting(x: object) -> contextlib.AbstractContextManager[Any]:
    """The context in which the backend owning ``x`` can export it through DLPack (nothing
    for an array no installed backend owns): ``with ruda.exporting(x): y = other.from_dlpack(x)``.
    ``ruda.to_device`` and ``ruda.to_numpy`` enter it themselves."""
    for candidate in _loadable_plugins():
        if candidate.owns(x):
            return candidate.exporting(x)
    return contextlib.nullcontext()


def plugin_for_native_device(native: object) -> Backend | None:
    """The installed backend whose own device objects include ``native``, or None."""
    for candidate in _loadable_plugins():
        if candidate.owns_device(native):
            return candidate
    return None


def clear_cache() -> None:
    """Forget installed plugins and their probes (after installing a package at run time, and in tests)."""
    _entry_points.cache_clear()
    _load_plugin.cache_clear()
    _probe.cache_clear()


def _reinstall_hint(name: str) -> str:
    extra = KNOWN_EXTRAS.get(name)
    return f"reinstall it: {install_command(extra)}" if extra else "reinstall the package that provides it"


def _not_found_message(name: str) -> str:
    have = ", ".join(installed()) or "none"
    extra = KNOWN_EXTRAS.get(name)
    if extra:
        return (
            f"backend {name!r} is not installed (installed: {have}). "
            f"Install it with: {install_command(extra)}"
        )
    known = ", ".join(k for k in KNOWN_EXTRAS)
    return f"unknown backend {name!r}: installed backends are {have}; ruda knows {known}"
