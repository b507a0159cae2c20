"""Canonical device names shared by every backend.

A device is written ``kind`` or ``kind:id``: ``"cpu"`` (the host),
``"cuda:0"``, ``"wgpu:0"``, ``"torch:cpu"``, ``"torch:cuda:1"``,
``"remote:ws://127.0.0.1:3000"``. The kind names the backend that owns the
device; the id is the backend's own, kept verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KIND = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True, order=True)
class Device:
    """A device in canonical form: a backend ``kind`` and an optional ``id``."""

    kind: str
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not _KIND.fullmatch(self.kind):
            raise ValueError(
                f"invalid device kind {self.kind!r}: expected lower-case letters, digits and '_', "
                "starting with a letter (e.g. 'cuda', 'wgpu', 'torch')"
            )
        if self.id is not None and (not isinstance(self.id, str) or not self.id):
            raise ValueError(
                f"invalid device id {self.id!r} for kind {self.kind!r}: expected a non-empty string"
            )

    @classmethod
    def parse(cls, text: str | Device) -> Device:
        """Parse ``"kind"`` or ``"kind:id"``; a :class:`Device` is returned unchanged."""
        if isinstance(text, Device):
            return text
        if not isinstance(text, str):
            raise TypeError(f"a device is a string like 'cuda:0' or a ruda.Device, not {type(text).__name__}")
        kind, sep, ident = text.strip().partition(":")
        if sep and not ident:
            raise ValueError(f"invalid device {text!r}: nothing after ':' (write e.g. 'cuda:0')")
        try:
            return cls(kind, ident if sep else None)
        except ValueError as err:
            raise ValueError(f"invalid device {text!r}: {err}") from None

    def __str__(self) -> str:
        return self.kind if self.id is None else f"{self.kind}:{self.id}"

    def __repr__(self) -> str:
        return f"Device({str(self)!r})"


CPU = Device("cpu")
