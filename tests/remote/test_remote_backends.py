"""Every installed backend can be served: a real server per backend, and one round of operations
through ``ruda_remote`` compared with NumPy."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest
import ruda
import ruda.host
import ruda_remote
from ruda_remote import wire

#: the optional backends' modules, imported only to skip when they are absent
BACKEND_MODULES = {"host": "ruda.host", "torch": "ruda_torch", "wgpu": "ruda_wgpu", "cuda": "ruda_cuda"}


def _skip_unless_available(name: str) -> None:
    pytest.importorskip(BACKEND_MODULES[name])
    status = {b.name: b for b in ruda.backends()}[name]
    if not status.available:
        pytest.skip(f"backend {name} is installed but cannot run here: {status.reason}")


@pytest.mark.parametrize("name", ["host", "torch", "wgpu", "cuda"])
def test_a_round_of_operations_on_each_backend_matches_numpy(name, make_server):
    _skip_unless_available(name)
    srv = make_server(backend=name)
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        assert dev.info["backend"] == name
        _round_of_operations(dev)


@pytest.mark.parametrize("name", ["host", "torch", "wgpu"])
def test_results_whose_dtype_is_the_backends_choice_take_the_backends(name, make_server):
    """``sqrt(int32)``, ``int32 / int32``, ``int32 + float32``, ``concat`` of the two and their
    matrix products give float64 on NumPy, float32 on torch and ruda_wgpu, and torch sums uint8
    into int64: the client asks the server once a signature, then pipelines it (it had expected
    NumPy's dtype and every such op failed on those backends)."""
    _skip_unless_available(name)
    backend = __import__(BACKEND_MODULES[name], fromlist=["_"])
    srv = make_server(backend=name)
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        xp = ruda_remote
        i = xp.asarray(np.array([1, 4, 9], np.int32), device=dev)
        f = xp.asarray(np.array([0.5, 0.5, 0.5], np.float32), device=dev)
        bi = backend.asarray(np.array([1, 4, 9], np.int32))
        bf = backend.asarray(np.array([0.5, 0.5, 0.5], np.float32))
        u = xp.asarray(np.array([1, 2, 250], np.uint8), device=dev)
        bu = backend.asarray(np.array([1, 2, 250], np.uint8))
        column, row = xp.reshape(f, (3, 1)), xp.reshape(i, (1, 3))
        b_column, b_row = backend.reshape(bf, (3, 1)), backend.reshape(bi, (1, 3))
        products = name != "torch"  # (torch multiplies matrices of one dtype only, as the standard allows)
        for _ in range(2):  # (asked, then known)
            for got, want in (
                (xp.sqrt(i), backend.sqrt(bi)),
                (i / i, bi / bi),
                (i + f, bi + bf),
                (i + 2.5, bi + 2.5),
                (xp.sum(u), backend.sum(bu)),  # (torch: int64; the standard: uint64)
                (xp.concat([i, f]), backend.concat([bi, bf])),
                *(
                    [
                        (f @ i, bf @ bi),
                        (xp.tensordot(column, row, axes=1), backend.tensordot(b_column, b_row, axes=1)),
                    ]
                    if products
                    else []
                ),
            ):
                assert got.dtype.name == str(want.dtype).removeprefix("torch."), got.dtype
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        asked = 8 if products else 6
        assert len(dev.result_dtypes) == asked  # (each asked once)
        for k in range(1, 40):  # (asked once per range of k, not once per value: 1 to 6 bits)
            np.testing.assert_allclose(np.asarray(i / k), np.array([1, 4, 9]) / k, rtol=1e-6)
        assert len(dev.result_dtypes) == asked + 6


@pytest.mark.parametrize("name", ["host", "torch", "wgpu"])
def test_in_place_operators_cast_back_and_refuse_read_only_targets(name, make_server):
    """``float32 += float64`` casts back on every backend (the wgpu server refused the write of
    the wider result); ``+=`` into a ``broadcast_to`` view raises, as the reference does, where
    the server had given the handle a new buffer of its own."""
    _skip_unless_available(name)
    srv = make_server(backend=name)
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        xp = ruda_remote
        x = xp.asarray(np.array([1.0, 2.0], np.float32), device=dev)
        x += xp.asarray(np.array([0.5, 0.25]), device=dev)  # (float64)
        assert x.dtype == xp.float32
        assert np.asarray(x).tolist() == [1.5, 2.25]
        base = xp.asarray(np.array(5, np.int32), device=dev)
        view = xp.broadcast_to(base, (2,))
        view += 1
        with pytest.raises(ruda_remote.RemoteError):
            np.asarray(view)
        assert int(base) == 5


def _round_of_operations(dev: ruda_remote.RemoteDevice) -> None:
    """Creation, elementwise, reductions, matmul, views, indexing and a data-dependent shape,
    each compared with NumPy."""
    xp = ruda_remote
    a = xp.reshape(xp.arange(12, dtype=xp.float32, device=dev), (3, 4))
    b = xp.ones((4, 2), dtype=xp.float32, device=dev)
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    u = xp.asarray(np.array([3, -1, 7, 0], dtype=np.int32), device=dev)
    results = {
        "zeros": (xp.zeros((2, 3), dtype=xp.float32, device=dev), np.zeros((2, 3), np.float32)),
        "full": (xp.full((2,), 2.5, dtype=xp.float32, device=dev), np.full((2,), 2.5, np.float32)),
        "linspace": (xp.linspace(0.0, 1.0, 5, device=dev), np.linspace(0.0, 1.0, 5)),
        "elementwise": (xp.exp(a / 4) * 2 - a, np.exp(host / 4) * 2 - host),
        "integers": (u * 3 + 1, np.array([10, -2, 22, 1], dtype=np.int32)),
        "sum": (xp.sum(a, axis=0), host.sum(axis=0)),
        "max": (xp.max(a), host.max()),
        "matmul": (a @ b, host @ np.ones((4, 2), np.float32)),
        "slice": (a[1:, ::2], host[1:, ::2]),
        "take": (xp.take(a, xp.asarray([2, 0], device=dev), axis=0), host[[2, 0]]),
        "mask": (u[u > 0], np.array([3, 7], dtype=np.int32)),
    }
    for what, (remote, expected) in results.items():
        got = np.asarray(remote)
        assert got.shape == expected.shape, what
        np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=what)
    assert float(xp.mean(a)) == pytest.approx(5.5)


def _host_with_float16() -> types.ModuleType:
    """ruda.host as a backend with float16 beyond the standard's dtypes: its info lists it (as
    its default real floating dtype too), and its ``arange`` returns it."""
    backend = types.ModuleType("host_with_float16")
    backend.__dict__.update({k: v for k, v in vars(ruda.host).items() if not k.startswith("__")})
    backend.__array_api_version__ = ruda.host.__array_api_version__
    backend.float16 = np.float16

    class Info(ruda.host.__array_namespace_info__):
        def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, Any]:
            return {**super().dtypes(device=device, kind=kind), "float16": np.dtype(np.float16)}

        def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
            return {**super().default_dtypes(device=device), "real floating": np.dtype(np.float16)}

    backend.__array_namespace_info__ = Info
    backend.arange = lambda *args, **kwargs: ruda.host.arange(*args, **kwargs).astype(np.float16)
    return backend


def test_a_dtype_beyond_the_standard_is_refused_per_operation_not_at_start(make_server):
    srv = make_server(backend=_host_with_float16())
    with ruda_remote.RemoteDevice(srv.url, timeout=30) as dev:
        assert "float16" not in dev.info["dtypes"]
        assert "float32" in dev.info["dtypes"]
        assert "float16" not in ruda_remote.__array_namespace_info__().dtypes(device=dev)
        with pytest.raises(TypeError, match=r"arange.*float16.*not one of the Array API's dtypes"):
            ruda_remote.arange(3, device=dev)
        with pytest.raises(TypeError, match="no default real floating dtype.*pass dtype="):
            ruda_remote.ones(3, device=dev)
        # the session goes on: the refused ops cost nothing and others run
        ones = ruda_remote.ones(3, dtype=ruda_remote.float32, device=dev)
        np.testing.assert_array_equal(np.asarray(ones), np.ones(3, np.float32))
        assert ruda_remote.__array_namespace_info__().default_dtypes(device=dev)["integral"] == np.int64


def test_ruda_serve_serves_wgpu_and_refuses_float16_per_operation(server_process, raw_session):
    _skip_unless_available("wgpu")
    proc, url = server_process("--backend", "wgpu")  # the last --backend given is the one served
    assert proc.poll() is None and "Traceback" not in proc.startup_output
    with ruda_remote.RemoteDevice(url, timeout=60) as dev:
        assert dev.info["backend"] == "wgpu"
        _round_of_operations(dev)
        # wgpu has float16 (ruda_wgpu.float16) beyond the standard: the server started all the
        # same, describes only what the wire carries, and an op that asks for float16 is refused
        # alone, at the call, with nothing sent
        assert "float16" not in dev.info["dtypes"]
        assert "float16" not in dev.info["default_dtypes"].values()
        x = ruda_remote.ones(3, dtype=ruda_remote.float32, device=dev)
        with pytest.raises(TypeError, match="float16 is not one of the Array API's dtypes"):
            ruda_remote.astype(x, np.float16)
        with pytest.raises(TypeError, match="float16 is not one of the Array API's dtypes"):
            ruda_remote.zeros(3, dtype=np.float16, device=dev)
        with pytest.raises(TypeError, match="dtype float16 cannot be sent"):
            ruda_remote.asarray(np.ones(3, dtype=np.float16), device=dev)
        assert float(ruda_remote.sum(ruda_remote.astype(x, ruda_remote.float64))) == 3.0  # it goes on
    # A raw client that names float16 anyway has that batch refused; its session goes on.
    ws = raw_session(url)
    upload = [1, wire.OP_CODES["__upload__"], [1], ["float32", [2], b"\x00" * 8], {}, 0, None]
    astype = [
        2,
        wire.OP_CODES["astype"],
        [2],
        [wire.Handle(1), wire.DType("float16")],
        {},
        wire.FLAG_META,
        None,
    ]
    ws.send(wire.encode(["batch", [upload, astype], []]))
    reply = wire.decode_server_message(ws.recv(timeout=30))
    assert reply[:2] == ["error", wire.NO_SEQ] and "unknown dtype 'float16'" in reply[4], reply
    ws.send(wire.encode(["batch", [[*upload[:2], [3], *upload[3:]]], []]))
    ws.send(wire.encode(["batch", [[4, wire.OP_CODES["__read__"], [], [wire.Handle(3)], {}, 0, None]], []]))
    reply = wire.decode_server_message(ws.recv(timeout=30))
    assert reply[:4] == ["data", 4, "float32", (2,)], reply
