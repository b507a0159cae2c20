"""One namespace over two backends: prepare data on the host, compute on torch, read back.

Every step that moves data says so (``to_device``); mixing the two backends in
one operation is an error that names both devices.

    python3 examples/router_two_backends.py
"""

from __future__ import annotations

import ruda
from ruda_router import DeviceMismatchError, Router


def main() -> None:
    xp = Router(("host", "torch"))  # registry names, resolved with ruda.namespace
    host, torch_cpu = xp.__array_namespace_info__().devices()[:2]
    print("devices:", host, torch_cpu)

    x = xp.linspace(0.0, 1.0, 5, dtype=xp.float32)  # first backend's default device
    w = xp.ones(5, dtype=xp.float32, device=torch_cpu)
    try:
        x * w
    except DeviceMismatchError as err:
        print("refused:", err)

    y = x.to_device(torch_cpu) * w  # explicit migration, then torch computes
    total = xp.sum(y)
    print("sum on", total.device, "=", float(total))
    print("back on the host:", ruda.to_numpy(y.to_device(host)))


if __name__ == "__main__":
    main()
