"""Registry entry for ruda_remote (entry point ``remote`` in ``ruda.backends``)."""

from __future__ import annotations

import os
from typing import Any

from ruda._device import Device
from ruda.plugin import Availability, Backend

_FIX = (
    "start a server (ruda serve --backend host --port 3000) and set "
    "RUDA_REMOTE_URL=ws://127.0.0.1:3000 (and RUDA_REMOTE_TOKEN if it has a token)"
)


class RemoteBackend(Backend):
    """A ruda server reached over WebSocket; available when ``RUDA_REMOTE_URL`` names one that answers."""

    name = "remote"

    def probe(self) -> Availability:
        url = os.environ.get("RUDA_REMOTE_URL")
        if not url:
            return Availability.unavailable("no server: RUDA_REMOTE_URL is not set", fix=_FIX)
        try:
            from ruda_remote._dispatch import default_device

            device = default_device()
        except Exception as err:
            return Availability.unavailable(f"server {url} does not answer: {err}", fix=_FIX)
        return Availability(
            available=True,
            devices=(self.device_of_native(device),),
            details={
                "server backend": str(device.info.get("backend")),
                "server device": str(device.info.get("device")),
            },
        )

    def array_type(self) -> type:
        from ruda_remote._array import Array

        return Array

    def device_type(self) -> type:
        from ruda_remote._client import RemoteDevice

        return RemoteDevice

    def native_device(self, device: Device) -> Any:
        from ruda_remote._auth import env_token
        from ruda_remote._client import RemoteDevice, open_devices

        for candidate in open_devices():
            if self.device_of_native(candidate) == device:
                return candidate
        if device.id is None:
            raise ValueError("a remote device names its server: 'remote:ws://host:port'")
        # RUDA_REMOTE_TOKEN is for the server RUDA_REMOTE_URL names, and no other.
        return RemoteDevice(device.id, token=env_token(device.id))

    def device_of_native(self, native: Any) -> Device:
        return Device("remote", native.url)

    def move(self, x: Any, native_device: Any) -> Any:
        return x.to_device(native_device)

    def from_dlpack(self, x: Any, native_device: Any) -> Any:
        from ruda_remote._functions import from_dlpack

        return from_dlpack(x, device=native_device)


PLUGIN = RemoteBackend()
