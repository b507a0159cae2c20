"""A session is charged for the memory its arrays keep alive: a view costs its base's buffer,
and a buffer shared by many handles costs once, until the last of them is released. Each handle
costs ``wire.HANDLE_BYTES`` of its own besides."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import ruda_remote
from ruda_remote import wire

MIB = 2**20
HANDLE = wire.HANDLE_BYTES
#: a small session limit, so that reaching it takes a few MiB, not gigabytes
LIMIT = 4 * MIB
#: the optional backends' modules, imported only to skip when they are absent
BACKEND_MODULES = {"host": "ruda.host", "torch": "ruda_torch", "wgpu": "ruda_wgpu"}


@pytest.fixture(params=sorted(BACKEND_MODULES))
def device(request, make_server):
    """A session on a server of each backend whose sessions may hold LIMIT bytes."""
    pytest.importorskip(BACKEND_MODULES[request.param])
    srv = make_server(backend=request.param, limits=wire.Limits(max_session_bytes=LIMIT))
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        yield dev


def _one_mib(dev: ruda_remote.RemoteDevice) -> ruda_remote.Array:
    return ruda_remote.ones(MIB // 4, dtype=ruda_remote.float32, device=dev)


def _used(dev: ruda_remote.RemoteDevice) -> int:
    gc.collect()
    dev.stats()  # sends the releases queued so far; they run after this batch's ops
    return dev.stats()["bytes"]


def _live(dev: ruda_remote.RemoteDevice) -> int:
    """The session's live arrays, once those dropped so far are released (after :func:`_used`)."""
    return dev.stats()["arrays"]


def test_slices_kept_of_released_arrays_cannot_pass_the_limit(device):
    kept = []
    with pytest.raises(MemoryError, match="session memory limit exceeded"):
        for _ in range(64):  # before: every round held 1 MiB more and was charged 4 bytes
            x = _one_mib(device)
            view = ruda_remote.reshape(x[0:1], (1,))  # a view of x, and x's buffer with it
            del x
            float(view[0])  # waits, so that the refusal is raised in this round
            kept.append(view)
    # each kept view's handle takes a little of the last MiB, so the fourth base does not fit
    assert len(kept) == LIMIT // MIB - 1
    assert _used(device) == len(kept) * (MIB + HANDLE)
    # the session goes on, and the kept views still read their bases' values
    assert [float(v[0]) for v in kept] == [1.0] * len(kept)
    del kept
    assert _used(device) == 0
    assert float(ruda_remote.sum(_one_mib(device))) == MIB // 4


def test_handles_sharing_a_buffer_are_charged_once(device):
    x = _one_mib(device)
    views = [x[i : i + 2] for i in range(50)] + [ruda_remote.reshape(x, (512, 512))]
    total = ruda_remote.sum(ruda_remote.stack([ruda_remote.sum(v) for v in views[:50]]))
    assert float(total) == 100.0
    charged = _used(device)
    assert _live(device) > 50  # x, the views the sums sent, total
    assert MIB <= charged - _live(device) * HANDLE < MIB + 64  # x's buffer once; total's few bytes
    del x, total
    # the views keep x's buffer alive: still charged, each handle besides
    assert _used(device) == MIB + _live(device) * HANDLE
    del views
    assert _used(device) == 0


def test_a_view_costs_nothing_more_while_its_base_is_held(device):
    # 3 MiB held under a 4 MiB limit: a view of it needs no more memory, so it is allowed (one
    # of 1 MiB, and one of 4 MiB of elements, as large as an array may be)
    x = ruda_remote.ones((3, MIB // 4), dtype=ruda_remote.float32, device=device)
    views = [x[i] for i in range(3)] + [ruda_remote.broadcast_to(x[0], (4, MIB // 4))]
    np.testing.assert_array_equal(np.asarray(views[3][3, :4]), np.ones(4, np.float32))
    assert _used(device) == 3 * MIB + _live(device) * HANDLE  # x's buffer once; each handle
