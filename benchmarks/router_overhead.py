"""What does the router's dispatch cost over calling a backend's namespace directly?

``Router((ruda.host, ruda.torch))``: the same operation through the router and
straight on the inner namespace, on each backend position, at 1e3 float32
elements (where the per-call cost shows) and 1e6 (where it should vanish).
Printed as seconds per call, the added microseconds, and the ratio
(router / direct), timed in CPU time with the two sides interleaved. Results go to
``benchmarks/results/router_overhead.json``.

    python3 benchmarks/router_overhead.py
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import ruda
from _timing import benchmark_parser, ratio, write_results
from ruda_router import Router

# name -> (call through the router or the inner namespace, on arrays a and b)
CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add(a, b)": lambda xp, a, b: xp.add(a, b),
    "a * b": lambda xp, a, b: a * b,
    "exp(a)": lambda xp, a, b: xp.exp(a),
    "where(a > b, a, 0.0)": lambda xp, a, b: xp.where(a > b, a, 0.0),
    "sum(a)": lambda xp, a, b: xp.sum(a),
    "a[1:]": lambda xp, a, b: a[1:],
    "astype(a, float64)": lambda xp, a, b: xp.astype(a, xp.float64),
}


def _backends() -> list[tuple[str, Any]]:
    found = [("host", ruda.host)]
    try:
        found.append(("torch", ruda.namespace("torch")))
    except (ruda.BackendNotFoundError, ruda.BackendUnavailableError) as err:
        print(f"torch backend skipped: {err}")
    return found


def main() -> None:
    benchmark_parser(__doc__, markdown=False).parse_args()
    backends = _backends()
    xp = Router(tuple(ns for _, ns in backends) if len(backends) > 1 else (ruda.host, ruda.host))
    variants = xp.MultiDevice.variants
    rng = np.random.default_rng(0)
    print(f"{xp!r} vs its inner namespaces: seconds per call, added time, ratio (router / direct)")
    print(f"{'backend':<8}{'operation':<24}{'n':>9}{'router':>11}{'direct':>11}{'added':>10}{'ratio':>8}")
    rows = []
    for n in (1_000, 1_000_000):
        a_host = rng.standard_normal(n).astype(np.float32)
        b_host = rng.standard_normal(n).astype(np.float32)
        for position, (label, ns) in enumerate(backends):
            device = variants[position](ns.__array_namespace_info__().default_device())
            ra, rb = xp.asarray(a_host, device=device), xp.asarray(b_host, device=device)
            da, db = ra.inner, rb.inner
            for name, case in CASES.items():
                through = functools.partial(case, xp, ra, rb)
                direct = functools.partial(case, ns, da, db)
                t_router, t_direct, r = ratio(through, direct, clock=time.process_time)
                added = (t_router - t_direct) * 1e6
                print(
                    f"{label:<8}{name:<24}{n:>9}{t_router * 1e6:>9.1f}us{t_direct * 1e6:>9.1f}us"
                    f"{added:>8.1f}us{r:>8.3f}"
                )
                rows.append(
                    {"backend": label, "op": name, "n": n, "router s": t_router, "direct s": t_direct}
                )
    print(f"results: {write_results('router_overhead', {'router': repr(xp), 'rows': rows})}")


if __name__ == "__main__":
    main()
