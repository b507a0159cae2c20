"""Fit a line to noisy data with the same code on every backend that can run here.

    python3 examples/least_squares.py

The function ``fit`` knows nothing about backends: it takes an Array API
namespace ``xp`` and arrays of that namespace. ruda finds the backends.
"""

from __future__ import annotations

import numpy as np
import ruda


def fit(xp, x, y):  # type: ignore[no-untyped-def]
    """Slope and intercept of the least-squares line through (x, y), from the normal equations."""
    n = x.shape[0]
    mean_x, mean_y = xp.sum(x) / n, xp.sum(y) / n
    slope = xp.sum((x - mean_x) * (y - mean_y)) / xp.sum(xp.square(x - mean_x))
    return slope, mean_y - slope * mean_x


def main() -> None:
    rng = np.random.default_rng(0)
    x = np.linspace(0, 10, 10_000, dtype=np.float32)
    y = (3 * x + 2 + rng.normal(0, 0.5, x.shape)).astype(np.float32)
    for backend in ruda.backends():
        if not backend.available:
            print(f"{backend.name:>8}: skipped ({backend.reason})")
            continue
        xp = ruda.namespace(backend.name)
        slope, intercept = fit(xp, xp.asarray(x), xp.asarray(y))
        line = f"y = {float(slope):.3f} x + {float(intercept):.3f}"
        print(f"{backend.name:>8}: {line}  on {xp.__array_namespace_info__().default_device()}")


if __name__ == "__main__":
    main()
