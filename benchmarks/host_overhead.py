"""What does ruda.host cost over calling NumPy directly?

Elementwise functions and reductions at 1e6 float64 elements (and 1e3, where
per-call overhead shows), each as a ratio to the same NumPy call in this
process, timed in CPU time (NumPy runs these single-threaded). Target: at most
1.05x at 1e6 elements. Results go to ``benchmarks/results/host_overhead.json``.

    python3 benchmarks/host_overhead.py
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import ruda
from _timing import benchmark_parser, ratio, write_results

xp = ruda.host

# (name, arguments): the ruda.host function against NumPy's function of the same name.
# Most of ruda.host *is* NumPy's function; the ones it wraps (expm1, tanh, floor, ceil, sign,
# clip, std, var, matmul) are where a cost could hide, so they are all here.
CASES = {
    "add": ("a", "b"),
    "multiply": ("a", "b"),
    "maximum": ("a", "b"),
    "exp": ("a",),
    "expm1": ("a",),
    "tanh": ("a",),
    "sqrt": ("b",),
    "floor": ("a",),
    "ceil": ("a",),
    "sign": ("a",),
    "clip": ("a", "lo", "hi"),
    "sum": ("a",),
    "mean": ("a",),
    "max": ("a",),
    "prod": ("b",),
    "std": ("a",),
    "var": ("a",),
}


def main() -> None:
    benchmark_parser(__doc__, markdown=False).parse_args()
    rng = np.random.default_rng(0)
    print(f"ruda.host vs NumPy {np.__version__}: seconds per call and ratio (ruda / numpy)")
    print(f"{'operation':<14}{'n':>9}{'ruda':>12}{'numpy':>12}{'ratio':>8}")
    worst, rows = 0.0, []
    for n in (1_000, 1_000_000):
        a = rng.standard_normal(n)
        b = rng.uniform(0.5, 1.5, n)
        values = {"a": a, "b": b, "lo": -0.5, "hi": 0.5}
        for name, arg_names in CASES.items():
            args = [values[v] for v in arg_names]
            ours, theirs = getattr(xp, name), getattr(np, name)
            t_ours, t_ref, r = ratio(
                functools.partial(ours, *args), functools.partial(theirs, *args), clock=time.process_time
            )
            if n == 1_000_000:
                worst = max(worst, r)
            print(f"{name:<14}{n:>9}{t_ours * 1e6:>10.1f}us{t_ref * 1e6:>10.1f}us{r:>8.3f}")
            rows.append({"op": name, "n": n, "ruda s": t_ours, "numpy s": t_ref})
    print(f"worst ratio at 1e6 elements: {worst:.3f} (target <= 1.05)")
    print(f"results: {write_results('host_overhead', {'numpy': np.__version__, 'rows': rows})}")


if __name__ == "__main__":
    main()
