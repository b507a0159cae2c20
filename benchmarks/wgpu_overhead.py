"""What does ruda_wgpu's layer cost over a minimal hand-written wgpu-py kernel doing the same work?

For add, exp, sum (1e3 ... 1e7 elements) and matmul (256 ... 2048), each timed in
this process three ways: ``ruda_wgpu`` (pool, batching, generic strided kernels),
a minimal hand-written wgpu-py program (one fixed pipeline, fixed buffers and
bind group, all dispatches in one compute pass, the same algorithm), and NumPy (in rounds of
its own, so that the GPU does not idle between the GPU contenders). Every result of ours is
kept until the GPU has finished: lazy operations whose result is dropped would not run.

Fusion: ``chain`` is an 8-operation elementwise chain on 1e7 float32 (2 inputs, 1 output),
ours (one fused kernel; the row also gives ours with fusion off, 8 kernels, and the chain
wrapped by ``xp.fuse``, which replays its traced kernel without recording the operations)
against one hand-written fused kernel; then again in rounds of 40 calls, where the hand-written
side and ``xp.fuse`` are bound by the GPU (fuse/hand compares the kernels) and ours by the
host's recording and launching of each call. ``loop`` is 1000 dependent operations on 1e3
elements, microseconds per operation, fused, unfused and with each of its two alternating
steps wrapped by ``xp.fuse`` (there the cost is all Python and dispatch; no hand-written
contender).
Both GPU sides wait for completion the same way (``ruda_wgpu._wait``: spinning on the queue's
work-done callback on a GPU, then blocking). The
table reports the fastest round of each and the ratios ours/hand-written (the
layer's overhead: the median of ratios taken round by round, and the ratio of the two fastest
rounds, which a shared machine's bursts of load disturb least), ours/hand on the GPU's own
clock (timestamps around each side's pass: how the kernels compare, the host's part left out)
and ours/NumPy. Results go to
``benchmarks/results/wgpu_overhead-<device>.json``, and a plot beside when matplotlib is
installed.

    python3 benchmarks/wgpu_overhead.py            # sizes capped for CPU adapters (lavapipe)
    python3 benchmarks/wgpu_overhead.py --full     # every size, for real GPUs
    python3 benchmarks/wgpu_overhead.py --ops add,sum --min-size 1000000 --rounds 3
    python3 benchmarks/wgpu_overhead.py --markdown # the README's tables, from the results files
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from math import nan
from pathlib import Path
from typing import Any

import numpy as np
import ruda_wgpu as xp
import wgpu
from _chain import STEPS, chain, lets
from _gpu_bench import save
from _timing import RESULTS, benchmark_parser, device_slug
from ruda_wgpu import _wait
from ruda_wgpu._devices import native_api
from ruda_wgpu._gpu_time import timestamp_period

WG = 256
#: calls a round of the chain's GPU-bound rounds (see bench_chain)
STEADY_CALLS = 40
#: rounds of each side timed on the GPU's clock (see gpu_times)
GPU_TRIALS = 9

ELEMENTWISE = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * 256u + lid;
  if (i >= arrayLength(&o)) { return; }
  o[i] = EXPR;
}
"""

REDUCE = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
var<workgroup> t: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = nwg.x * nwg.y; let w = wid.y * nwg.x + wid.x;
  let n = arrayLength(&a); let chunk = (n + g - 1u) / g;
  let lo = w * chunk; let hi = min(lo + chunk, n);
  var acc = 0.0f;
  for (var j = lo + lid; j < hi; j = j + 256u) { acc = acc + a[j]; }
  t[lid] = acc;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s) { t[lid] = t[lid] + t[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { o[w] = t[0]; }
}
"""

MATMUL = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
var<workgroup> ta: array<array<f32, 16>, 16>;
var<workgroup> tb: array<array<f32, 16>, 16>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let n = NU;
  let row = wid.y * 16u + lid.y; let col = wid.x * 16u + lid.x;
  var acc = 0.0f;
  for (var k0 = 0u; k0 < n; k0 = k0 + 16u) {
    ta[lid.y][lid.x] = select(0.0f, a[row * n + k0 + lid.x], row < n && k0 + lid.x < n);
    tb[lid.y][lid.x] = select(0.0f, b[(k0 + lid.y) * n + col], k0 + lid.y < n && col < n);
    workgroupBarrier();
    for (var j = 0u; j < 16u; j = j + 1u) { acc = acc + ta[lid.y][j] * tb[j][lid.x]; }
    workgroupBarrier();
  }
  if (row < n && col < n) { o[row * n + col] = acc; }
}
"""


#: the benchmark chain as one hand-written fused kernel (inputs a and b, output o)
CHAIN = ELEMENTWISE.replace("o[i] = EXPR;", f"{lets('wgsl', 'let')}\n  o[i] = t{len(STEPS) - 1};")


class HandWritten:
    """A minimal wgpu-py program: fixed buffers, one pipeline per kernel, one pass per batch."""

    def __init__(self) -> None:
        ours = xp.__array_namespace_info__().default_device()
        ours.device  # noqa: B018  (opens ours, whose wait this one copies)
        timed = [f for f in ("timestamp-query",) if f in ours.features]
        self.device = ours.adapter.request_device_sync(required_features=timed)
        self.usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        # the fastest wait wgpu-native allows, as ours waits (spinning as long as ours does)
        self.waiter = _wait.Waiter(native_api(self.device), self.device, ours._waiter.spin_seconds)
        self.cpu = ours.cpu
        self._busy: list[tuple[Any, Any, tuple[int, int, int]]] | None = None
        #: where a run's pass writes its timestamps (see gpu_seconds); None without the feature
        self.queries: Any = None
        if timed:  # in ticks of `period` ns
            self.queries = self.device.create_query_set(type="timestamp", count=2)
            self.ticks = self.device.create_buffer(
                size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
            )
            self.period = timestamp_period(self.device)

    def buffer(self, host: np.ndarray | None, nbytes: int = 0) -> Any:
        buf = self.device.create_buffer(
            size=max(host.nbytes if host is not None else nbytes, 4), usage=self.usage
        )
        if host is not None:
            self.device.queue.write_buffer(buf, 0, host)
        return buf

    def pipeline(self, code: str, buffers: list[Any]) -> tuple[Any, Any]:
        module = self.device.create_shader_module(code=code)
        pipe = self.device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"}
        )
        group = self.device.create_bind_group(
            layout=pipe.get_bind_group_layout(0),
            entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(buffers)],
        )
        return pipe, group

    def run(self, steps: list[tuple[Any, Any, tuple[int, int, int]]], reps: int, timed: bool = False) -> None:
        """Submit ``reps`` times the dispatches ``steps`` in one pass (``timed``: with timestamps
        written at its beginning and end, for gpu_seconds)."""
        encoder = self.device.create_command_encoder()
        writes = None
        if timed:
            writes = {
                "query_set": self.queries,
                "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1,
            }
        cpass = encoder.begin_compute_pass(timestamp_writes=writes)
        for _ in range(reps):
            for pipe, group, grid in steps:
                cpass.set_pipeline(pipe)
                cpass.set_bind_group(0, group)
                cpass.dispatch_workgroups(*grid)
        cpass.end()
        if timed:
            encoder.resolve_query_set(self.queries, 0, 2, self.ticks, 0)
        self.device.queue.submit([encoder.finish()])

    def gpu_seconds(self, steps: list[tuple[Any, Any, tuple[int, int, int]]], reps: int) -> float:
        """The GPU's own time for a run (see run), from the timestamps of its pass."""
        self.run(steps, reps, timed=True)
        begin, end = np.frombuffer(self.device.queue.read_buffer(self.ticks), np.uint64)
        return float(end - begin) * self.period * 1e-9

    def wait(self) -> None:
        self.waiter.wait()

    def keep_busy(self, seconds: float = 1.0) -> None:
        """Keep the GPU busy with the chain's kernel for ``seconds`` (nothing on a CPU adapter).

        A GPU left idle for a while, as by NumPy's rounds, lowers its clocks and raises them
        again only under load: on the H200, after 3 s idle the hand-written chain on 1e7
        elements took 120-140 us a call on the GPU's clock, against 41 after 0.5 s idle, and
        still 98 after a second of rounds that kept the GPU about half busy; after a second of
        this back-to-back work, 40.8. Rounds timed straight after NumPy's had measured those
        lowered clocks."""
        if self.cpu:
            return
        if self._busy is None:
            n = 1 << 22
            a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
            buffers = [self.buffer(a), self.buffer(a), self.buffer(None, a.nbytes)]
            self._busy = [(*self.pipeline(CHAIN, buffers), grid(n // WG))]
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            self.run(self._busy, 40)
            self.wait()


def grid(groups: int) -> tuple[int, int, int]:
    if groups <= 65535:
        return groups, 1, 1
    gy = -(-groups // 65535)
    return -(-groups // gy), gy, 1


def compare(
    fns: dict[str, Callable[[], None]], reps: int, trials: int, hand: HandWritten
) -> dict[str, float]:
    """Seconds per operation of each contender, and the overhead ratio ours/hand.

    The GPU is kept busy for a second first (see HandWritten.keep_busy).
    One warm-up each, then ``trials`` rounds in which the two GPU contenders run back to back, in
    turns first, so that neither always follows an idle GPU (a GPU lowers its clocks when idle);
    NumPy, when it is a contender, runs in rounds of its own afterwards. Times are each one's
    fastest round; the ratio is the median over rounds of ours/hand measured in the same round,
    so load from other processes, which drifts slowly, cancels out.

    Each timed run follows an untimed one of the same contender. The two GPU contenders use two
    wgpu devices, and the first submit after the other device's work pays the GPU's switch
    between them: on the H200 up to 150 us, more than a round of 1e6 elements. Timed straight
    after the other, each paid it in half of the rounds, and the median ratio fell on either
    side of the switch from run to run (1.08 to 1.98 for the same code).
    """
    hand.keep_busy()
    for fn in fns.values():
        fn()
    rounds: dict[str, list[float]] = {name: [] for name in fns}
    gpu = [name for name in fns if name != "numpy"]
    for trial in range(trials):
        for name in gpu if trial % 2 == 0 else gpu[::-1]:
            fns[name]()  # untimed: absorbs the switch from the other contender's device
            start = time.perf_counter()
            fns[name]()
            rounds[name].append(time.perf_counter() - start)
    for _ in range(trials if "numpy" in fns else 0):
        start = time.perf_counter()
        fns["numpy"]()
        rounds["numpy"].append(time.perf_counter() - start)
    out = {name: min(t) / reps for name, t in rounds.items()}
    out["ratio"] = statistics.median(o / h for o, h in zip(rounds["ours"], rounds["hand"], strict=True))
    out["fastest ratio"] = min(rounds["ours"]) / min(rounds["hand"])
    if "fuse" in rounds:
        out["fuse/hand"] = statistics.median(
            f / h for f, h in zip(rounds["fuse"], rounds["hand"], strict=True)
        )
    return out


def gpu_times(
    ours: Callable[[], None], hand: HandWritten, steps: list[Any], reps: int, trials: int
) -> dict[str, float]:
    """Seconds per operation on the GPU's own clock (timestamps at the beginning and end of
    each side's pass, the host's recording, launching and waiting left out), the fastest of
    ``trials`` rounds of ``reps`` operations each, and their ratio ours/hand: how the kernels
    compare. Empty where the adapter has no timestamp queries.

    Each side's rounds run together, each after a second of GPU work (see
    HandWritten.keep_busy) and an untimed round.
    """
    if hand.queries is None:
        return {}

    def timed_ours() -> float:
        with xp.gpu_time() as timer:
            ours()
        return timer.seconds

    def timed_hand() -> float:
        return hand.gpu_seconds(steps, reps)

    best = {}
    for name, timed in (("ours", timed_ours), ("hand", timed_hand)):
        hand.keep_busy()
        timed()
        best[name] = min(timed() for _ in range(trials))
    return {
        "gpu ours": best["ours"] / reps,
        "gpu hand": best["hand"] / reps,
        "gpu ratio": best["ours"] / best["hand"],
    }


def bench_elementwise(hand: HandWritten, op: str, n: int, reps: int, trials: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    ours_fn = (lambda: x + y) if op == "add" else (lambda: xp.exp(x))

    def ours() -> None:
        results = [ours_fn() for _ in range(reps)]
        xp.synchronize()
        del results

    ba, bb, bo = hand.buffer(a), hand.buffer(b), hand.buffer(None, a.nbytes)
    if op == "add":
        pipe, group = hand.pipeline(ELEMENTWISE.replace("EXPR", "a[i] + b[i]"), [ba, bb, bo])
    else:  # exp reads one input: drop the second binding
        code = ELEMENTWISE.replace("@group(0) @binding(1) var<storage, read> b: array<f32>;\n", "")
        pipe, group = hand.pipeline(
            code.replace("@binding(2)", "@binding(1)").replace("EXPR", "exp(a[i])"), [ba, bo]
        )

    steps = [(pipe, group, grid(-(-n // WG)))]

    def handwritten() -> None:
        hand.run(steps, reps)
        hand.wait()

    np_fn = (lambda: np.add(a, b)) if op == "add" else (lambda: np.exp(a))

    def numpy() -> None:
        for _ in range(reps):
            np_fn()

    out = compare({"ours": ours, "hand": handwritten, "numpy": numpy}, reps, trials, hand)
    return out | gpu_times(ours, hand, steps, reps, GPU_TRIALS)


def bench_sum(hand: HandWritten, n: int, reps: int, trials: int) -> dict[str, float]:
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x = xp.asarray(a)

    def ours() -> None:
        results = [xp.sum(x) for _ in range(reps)]
        xp.synchronize()
        del results

    parts = 1 if n <= WG * 8 else min(-(-n // (WG * 8)), 1024)
    ba, bp, bo = hand.buffer(a), hand.buffer(None, parts * 4), hand.buffer(None, 4)
    steps = [(*hand.pipeline(REDUCE, [ba, bp]), grid(parts))]
    if parts > 1:
        steps.append((*hand.pipeline(REDUCE, [bp, bo]), (1, 1, 1)))

    def handwritten() -> None:
        hand.run(steps, reps)
        hand.wait()

    def numpy() -> None:
        for _ in range(reps):
            np.sum(a)

    out = compare({"ours": ours, "hand": handwritten, "numpy": numpy}, reps, trials, hand)
    return out | gpu_times(ours, hand, steps, reps, GPU_TRIALS)


def bench_matmul(hand: HandWritten, n: int, reps: int, trials: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)

    def ours() -> None:
        for _ in range(reps):
            z = x @ y
        xp.synchronize()
        del z

    ba, bb, bo = hand.buffer(a), hand.buffer(b), hand.buffer(None, a.nbytes)
    pipe, group = hand.pipeline(MATMUL.replace("NU", f"{n}u"), [ba, bb, bo])

    steps = [(pipe, group, (-(-n // 16), -(-n // 16), 1))]

    def handwritten() -> None:
        hand.run(steps, reps)
        hand.wait()

    def numpy() -> None:
        for _ in range(reps):
            a @ b

    out = compare({"ours": ours, "hand": handwritten, "numpy": numpy}, reps, trials, hand)
    return out | gpu_times(ours, hand, steps, reps, GPU_TRIALS)


def bench_chain(hand: HandWritten, n: int, reps: int, trials: int) -> dict[str, float]:
    from ruda_wgpu import _fusion

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    before = xp.memory_stats()["dispatches"]
    np.testing.assert_allclose(np.asarray(chain(xp, x, y)), chain(np, a, b), rtol=1e-5, atol=1e-6)
    kernels = xp.memory_stats()["dispatches"] - before

    traced = xp.fuse(lambda x, y: chain(xp, x, y))
    ba, bb, bo = hand.buffer(a), hand.buffer(b), hand.buffer(None, a.nbytes)
    pipe, group = hand.pipeline(CHAIN, [ba, bb, bo])
    steps = [(pipe, group, grid(-(-n // WG)))]

    def rounds_of(calls: int) -> dict[str, Callable[[], None]]:
        """The contenders, each making ``calls`` calls and one wait a round."""

        def ours() -> None:
            results = [chain(xp, x, y) for _ in range(calls)]
            xp.synchronize()
            del results

        def fuse() -> None:
            results = [traced(x, y) for _ in range(calls)]
            xp.synchronize()
            del results

        def handwritten() -> None:
            hand.run(steps, calls)
            hand.wait()

        return {"ours": ours, "hand": handwritten, "fuse": fuse}

    contenders = rounds_of(reps)

    def unfused() -> None:
        previous = _fusion.set_enabled(False)
        try:
            contenders["ours"]()
        finally:
            _fusion.set_enabled(previous)

    def numpy() -> None:
        for _ in range(reps):
            chain(np, a, b)

    out = compare({**contenders, "numpy": numpy, "unfused": unfused}, reps, trials, hand)
    out["kernels"] = kernels
    out |= gpu_times(contenders["ours"], hand, steps, reps, GPU_TRIALS)
    # Rounds of many calls: the hand-written side and xp.fuse are then bound by the GPU, so
    # fuse/hand compares the kernels; ours, by the host's recording and launching of each call.
    calls = 4 if xp.__array_namespace_info__().default_device().cpu else STEADY_CALLS
    steady = compare(rounds_of(calls), calls, trials, hand)
    out.update({f"steady {k}": v for k, v in steady.items()}, **{"steady calls": calls})
    # the host's share, on 1e3 elements (a CPU adapter's kernels of large ones take the cores
    # a call would be timed on): the calls alone, before the batch is submitted
    xs, ys = xp.asarray(a[:1000]), xp.asarray(b[:1000])
    out["record us"], out["launch us"] = _calls_us(lambda: chain(xp, xs, ys), 20, trials)
    out["replay us"] = _calls_us(lambda: traced(xs, ys), 20, trials)[0]
    return out


def _calls_us(call: Callable[[], Any], reps: int, trials: int) -> tuple[float, float]:
    """Microseconds a call of ``call`` takes on the host, and then launching what it left
    pending into the batch (the fastest of ``trials`` rounds of ``reps`` calls each; each
    round's batch is then submitted and waited for, untimed)."""
    dev = xp.__array_namespace_info__().default_device()
    calls = launches = float("inf")
    for _ in range(trials):
        start = time.perf_counter()
        results = [call() for _ in range(reps)]
        recorded = time.perf_counter()
        dev.run_pending()
        calls = min(calls, recorded - start)
        launches = min(launches, time.perf_counter() - recorded)
        xp.synchronize()
        del results
    return calls / reps * 1e6, launches / reps * 1e6


def bench_loop(n: int, steps: int, trials: int) -> dict[str, float]:
    """Microseconds an operation over ``steps`` dependent operations on ``n`` elements."""
    from ruda_wgpu import _fusion

    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x0, y = xp.asarray(host), xp.asarray(host * 0.5)

    def ours() -> None:
        x = x0
        for k in range(steps // 2):
            x = x * 0.999 + y if k % 2 else xp.sin(x) - y
        xp.synchronize()

    scaled = xp.fuse(lambda x, y: x * 0.999 + y)
    sine = xp.fuse(lambda x, y: xp.sin(x) - y)

    def fuse() -> None:  # each call replays its traced kernel: no operation is recorded
        x = x0
        for k in range(steps // 2):
            x = scaled(x, y) if k % 2 else sine(x, y)
        xp.synchronize()

    def numpy() -> None:
        x = host
        for k in range(steps // 2):
            x = x * np.float32(0.999) + host if k % 2 else np.sin(x) - host

    out = {}
    for name, fn in (("ours", ours), ("fuse", fuse), ("numpy", numpy)):
        fn()
        out[name] = min(_timed(fn) for _ in range(trials)) / steps
    previous = _fusion.set_enabled(False)
    try:
        ours()
        out["unfused"] = min(_timed(ours) for _ in range(trials)) / steps
    finally:
        _fusion.set_enabled(previous)
    return out


def _timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--full", action="store_true", help="every size, also on CPU adapters")
    parser.add_argument(
        "--ops", default="add,exp,sum,matmul,chain,loop", help="comma-separated subset to run"
    )
    parser.add_argument("--min-size", type=int, default=0, help="skip sizes below this (matmul: n)")
    parser.add_argument("--rounds", type=int, default=1, help="multiply the number of timed rounds")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_overhead-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cpu = dev.cpu and not args.full
    sizes = [10**k for k in range(3, 8)]
    mm_sizes = [256, 512] if cpu else [256, 512, 1024, 2048]
    hand = HandWritten()
    rows = []
    print(
        f"device: {dev.name} = {dev.description}"
        + ("  (sizes capped for a CPU adapter; --full for all)" if cpu else "")
    )
    print(
        f"{'op':8} {'size':>9} {'ours ms':>10} {'hand ms':>10} {'numpy ms':>10} "
        f"{'ours/hand':>10} {'fastest':>8} {'GPU clock':>10} {'ours/numpy':>11}"
    )
    for op in args.ops.split(","):
        if op == "loop":
            t = bench_loop(1000, 1000, 5 * args.rounds)
            rows.append({"op": op, "size": 1000, **{f"{k} us/op": v * 1e6 for k, v in t.items()}})
            print(
                f"loop: 1000 dependent operations on 1e3 float32: {t['ours'] * 1e6:.1f} us an operation "
                f"(unfused {t['unfused'] * 1e6:.1f}, through xp.fuse {t['fuse'] * 1e6:.1f}, "
                f"NumPy {t['numpy'] * 1e6:.1f})",
                flush=True,
            )
            continue
        op_sizes = mm_sizes if op == "matmul" else [10**6, 10**7] if op == "chain" else sizes
        for n in [n for n in op_sizes if n >= args.min_size]:
            # Many short rounds: the fastest round of each contender is the one least disturbed by
            # other processes, which matters on a shared machine.
            reps = 1 if op == "matmul" else 20 if n <= 10**5 else 3 if n <= 10**6 else 2
            trials = args.rounds * (3 if op == "matmul" else 9 if n < 10**5 else 31 if n <= 10**6 else 15)
            if op == "matmul":
                t = bench_matmul(hand, n, reps, trials)
            elif op == "sum":
                t = bench_sum(hand, n, reps, trials)
            elif op == "chain":
                t = bench_chain(hand, n, reps, trials)
            else:
                t = bench_elementwise(hand, op, n, reps, trials)
            row = {
                "op": op,
                "size": n,
                **t,
                "ours/hand": t["ratio"],
                "ours/numpy": t["ours"] / t["numpy"],
            }
            rows.append(row)
            print(
                f"{op:8} {n:>9} {t['ours'] * 1e3:>10.3f} {t['hand'] * 1e3:>10.3f} {t['numpy'] * 1e3:>10.3f} "
                f"{row['ours/hand']:>10.2f} {t['fastest ratio']:>8.2f} {t.get('gpu ratio', nan):>10.2f} "
                f"{row['ours/numpy']:>11.2f}"
                + (
                    f"   ({t['kernels']} kernel(s); fusion off: {t['unfused'] * 1e3:.3f} ms; "
                    f"xp.fuse: {t['fuse'] * 1e3:.3f} ms, {t['fuse/hand']:.2f} of hand-written; "
                    f"host per call on 1e3: recording {t['record us']:.0f} us, launching "
                    f"{t['launch us']:.0f} us, fuse {t['replay us']:.0f} us; "
                    f"{t['steady calls']} calls a round: ours/hand {t['steady ratio']:.2f}, "
                    f"fuse/hand {t['steady fuse/hand']:.2f})"
                    if op == "chain"
                    else ""
                ),
                flush=True,
            )
    command = " ".join(["python3 benchmarks/wgpu_overhead.py", *sys.argv[1:]])
    out = save("wgpu_overhead", dev.description, False, rows, command=command)
    print(f"results: {out}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return 0
    fig, ax = plt.subplots(figsize=(7, 4))
    for op in args.ops.split(","):
        pts = [r for r in rows if r["op"] == op and "ours/hand" in r]
        ax.plot([r["size"] for r in pts], [r["ours/hand"] for r in pts], marker="o", label=op)
    ax.axhline(1.2, color="grey", linestyle="--", label="1.2x")
    ax.set_xscale("log")
    ax.set_xlabel("elements (matmul: n of n x n)")
    ax.set_ylabel("ruda_wgpu time / hand-written wgpu-py")
    ax.set_title(f"ruda_wgpu overhead on {dev.description}", fontsize=9)
    ax.legend()
    fig.tight_layout()
    plot = RESULTS / f"wgpu_overhead-{device_slug(dev.description)}.png"
    fig.savefig(plot, dpi=120)
    print(f"plot: {plot}")
    return 0


def _size(row: dict[str, Any]) -> str:
    n = row["size"]
    if row["op"] == "matmul":
        return f"{n}x{n}"
    return f"1e{len(str(n)) - 1}" if str(n).strip("0") == "1" else str(n)


def _gpu_clock(row: dict[str, Any]) -> str:
    """The ratio of the two sides' GPU time per operation, with ours in microseconds."""
    if "gpu ratio" not in row:
        return "-"
    return f"{row['gpu ratio']:.2f} ({row['gpu ours'] * 1e6:.1f} us)"


def markdown(paths: list[Path]) -> str:
    """The README's two tables from the results files: each operation against the hand-written
    program, then the loop of small operations."""
    main = [
        "| device | op | size | ours ms | hand-written ms | ours/hand, median | ours/hand, fastest "
        "rounds | ours/hand, GPU clock | NumPy ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    loop = [
        "| device | fused us/op | unfused us/op | through `xp.fuse`, us/op | NumPy us/op |",
        "|---|---|---|---|---|",
    ]
    for path in paths:
        data = json.loads(path.read_text())
        device = data["device"].split(" (")[0]
        for r in data["rows"]:
            if r["op"] == "loop":
                us = [r.get(f"{k} us/op") for k in ("ours", "unfused", "fuse", "numpy")]
                loop.append(
                    f"| {device} | " + " | ".join("-" if v is None else f"{v:.1f}" for v in us) + " |"
                )
                continue
            op = r["op"]
            if op == "chain":
                op = f"8-operation chain, {r['kernels']} kernel(s) (unfused {r['unfused'] * 1e3:.3f} ms)"
                if "record us" in r:
                    launch = f", launching {r['launch us']:.0f} us" if "launch us" in r else ""
                    host = f"recording {r['record us']:.0f} us{launch}, `xp.fuse` {r['replay us']:.0f} us"
                    op += f"; host per call on 1e3 elements: {host}"
            main.append(
                f"| {device} | {op} | {_size(r)} | {r['ours'] * 1e3:.3f} | {r['hand'] * 1e3:.3f} "
                f"| {r['ours/hand']:.2f} | {r['fastest ratio']:.2f} | {_gpu_clock(r)} "
                f"| {r['numpy'] * 1e3:.3f} |"
            )
            if "fuse" in r:
                main.append(
                    f"| {device} | the chain through `xp.fuse` | {_size(r)} | {r['fuse'] * 1e3:.3f} "
                    f"| {r['hand'] * 1e3:.3f} | {r['fuse/hand']:.2f} | {r['fuse'] / r['hand']:.2f} | - "
                    f"| {r['numpy'] * 1e3:.3f} |"
                )
            if "steady ours" in r:
                calls, hand = r["steady calls"], r["steady hand"] * 1e3
                for what, key, ratio in (
                    ("the chain", "ours", "ratio"),
                    ("through `xp.fuse`", "fuse", "fuse/hand"),
                ):
                    fastest = r[f"steady {key}"] / r["steady hand"]
                    main.append(
                        f"| {device} | {what}, {calls} calls a round | {_size(r)} "
                        f"| {r[f'steady {key}'] * 1e3:.3f} | {hand:.3f} | {r[f'steady {ratio}']:.2f} "
                        f"| {fastest:.2f} | - | - |"
                    )
    return "\n".join([*main, "", "A loop of 1000 dependent operations on 1e3 float32:", "", *loop])


if __name__ == "__main__":
    raise SystemExit(main())
