"""The 8-operation elementwise chain the fusion benchmarks time (2 inputs, 1 output), as
namespace code and as one expression per step in WGSL and in CUDA C ({t}: the previous step's
value; a and b: the inputs), so that every backend's fused kernel meets the same hand-written one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Step = Callable[[Any, Any, Any, Any], Any]

#: (namespace step on (ns, t, x, y), WGSL expression, CUDA C expression)
STEPS: list[tuple[Step, str, str]] = [
    (lambda ns, t, x, y: x * y, "a[i] * b[i]", "a * b"),
    (lambda ns, t, x, y: t + x, "{t} + a[i]", "{t} + a"),
    (lambda ns, t, x, y: t * 0.5, "{t} * 0.5", "{t} * 0.5f"),
    (lambda ns, t, x, y: ns.sin(t), "sin({t})", "sinf({t})"),
    (lambda ns, t, x, y: t - y, "{t} - b[i]", "{t} - b"),
    (lambda ns, t, x, y: t * t, "{t} * {t}", "{t} * {t}"),
    (lambda ns, t, x, y: t + 1.0, "{t} + 1.0", "{t} + 1.0f"),
    (lambda ns, t, x, y: ns.sqrt(t), "sqrt({t})", "sqrtf({t})"),
]


def chain(ns: Any, x: Any, y: Any) -> Any:
    """The chain on ``x`` and ``y`` with namespace ``ns`` (a ruda backend, NumPy or CuPy)."""
    t = None
    for step, _, _ in STEPS:
        t = step(ns, t, x, y)
    return t


def lets(language: str, declare: str) -> str:
    """The steps as declarations ``t0`` ... ``t7`` in ``language`` ("wgsl" or "c"), each line
    ``{declare} tK = expr;`` (``let`` in WGSL, ``const float`` in C)."""
    column = 1 if language == "wgsl" else 2
    return "\n".join(
        f"  {declare} t{k} = {step[column].format(t=f't{k - 1}')};" for k, step in enumerate(STEPS)
    )
