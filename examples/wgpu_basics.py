"""Array API code on any GPU through WebGPU: devices, what they compute, and moving data.

python3 examples/wgpu_basics.py
"""

from __future__ import annotations

import ruda
import ruda_wgpu as xp


def softmax(x, axis=-1):  # written once against the standard, runs on any namespace
    ns = x.__array_namespace__()
    e = ns.exp(x - ns.max(x, axis=axis, keepdims=True))
    return e / ns.sum(e, axis=axis, keepdims=True)


info = xp.__array_namespace_info__()
for dev in info.devices():
    print(f"{dev}: {dev.description}; dtypes: {', '.join(info.dtypes(device=dev))}")

x = xp.reshape(xp.linspace(-3, 3, 12), (3, 4))  # float32: the default where float64 is absent
p = softmax(x)
print(p)
print("rows sum to", xp.sum(p, axis=1))
print("on the host:", ruda.to_device(p, "cpu").dtype)  # explicit move, never implicit
print("engine:", xp.memory_stats())
