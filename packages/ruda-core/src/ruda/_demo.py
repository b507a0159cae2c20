"""``ruda demo``: one small least-squares fit on every available backend, checked against NumPy.

The fit uses matmul, elementwise arithmetic and reductions, written once
against ``xp``: the same code a user would write.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ruda import _registry
from ruda._tensordata import to_numpy

SAMPLES, FEATURES, STEPS = 256, 4, 200


def fit(xp: Any, features: Any, targets: Any, steps: int = STEPS) -> tuple[Any, Any]:
    """Least squares by gradient descent; returns (weights, mean squared error)."""
    n = features.shape[0]
    weights = xp.zeros((features.shape[1], 1), dtype=features.dtype, device=features.device)
    rate = 0.5
    for _ in range(steps):
        residual = features @ weights - targets
        weights = weights - (rate / n) * (xp.matrix_transpose(features) @ residual)
    loss = xp.mean(xp.square(features @ weights - targets))
    return weights, loss


@dataclass(frozen=True)
class DemoResult:
    backend: str
    ok: bool
    seconds: float | None
    max_error: float | None
    message: str

    def as_dict(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "ok": self.ok,
            "seconds": self.seconds,
            "max_error": self.max_error,
            "message": self.message,
        }


def problem() -> tuple[np.ndarray, np.ndarray]:
    """A well-conditioned float32 regression problem with a known answer."""
    rng = np.random.default_rng(0)
    features = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    true_weights = np.arange(1, FEATURES + 1, dtype=np.float32).reshape(-1, 1)
    targets = features @ true_weights + 0.01 * rng.standard_normal((SAMPLES, 1)).astype(np.float32)
    return features, targets


def run_demo() -> list[DemoResult]:
    """Run the fit on every installed backend and compare with the same fit in NumPy."""
    features, targets = problem()
    want_w, want_loss = fit(np, features, targets)
    results = []
    for info in _registry.backends():
        if not info.available:
            results.append(DemoResult(info.name, False, None, None, f"unavailable: {info.reason}"))
            continue
        try:
            xp = _registry.namespace(info.name)
            start = time.perf_counter()
            got_w, got_loss = fit(xp, xp.asarray(features), xp.asarray(targets))
            got = np.append(to_numpy(got_w).ravel(), float(got_loss))
            seconds = time.perf_counter() - start
        except Exception as err:  # report every backend, even one that fails
            results.append(DemoResult(info.name, False, None, None, f"{type(err).__name__}: {err}"))
            continue
        want = np.append(want_w.ravel(), float(want_loss))
        error = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-3)))
        ok = error < 1e-3
        message = f"weights {np.round(got[:-1], 3).tolist()}, loss {got[-1]:.3g}"
        results.append(DemoResult(info.name, ok, seconds, error, message))
    return results
