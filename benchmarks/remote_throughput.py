"""How much does ruda_remote cost over a bare WebSocket on loopback?

Four questions, the first three answered against a reference measured in the same run:

1. read latency: one read of a small array (op out, data back) vs one round trip of a
   message of the same size through a raw ``websockets`` echo server;
2. pipelined small operations per second (``x = x + 1`` on 8 elements, one read at the end);
3. bulk transfer: a 1e8-byte array sent to the server and read back, vs the same bytes
   echoed by the raw server;
4. a 1 GiB array sent and read back (four times the server's message limit: it travels in
   pieces both ways), its time and the client's peak memory beyond the array itself.

Both servers run as child processes, so client and server do not share an interpreter. The
figures are written to benchmarks/results/remote_throughput.json.

    python benchmarks/remote_throughput.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import ruda_remote as xp
from websockets.sync.client import connect

RESULTS = Path(__file__).resolve().parent / "results"

ECHO_SERVER = """
import asyncio
from websockets.asyncio.server import serve

async def echo(ws):
    async for message in ws:
        await ws.send(message)

async def main():
    async with serve(echo, "127.0.0.1", 0, compression=None, max_size=None) as server:
        print("at ws://127.0.0.1:%d" % list(server.sockets)[0].getsockname()[1], flush=True)
        await asyncio.Future()

asyncio.run(main())
"""


def _start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"at (ws://\S+)", line)
        if found:
            return proc, found.group(1)
    raise RuntimeError(f"{argv} did not start")


def _best(fn, repeat: int) -> float:
    """The lowest of ``repeat`` timings: the one least disturbed by other processes."""
    return min(fn() for _ in range(repeat))


def read_latency(dev: xp.RemoteDevice, echo, repeat: int, n: int = 2000) -> tuple[float, float]:
    x = xp.asarray(np.arange(8.0), device=dev)
    handle = x._ensure()
    payload = np.arange(8.0).tobytes()

    def ours() -> float:
        start = time.perf_counter()
        for _ in range(n):
            dev.read(handle)
        return (time.perf_counter() - start) / n

    def raw() -> float:
        start = time.perf_counter()
        for _ in range(n):
            echo.send(payload)
            echo.recv()
        return (time.perf_counter() - start) / n

    return _best(ours, repeat), _best(raw, repeat)


def pipelined_ops(dev: xp.RemoteDevice, repeat: int, n: int = 20_000) -> float:
    def run() -> float:
        x = xp.ones(8, device=dev)
        start = time.perf_counter()
        for _ in range(n):
            x = x + 1.0
        value = float(x[0])
        elapsed = time.perf_counter() - start
        assert value == n + 1.0, value
        return elapsed

    return n / _best(run, repeat)


def bulk(dev: xp.RemoteDevice, echo, repeat: int, nbytes: int = 100_000_000) -> tuple[float, float]:
    host = np.random.default_rng(0).random(nbytes // 8)
    payload = host.tobytes()

    def ours() -> float:
        start = time.perf_counter()
        x = xp.asarray(host, device=dev)
        back = dev.read(x._ensure())
        elapsed = time.perf_counter() - start
        assert back.nbytes == nbytes
        return elapsed

    def raw() -> float:
        start = time.perf_counter()
        echo.send(payload)
        back = echo.recv()
        elapsed = time.perf_counter() - start
        assert len(back) == nbytes
        return elapsed

    return 2 * nbytes / _best(ours, repeat), 2 * nbytes / _best(raw, repeat)


def gib_round_trip(dev: xp.RemoteDevice) -> tuple[float, int]:
    """Seconds for 1 GiB up and back, and the client's peak traced memory beyond the array (the
    copy read back included)."""
    host = np.arange(2**28, dtype=np.uint32)
    tracemalloc.start()
    try:
        start_bytes, start = tracemalloc.get_traced_memory()[0], time.perf_counter()
        x = xp.asarray(host, device=dev)
        back = np.asarray(x)
        elapsed = time.perf_counter() - start
        extra = tracemalloc.get_traced_memory()[1] - start_bytes
    finally:
        tracemalloc.stop()
    assert np.array_equal(back, host)
    return elapsed, extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    server, url = _start([sys.executable, "-m", "ruda_remote", "serve", "--backend", "host", "--port", "0"])
    echo_server, echo_url = _start([sys.executable, "-c", ECHO_SERVER])
    try:
        dev = xp.RemoteDevice(url)
        echo = connect(echo_url, compression=None, max_size=None, proxy=None, legacy=True)
        ours, raw = read_latency(dev, echo, args.repeat)
        print(
            f"read latency:   ruda_remote {ours * 1e6:8.1f} us   raw echo {raw * 1e6:8.1f} us   "
            f"ratio {ours / raw:5.2f}"
        )
        rate = pipelined_ops(dev, args.repeat)
        print(f"pipelined ops:  {rate:10.0f} ops/s (x = x + 1.0 on 8 float64, one read at the end)")
        ours_bw, raw_bw = bulk(dev, echo, max(1, args.repeat // 2))
        print(
            f"1e8-byte up+down: ruda_remote {ours_bw / 1e6:8.1f} MB/s   raw echo {raw_bw / 1e6:8.1f} MB/s   "
            f"ratio {ours_bw / raw_bw:5.2f}"
        )
        echo.close()
        dev.close()
        dev = xp.RemoteDevice(url)  # a fresh session: the 1 GiB array and nothing else
        gib_s, gib_extra = gib_round_trip(dev)
        print(
            f"1 GiB up+down:  {gib_s:6.2f} s ({2 * 2**30 / gib_s / 1e6:7.1f} MB/s); client peak beyond the "
            f"array {gib_extra / 2**20:6.0f} MiB (the copy read back is 1024)"
        )
        dev.close()
        figures = {
            "machine": f"loopback, {os.cpu_count()} CPU cores ({platform.machine()})",
            "read_latency_us": {"ruda_remote": ours * 1e6, "raw_echo": raw * 1e6, "ratio": ours / raw},
            "pipelined_ops_per_s": rate,
            "bulk_1e8_bytes_up_down_MB_per_s": {
                "ruda_remote": ours_bw / 1e6,
                "raw_echo": raw_bw / 1e6,
                "ratio": ours_bw / raw_bw,
            },
            "gib_round_trip": {"seconds": gib_s, "client_peak_beyond_array_MiB": gib_extra / 2**20},
        }
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "remote_throughput.json").write_text(json.dumps(figures, indent=1) + "\n")
    finally:
        server.kill()
        echo_server.kill()


if __name__ == "__main__":
    main()
