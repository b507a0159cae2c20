"""The contract between the ruda core and a backend package.

A backend package registers one :class:`Backend` instance in the entry point
group ``ruda.backends``::

    [project.entry-points."ruda.backends"]
    wgpu = "ruda_wgpu._plugin:PLUGIN"

The module named there must be cheap to import: it may import ``ruda`` but not
its GPU library. The core calls :meth:`Backend.probe` to learn whether the
backend can run here, and :meth:`Backend.namespace` to import the real
namespace only when a user asks for it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlparse

from ruda._device import Device
from ruda._tensordata import TensorData


@functools.cache
def install_command(extra: str) -> str:
    """The pip command that installs ruda's ``extra`` (``cuda``, ``wgpu``, ...) on this machine.

    ``pip install "ruda[cuda]"`` where ``ruda`` came from a package index. Where it was installed
    from a clone of the repository (pip records the folder, PEP 610), the packages are not on an
    index yet, so the clone's own folders: the root's metapackage with the extra where it has
    it (the CUDA ones), else the backend's package folder (``packages/ruda-wgpu``). The root's
    plain install would add every backend, and torch with them.
    """
    import importlib.metadata  # on use: it is most of what ``import ruda`` would cost

    try:
        direct = importlib.metadata.distribution("ruda").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        direct = None
    if direct:
        url = urlparse(json.loads(direct).get("url", ""))
        root = Path(unquote(url.path)).parent.parent  # packages/ruda-core -> the clone's root
        if url.scheme == "file" and (root / "packages" / "ruda-core").is_dir():
            package = root / "packages" / f"ruda-{extra}"
            if extra not in _root_extras(root) and package.is_dir():
                return f'pip install "{package}"'
            return f'pip install "{root}[{extra}]"'
    return f'pip install "ruda[{extra}]"'


def _root_extras(root: Path) -> set[str]:
    """The extras of the metapackage at a clone's ``root`` (none where it cannot be read)."""
    import tomllib

    try:
        project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return set()
    return set(project.get("optional-dependencies", {}))


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run on this machine, and if not, why and how to fix it."""

    available: bool
    reason: str | None = None
    fix: str | None = None
    devices: tuple[Device, ...] = field(default_factory=tuple)
    details: dict[str, str] = field(default_factory=dict)

    @classmethod
    def unavailable(cls, reason: str, fix: str | None = None) -> Availability:
        return cls(available=False, reason=reason, fix=fix)


class Backend:
    """Describes one backend to the core; subclass it in each backend package.

    Subclasses set :attr:`name`, and :attr:`module`, :attr:`extra`, :attr:`device_kinds` and
    :attr:`array_packages` where they differ from the defaults that follow from the name
    (``ruda_<name>``, ``<name>``, ``("<name>",)``, ``module``'s top-level package); they
    usually override :meth:`probe`, :meth:`native_device` and :meth:`device_of_native`.
    """

    #: registry name: ``ruda.<name>`` and ``ruda.namespace(name)``
    name: str = ""
    #: import path of the namespace Cubed takes as its backend (:func:`ruda.scale`), where Cubed
    #: needs the namespace presented otherwise (``ruda_torch.cubed``: NumPy dtypes); empty: ``module``
    cubed_module: str = ""

    @property
    def module(self) -> str:
        """Import path of the Array API namespace: the package ``ruda_<name>``."""
        return f"ruda_{self.name}"

    @property
    def extra(self) -> str:
        """Pip extra of the ``ruda`` distribution that installs this backend: its name."""
        return self.name

    @property
    def device_kinds(self) -> tuple[str, ...]:
        """The kinds of canonical device string this backend owns (``"cuda"`` owns ``"cuda:0"``):
        its name."""
        return (self.name,)

    @property
    def array_packages(self) -> tuple[str, ...]:
        """Top-level packages whose array types this backend owns: the one of :attr:`module`."""
        return (self.module.partition(".")[0],)

    def probe(self) -> Availability:
        """Say whether the backend can compute here. Must not raise."""
        return Availability(available=True, devices=self.devices())

    def devices(self) -> tuple[Device, ...]:
        """The canonical devices of this backend (default: ask the namespace)."""
        info = self.namespace().__array_namespace_info__()
        return tuple(self.device_of_native(d) for d in info.devices())

    def namespace(self) -> ModuleType:
        """Import and return the Array API namespace."""
        return importlib.import_module(self.module)

    def native_device(self, device: Device) -> Any:
        """The namespace's own device object for a canonical device."""
        for native in self.namespace().__array_namespace_info__().devices():
            if self.device_of_native(native) == device:
                return native
        raise ValueError(f"{self.name} has no device {device}; it has {list(map(str, self.devices()))}")

    def device_of_native(self, native: Any) -> Device:
        """The canonical device for one of the namespace's own device objects."""
        return Device.parse(str(native))

    def device_type(self) -> type | tuple[type, ...]:
        """The class(es) of the namespace's own device objects, which ``ruda.to_device`` takes
        besides canonical devices (none by default)."""
        return ()

    def owns_device(self, native: Any) -> bool:
        """Whether ``native`` is one of this backend's own device objects (imports nothing new)."""
        if type(native).__module__.partition(".")[0] not in self.array_packages:
            return False
        return isinstance(native, self.device_type())

    def array_type(self) -> type | tuple[type, ...]:
        """The array type(s) this backend's namespace returns."""
        raise NotImplementedError(f"backend {self.name!r} does not name its array type")

    def owns(self, x: Any) -> bool:
        """Whether ``x`` is an array of this backend (imports nothing new)."""
        if type(x).__module__.partition(".")[0] not in self.array_packages:
            return False
        return isinstance(x, self.array_type())

    def exporting(self, x: Any) -> contextlib.AbstractContextManager[Any]:
        """A context in which ``x``, an array of this backend, can be exported through DLPack
        (the core enters it around every export). Nothing by default; torch, for one, exports
        a CUDA tensor only while its GPU is torch's current device."""
        return contextlib.nullcontext()

    def move(self, x: Any, native_device: Any) -> Any:
        """Move an array of this backend to another of its own devices."""
        return x.to_device(native_device)

    def from_dlpack(self, x: Any, native_device: Any) -> Any:
        """Import a foreign array through DLPack onto ``native_device`` (zero-copy where
        the memory is shared). Raise when DLPack cannot do it; the core then copies."""
        return self.namespace().from_dlpack(x, device=native_device)

    def from_tensor_data(self, data: TensorData, native_device: Any) -> Any:
        """Build an array on ``native_device`` from host bytes."""
        xp = self.namespace()
        return xp.asarray(data.to_numpy(), device=native_device, copy=True)
