"""Every live array costs the server ``wire.HANDLE_BYTES`` besides its data, against the session's
limit and the server's budget: a client that makes masses of 0-d or empty arrays is refused like
one that makes large arrays, and the charge returns when the arrays are released, the session
ends, or the client dies.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import numpy as np
import pytest
import ruda_remote
from ruda_remote import wire

MIB = 2**20
HANDLE = wire.HANDLE_BYTES
#: what one 0-d float32 array costs: 4 bytes of data and its handle
SCALAR = 4 + HANDLE


def _scalars(n: int, dev: ruda_remote.RemoteDevice) -> list[ruda_remote.Array]:
    """``n`` 0-d float32 arrays, sent to the server without waiting (a refusal is raised at the
    next wait)."""
    return [ruda_remote.zeros((), dtype=ruda_remote.float32, device=dev) for _ in range(n)]


def _released(dev: ruda_remote.RemoteDevice) -> dict[str, int]:
    """The session's arrays and bytes once the arrays dropped so far are released."""
    gc.collect()
    dev.stats()  # sends the releases queued so far; they run after this batch's ops
    return dev.stats()


def _held_becomes(srv: Any, expected: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while srv.server.held_bytes() != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return int(srv.server.held_bytes())


def test_masses_of_0d_arrays_reach_the_session_limit_and_others_are_served(make_server):
    srv = make_server(limits=wire.Limits(max_session_bytes=MIB))
    fits = MIB // SCALAR  # 255 arrays of 4 bytes: before, a million fitted (only max_arrays stopped them)
    with ruda_remote.RemoteDevice(srv.url, timeout=30) as dev:
        kept = _scalars(2 * fits, dev)
        with pytest.raises(MemoryError) as info:
            dev.sync()
        held = fits * SCALAR
        text = str(info.value)
        assert (
            f"session memory limit exceeded: zeros needs {SCALAR} bytes (4 of data and 1 x {HANDLE} for its "
            f"arrays' handles) and the session already holds {held} of its {MIB} bytes ({fits * HANDLE} of "
            f"them for its live arrays' handles: {fits} x {HANDLE} bytes, besides their data)"
        ) in text
        assert "release arrays you no longer need" in text
        assert dev.stats() == {"arrays": fits, "bytes": held}
        assert srv.server.held_bytes() == held  # the refused ops' reservations all came back
        # another session is served at once, and the full one goes on once it releases some
        with ruda_remote.RemoteDevice(srv.url, timeout=30) as other:
            assert float(ruda_remote.sum(ruda_remote.ones(1000, device=other))) == 1000.0
        del kept
        assert _released(dev) == {"arrays": 0, "bytes": 0}
        assert float(ruda_remote.sum(ruda_remote.ones(1000, device=dev))) == 1000.0


def test_empty_arrays_are_charged_their_handles(make_server):
    srv = make_server(limits=wire.Limits(max_session_bytes=64 * HANDLE))
    with ruda_remote.RemoteDevice(srv.url, timeout=30) as dev:
        empty = [ruda_remote.zeros((0,), device=dev) for _ in range(64)]  # exactly the limit
        dev.sync()
        assert dev.stats() == {"arrays": 64, "bytes": 64 * HANDLE}  # before: 0 bytes
        with pytest.raises(MemoryError, match=r"zeros needs 4096 bytes \(0 of data and 1 x 4096"):
            empty.append(ruda_remote.zeros((0,), device=dev))
            dev.sync()


def test_masses_of_0d_arrays_in_many_sessions_reach_the_servers_budget(make_server):
    srv = make_server(limits=wire.Limits(max_session_bytes=MIB, max_server_bytes=MIB))
    fits = MIB // SCALAR
    with (
        ruda_remote.RemoteDevice(srv.url, timeout=30) as first,
        ruda_remote.RemoteDevice(srv.url, timeout=30) as second,
    ):
        mine = _scalars(fits // 2, first)
        first.sync()
        theirs = _scalars(fits, second)
        with pytest.raises(MemoryError, match=f"server memory budget exhausted: zeros needs {SCALAR} bytes"):
            second.sync()
        assert second.stats()["arrays"] == fits - fits // 2  # the budget's rest, and not one more
        assert srv.server.held_bytes() == fits * SCALAR
        del mine
        _released(first)
        assert srv.server.held_bytes() == (fits - fits // 2) * SCALAR
        del theirs
        _released(second)
        assert srv.server.held_bytes() == 0


def test_releasing_arrays_gives_their_handles_charge_back(make_server):
    srv = make_server()
    with ruda_remote.RemoteDevice(srv.url, timeout=30) as dev:
        base = ruda_remote.ones(1000, device=dev)
        dev.sync()
        before = srv.server.held_bytes()
        assert before == 8000 + HANDLE
        made = _scalars(500, dev)  # creations, and as many uploads and computed results
        made += [ruda_remote.asarray(np.float32(i), device=dev) for i in range(500)]
        made += [x + 1 for x in made[:500]]
        assert float(ruda_remote.sum(ruda_remote.stack(made[-500:]))) == 500.0
        assert _released(dev) == {"arrays": 1501, "bytes": before + 1500 * SCALAR}
        assert srv.server.held_bytes() == before + 1500 * SCALAR
        del made
        assert _released(dev) == {"arrays": 1, "bytes": before}
        assert srv.server.held_bytes() == before
        del base
    assert _held_becomes(srv, 0) == 0  # and the session's end returns the rest


def test_a_killed_clients_handle_charges_come_back(make_server):
    # The budget holds 767 0-d arrays: a client holds 500 and is killed; another session can
    # then make 700, which it could not while the dead one's handles were charged.
    srv = make_server(limits=wire.Limits(max_session_bytes=3 * MIB, max_server_bytes=3 * MIB))
    code = textwrap.dedent(f"""
        import time
        import ruda_remote
        dev = ruda_remote.RemoteDevice({srv.url!r}, timeout=30)
        kept = [ruda_remote.zeros((), dtype=ruda_remote.float32, device=dev) for _ in range(500)]
        dev.sync()
        print("ready", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert srv.server.held_bytes() == 500 * SCALAR
        with ruda_remote.RemoteDevice(srv.url, timeout=30) as dev:
            refused = _scalars(700, dev)
            with pytest.raises(MemoryError, match="server memory budget exhausted"):
                dev.sync()
            assert dev.stats()["arrays"] == (3 * MIB - 500 * SCALAR) // SCALAR
            del refused
            assert _released(dev) == {"arrays": 0, "bytes": 0}
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            assert _held_becomes(srv, 0) == 0  # the dead session's handles came back
            assert srv.array_count() == 0
            made = _scalars(700, dev)
            dev.sync()
            assert len(made) == 700 and srv.server.held_bytes() == 700 * SCALAR
    finally:
        proc.kill()
        proc.wait(10)
