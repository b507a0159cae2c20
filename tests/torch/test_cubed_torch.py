"""ruda_torch as Cubed's backend through ``ruda_torch.cubed``: chunked work computed by torch on the
CPU and on a CUDA GPU, checked against NumPy, and the namespace itself checked against ruda_torch.

Cubed reads its backend namespace from ``CUBED_BACKEND_ARRAY_API_MODULE`` when it is imported, so
the Cubed workloads run in a fresh interpreter (a script file: the processes executor spawns its
workers, which import the script's module). The namespace's own tests need no Cubed.
"""

from __future__ import annotations

import inspect
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ruda
from ruda import spec

pytest.importorskip("cubed", reason="cubed is not installed (requirements-dev.txt has it)")
_ROW = {b.name: b for b in ruda.backends()}.get("torch")
if _ROW is None or not _ROW.available:
    pytest.skip(f"torch backend unavailable: {_ROW and _ROW.reason}", allow_module_level=True)

import ruda_torch  # noqa: E402
import ruda_torch.cubed as ns  # noqa: E402
import torch  # noqa: E402

NEEDS_CUDA = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device visible to torch (a CPU build or no GPU)"
)


def numpy_dtype(dtype: torch.dtype) -> np.dtype[Any]:
    """NumPy's dtype of the same name (independent of the module's own table)."""
    return np.dtype(str(dtype).removeprefix("torch."))


# -- the namespace: NumPy dtypes outside, ruda_torch inside ------------------------------------------


def test_dtypes_are_numpys() -> None:
    for name in spec.DTYPES:
        assert getattr(ns, name) == np.dtype(name), name
        assert isinstance(getattr(ns, name), np.dtype), name


def test_every_name_of_ruda_torch_is_here_and_the_rest_are_ruda_torchs_own() -> None:
    for module, ours in ((ruda_torch, ns), (ruda_torch.linalg, ns.linalg), (ruda_torch.fft, ns.fft)):
        for name in module.__all__:
            assert hasattr(ours, name), f"{ours.__name__} lacks {name}"
            if name not in vars(ours):  # forwarded: the very same object
                assert getattr(ours, name) is getattr(module, name), name


def _takes_a_dtype(fn: Any) -> bool:
    try:
        return "dtype" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # torch's builtins have no signature, and take no dtype
        return False


def test_every_function_that_takes_a_dtype_is_converted_here() -> None:
    # A function added to ruda_torch with a dtype parameter would be forwarded unconverted and get
    # Cubed's NumPy dtypes: it must be written out in ruda_torch.cubed.
    for module, ours in ((ruda_torch, ns), (ruda_torch.linalg, ns.linalg), (ruda_torch.fft, ns.fft)):
        takers = [
            n for n in module.__all__ if callable(getattr(module, n)) and _takes_a_dtype(getattr(module, n))
        ]
        assert takers, f"no function of {module.__name__} takes a dtype: the check checks nothing"
        missing = [n for n in takers if n not in vars(ours)]
        assert not missing, f"{ours.__name__} forwards {missing}, which take a dtype"


def test_dtype_functions_answer_as_ruda_torch_does() -> None:
    names = [n for n in spec.DTYPES if n not in ("uint16", "uint32", "uint64")]
    for a in names:
        ta = getattr(torch, a)
        for b in names:
            tb = getattr(torch, b)
            try:
                want = numpy_dtype(ruda_torch.result_type(ta, tb))
            except TypeError:
                with pytest.raises(TypeError):
                    ns.result_type(np.dtype(a), np.dtype(b))
            else:
                assert ns.result_type(np.dtype(a), np.dtype(b)) == want, (a, b)
            assert ns.can_cast(np.dtype(a), np.dtype(b)) == ruda_torch.can_cast(ta, tb), (a, b)
        for kind in ("bool", "integral", "real floating", "complex floating", "numeric"):
            assert ns.isdtype(np.dtype(a), kind) == ruda_torch.isdtype(ta, kind), (a, kind)
        assert ns.isdtype(np.dtype(a), (np.dtype("int8"), "real floating")) == ruda_torch.isdtype(
            ta, (torch.int8, "real floating")
        )
    t = torch.ones(3, dtype=torch.float32)
    assert ns.result_type(t, 1.5, np.dtype("float64")) == numpy_dtype(
        ruda_torch.result_type(t, 1.5, torch.float64)
    )
    for name in ("float32", "float64", "complex64"):
        got, want = ns.finfo(np.dtype(name)), ruda_torch.finfo(getattr(torch, name))
        assert (got.eps, got.max, got.dtype) == (want.eps, want.max, numpy_dtype(want.dtype))
    got_i, want_i = ns.iinfo(np.dtype("int16")), ruda_torch.iinfo(torch.int16)
    assert (got_i.min, got_i.max, got_i.dtype) == (want_i.min, want_i.max, np.dtype("int16"))


def test_info_names_numpy_dtypes() -> None:
    ours, theirs = ns.__array_namespace_info__(), ruda_torch.__array_namespace_info__()
    assert ours.default_dtypes() == {k: numpy_dtype(v) for k, v in theirs.default_dtypes().items()}
    assert ours.dtypes(kind="numeric") == {
        k: numpy_dtype(v) for k, v in theirs.dtypes(kind="numeric").items()
    }
    assert ours.devices() == theirs.devices() and ours.default_device() == theirs.default_device()
    assert ours.capabilities() == theirs.capabilities()


def test_functions_take_numpy_dtypes_and_compute_torch_tensors() -> None:
    host = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    x = torch.from_numpy(host)
    f64 = np.dtype("float64")
    cases = {
        "zeros": (ns.zeros((2, 3), dtype=np.dtype("int16")), np.zeros((2, 3), np.int16)),
        "full": (ns.full((2,), 7, dtype=np.dtype("uint8")), np.full((2,), 7, np.uint8)),
        "arange": (ns.arange(1, 9, 2, dtype=f64), np.arange(1, 9, 2, dtype=f64)),
        "linspace": (ns.linspace(0, 1, 5, dtype=f64), np.linspace(0, 1, 5)),
        "eye": (ns.eye(3, 4, k=1, dtype=np.dtype("int32")), np.eye(3, 4, k=1, dtype=np.int32)),
        "ones_like": (ns.ones_like(x, dtype=np.dtype("bool")), np.ones_like(host, dtype=bool)),
        "astype": (ns.astype(x, np.dtype("int64")), host.astype(np.int64)),
        "sum": (ns.sum(x, axis=0, dtype=f64), np.sum(host, axis=0, dtype=f64)),
        "prod": (ns.prod(x, axis=1, dtype=f64), np.prod(host, axis=1, dtype=f64)),
        "mean": (ns.mean(x, axis=1, dtype=f64), np.mean(host, axis=1, dtype=f64)),
        "cumulative_sum": (ns.cumulative_sum(x, axis=1, dtype=f64), np.cumsum(host, axis=1, dtype=f64)),
        "nansum": (ns.nansum(x, dtype=f64), np.nansum(host, dtype=f64)),
        "trace": (ns.linalg.trace(x, dtype=f64), np.trace(host, dtype=f64)),
        "fftfreq": (ns.fft.fftfreq(8, d=0.5, dtype=f64), np.fft.fftfreq(8, d=0.5)),
    }
    for name, (got, want) in cases.items():
        assert isinstance(got, torch.Tensor), name
        assert numpy_dtype(got.dtype) == want.dtype, name
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=name)


def test_a_dtype_outside_the_standard_is_refused_with_the_fix() -> None:
    with pytest.raises(TypeError, match="not one of the Array API dtypes.*float32"):
        ns.zeros(2, dtype=np.dtype("float16"))


def test_python_values_become_host_arrays_and_chunks_become_tensors() -> None:
    # Cubed reads the dtype of what it makes from Python values on the client: NumPy's, with the
    # values and dtypes ruda_torch gives; every chunk it reads back is a tensor.
    for value in (2.5, 3, True, 1j, [[1.5, 2.0], [3.0, 4.0]], (1, 2, 3)):
        got, want = ns.asarray(value), ruda_torch.asarray(value)
        assert isinstance(got, np.ndarray), value
        assert got.dtype == numpy_dtype(want.dtype) and np.array_equal(got, want.numpy()), value
    assert ns.asarray(2, dtype=np.dtype("float64")).dtype == np.float64
    chunk = np.arange(6.0).reshape(2, 3)
    t = ns.asarray(chunk, device="cpu")
    assert isinstance(t, ns.ChunkTensor) and t.dtype == torch.float64
    t[0, 0] = 42.0  # shared with the NumPy chunk, not copied
    assert chunk[0, 0] == 42.0
    assert isinstance(ns.asarray(np.float64(2.5)), torch.Tensor)  # a NumPy scalar is a chunk too

    no_dtype = ns.arange(0, 10, 3)
    assert isinstance(no_dtype, np.ndarray)
    assert no_dtype.dtype == numpy_dtype(ruda_torch.arange(0, 10, 3).dtype)
    np.testing.assert_array_equal(no_dtype, np.arange(0, 10, 3))
    assert isinstance(ns.arange(0, 10, 3, dtype=np.dtype("int64")), torch.Tensor)

    sizes = ns.asarray((0, 4, 4, 2))  # searchsorted's chunk offsets, on the client
    offsets = ns.cumulative_sum(sizes)
    assert isinstance(offsets, np.ndarray)
    np.testing.assert_array_equal(offsets, np.cumsum((0, 4, 4, 2)))
    counts = ns.broadcast_to(ns.asarray(5, dtype=np.dtype("int64")), (2, 1))  # mean's counts, a chunk
    assert isinstance(counts, ns.ChunkTensor)
    np.testing.assert_array_equal(np.asarray(counts), np.full((2, 1), 5))


def test_numpy_style_calls_cubed_makes() -> None:
    host = np.random.default_rng(2).standard_normal((3, 5))
    x = torch.from_numpy(host)
    for index, axis in ((1, 1), (-1, 1), (0, 0), (2, None)):
        source = host if axis is not None else host[0]
        got = ns.take(x if axis is not None else x[0], index, axis=axis)  # var's combine step
        np.testing.assert_array_equal(np.asarray(got), np.take(source, index, axis=axis))
    with pytest.raises(ValueError, match="needs an axis"):
        ns.take(x, 0)
    indices = torch.tensor([0, 2])
    np.testing.assert_array_equal(np.asarray(ns.take(x, indices, axis=1)), np.take(host, [0, 2], axis=1))
    padded = ns.full_like(x, 7.0, shape=(2, 4))  # map_overlap's padding
    np.testing.assert_array_equal(np.asarray(padded), np.full_like(host, 7.0, shape=(2, 4)))


# -- chunks: tensors Cubed can store from any device, made on the default device -------------------


def _made_by_the_namespace(host: np.ndarray) -> dict[str, Any]:
    f64 = np.dtype("float64")
    return {
        "asarray": ns.asarray(host),
        "zeros": ns.zeros((2, 3), dtype=f64),
        "empty": ns.empty((2,), dtype=f64),
        "ones": ns.ones((2,), dtype=f64),
        "full": ns.full((2,), 1.5, dtype=f64),
        "eye": ns.eye(3, dtype=f64),
        "arange": ns.arange(0, 4, dtype=f64),
        "linspace": ns.linspace(0, 1, 4, dtype=f64),
        "fftfreq": ns.fft.fftfreq(4, dtype=f64),
        "broadcast_to of a host array": ns.broadcast_to(ns.asarray(3, dtype=np.dtype("int64")), (2, 2)),
    }


def _computed_from(x: Any) -> dict[str, Any]:
    # what Cubed's operations do to chunks; the plain functions of ruda_torch, forwarded as they are
    return {
        "operators": (x * 2 + 1) / 3,
        "indexing": x[1:, ::2],
        "sum": ns.sum(x, axis=0, dtype=np.dtype("float64")),
        "nansum": ns.nansum(x),
        "mean": ns.mean(x, axis=1, keepdims=True),
        "var": ns.var(x, axis=0),
        "max": ns.max(x),
        "take": ns.take(x, 1, axis=1),
        "matmul": x @ ns.matrix_transpose(x),
        "where": ns.where(x > 0, x, 0.0),
        "astype": ns.astype(x, np.dtype("float32")),
        "concat": ns.concat([x, x], axis=0),
        "searchsorted": ns.searchsorted(ns.sort(x[0]), x[1]),
        "cumulative_sum": ns.cumulative_sum(x, axis=1),
        "full_like with a shape": ns.full_like(x, 7.0, shape=(2, 4)),
        "zeros_like": ns.zeros_like(x),
    }


def test_chunks_and_everything_computed_from_them_are_chunk_tensors() -> None:
    # Cubed stores whatever a task returns through np.asarray: every chunk must be a ChunkTensor,
    # and so must every result torch computes from one
    host = np.random.default_rng(3).standard_normal((3, 4))
    made = _made_by_the_namespace(host)
    computed = _computed_from(made["asarray"])
    for name, got in {**made, **computed}.items():
        assert type(got) is ns.ChunkTensor, (name, type(got))
    np.testing.assert_allclose(np.asarray(computed["operators"]), (host * 2 + 1) / 3)
    np.testing.assert_allclose(np.asarray(computed["matmul"]), host @ host.T)


def test_np_asarray_of_a_chunk_on_the_cpu_is_its_memory_unless_a_copy_is_asked() -> None:
    t = ns.asarray(np.arange(6.0).reshape(2, 3), device="cpu")
    shared = np.asarray(t)
    assert type(shared) is np.ndarray and np.shares_memory(shared, t.numpy())
    assert not np.shares_memory(np.asarray(t, copy=True), t.numpy())
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError):  # NumPy's own refusal: a new dtype needs a copy
        np.asarray(t, dtype=np.float32, copy=False)
    back = pickle.loads(pickle.dumps(t))  # the processes executor moves arrays by pickle
    assert type(back) is ns.ChunkTensor and torch.equal(back, t)


def test_host_chunks_go_to_the_default_device() -> None:
    # A NumPy chunk (read from Zarr) goes to ruda_torch's default device, so that the compute is
    # there, not silently on the CPU. torch's default device is set for the block; "meta" (a device
    # with no memory, in every torch build) stands for a GPU here.
    with torch.device("meta"):
        made = _made_by_the_namespace(np.ones((3, 4)))
    for name, got in made.items():
        assert got.device.type == "meta", (name, got.device)
    assert ns.asarray(torch.ones(2)).device.type == "cpu"  # a tensor stays where it is


@NEEDS_CUDA
@pytest.mark.gpu
def test_a_chunk_on_the_gpu_copies_to_the_host_through_np_asarray() -> None:
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    plain = torch.from_numpy(host).to("cuda")
    with pytest.raises(TypeError, match="cuda"):  # why ChunkTensor exists: torch refuses it
        np.asarray(plain)
    t = ns.asarray(host, device="cuda")
    assert type(t) is ns.ChunkTensor and t.device.type == "cuda"
    got = np.asarray(t.mT)  # a strided view too
    assert type(got) is np.ndarray and got.dtype == np.float32
    np.testing.assert_array_equal(got, host.T)
    np.testing.assert_array_equal(np.asarray(ns.sum(t * 2, axis=0)), np.sum(host * 2, axis=0))
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), host.astype(np.float64))
    with pytest.raises(ValueError, match="copy=None"):
        np.asarray(t, copy=False)
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is ns.ChunkTensor and back.device == t.device and torch.equal(back, t)


@NEEDS_CUDA
@pytest.mark.gpu
def test_host_chunks_go_to_the_default_gpu() -> None:
    host = np.random.default_rng(4).standard_normal((3, 4))
    with torch.device("cuda"):
        made = _made_by_the_namespace(host)
        computed = _computed_from(made["asarray"])
    for name, got in {**made, **computed}.items():
        assert type(got) is ns.ChunkTensor and got.device.type == "cuda", (name, type(got), got.device)
    np.testing.assert_allclose(np.asarray(computed["var"]), np.var(host, axis=0))


# -- Cubed on ruda_torch.cubed ---------------------------------------------------------------------

WORKLOAD = textwrap.dedent(
    """
    import sys

    import numpy as np
    import torch
    import cubed
    import cubed.array_api as cxp
    import ruda_torch.cubed
    from cubed.runtime.create import create_executor

    DEVICE = ruda_torch.cubed.__array_namespace_info__().default_device()  # in every worker too


    def chunk_is_tensor(block):
        # 1 for each element of a chunk that reached the function as a ChunkTensor on the default
        # device, else 0 (made from the chunk, so that Cubed can store it from the GPU)
        ok = isinstance(block, ruda_torch.cubed.ChunkTensor) and block.device == DEVICE
        return torch.full_like(block, float(ok), dtype=torch.float64)


    def main():
        executor = create_executor(sys.argv[1])
        assert DEVICE == torch.device(sys.argv[2]), (DEVICE, sys.argv[2])
        assert cxp.float64 == np.dtype("float64") and cxp.int64 == np.dtype("int64"), cxp.float64
        # the arrays Cubed makes by itself (searchsorted's offsets) take the default spec: set it
        cubed.config.set({"spec.allowed_mem": "200MB"})
        rng = np.random.default_rng(0)
        host = rng.standard_normal((64, 48))
        host[3, 5] = np.nan
        clean = np.nan_to_num(host)
        a = cxp.asarray(host, chunks=(16, 16))
        c = cxp.asarray(clean, chunks=(16, 16))
        ordered, probes = np.sort(rng.standard_normal(40)), rng.standard_normal(7)
        checks = {
            "elementwise chain": (
                cxp.exp(cxp.sin(c) * 2 + 1) - c / 3,
                np.exp(np.sin(clean) * 2 + 1) - clean / 3,
            ),
            "sum over axis 0": (cxp.sum(c * 2 + 1, axis=0), np.sum(clean * 2 + 1, axis=0)),
            "sum over axis 1": (cxp.sum(c, axis=1), np.sum(clean, axis=1)),
            "mean over axis 1": (cxp.mean(c, axis=1), np.mean(clean, axis=1)),
            "var over axis 0": (cxp.var(c, axis=0), np.var(clean, axis=0)),
            "chunked matmul": (c @ cxp.matrix_transpose(c), clean @ clean.T),
            "sum": (cxp.sum(c), np.sum(clean)),
            "max": (cxp.max(c), np.max(clean)),
            "mean": (cxp.mean(c), np.mean(clean)),
            "nansum": (cubed.nansum(a), np.nansum(host)),
            "nanmean over axis 0": (cubed.nanmean(a, axis=0), np.nanmean(host, axis=0)),
            "arange without a dtype": (cxp.arange(0, 50, 3, chunks=4) * 2, np.arange(0, 50, 3) * 2),
            "asarray of a list": (
                cxp.asarray([[1, 2, 3], [4, 5, 6]], chunks=1) + 1,
                np.array([[1, 2, 3], [4, 5, 6]]) + 1,
            ),
            "searchsorted": (
                cxp.searchsorted(cxp.asarray(ordered, chunks=9), cxp.asarray(probes, chunks=3)),
                np.searchsorted(ordered, probes),
            ),
            "chunks are tensors": (
                cxp.sum(cubed.map_blocks(chunk_is_tensor, c, dtype=cxp.float64)),
                np.float64(clean.size),
            ),
        }
        results = cubed.compute(*(lazy for lazy, _ in checks.values()), executor=executor)
        for (name, (lazy, want)), got in zip(checks.items(), results, strict=True):
            assert isinstance(got, ruda_torch.cubed.ChunkTensor), (name, type(got))
            assert got.device == DEVICE, (name, got.device)
            got = np.asarray(got)
            assert got.dtype == lazy.dtype == np.asarray(want).dtype, (name, got.dtype, lazy.dtype)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=name)
        print("ok", len(checks))


    if __name__ == "__main__":  # the processes executor starts its workers by spawning
        main()
    """
)


@pytest.mark.parametrize(
    ("executor", "device"),
    [
        ("single-threaded", "cpu"),
        ("processes", "cpu"),
        pytest.param("single-threaded", "cuda:0", marks=[NEEDS_CUDA, pytest.mark.gpu]),
        pytest.param("threads", "cuda:0", marks=[NEEDS_CUDA, pytest.mark.gpu]),
        pytest.param("processes", "cuda:0", marks=[NEEDS_CUDA, pytest.mark.gpu]),
    ],
)
def test_cubed_on_ruda_torch(executor: str, device: str, tmp_path: Path) -> None:
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    env = {
        **os.environ,
        "CUBED_BACKEND_ARRAY_API_MODULE": "ruda_torch.cubed",
        "RUDA_TORCH_DEVICE": device,  # the workers of the processes executor inherit it
    }
    done = subprocess.run(
        [sys.executable, str(script), executor, device],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "ok 15" in done.stdout, done.stderr[-4000:]
