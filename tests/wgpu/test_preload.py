"""A program's kernels compile in background threads when its next process opens the device: the
second process takes them from there and computes the same bits; a damaged list, a kernel that
no longer compiles and a kernel no thread has started yet are compiled on the spot."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from ruda.testing import parametrize_backends, python_output
from ruda_wgpu import _preload

pytestmark = parametrize_backends("wgpu")

#: a fresh process: elementwise, sort and scan kernels, and what the device counted
PROCESS = """
import json, numpy as np, ruda_wgpu as xp
x = xp.asarray(np.linspace(-2, 2, 1001, dtype=np.float32))
values = [np.asarray(f(x)).tolist() for f in (xp.sin, xp.exp, lambda v: xp.sort(v * -1.5), xp.cumulative_sum)]
made, preloaded = xp.memory_stats()["pipelines"], xp.memory_stats()["pipelines_preloaded"]
print(json.dumps({"values": values, "pipelines": made, "preloaded": preloaded}))
"""

GOOD = """@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) i: vec3<u32>) { out[i.x] = %s; }"""


def _run(folder: Path, **environment: str | None) -> dict:
    return json.loads(python_output(PROCESS, RUDA_CACHE_DIR=str(folder), **environment))


def _lists(folder: Path) -> list[Path]:
    return sorted((folder / "preload").glob("*.json"))


def test_a_second_process_takes_its_kernels_from_the_preload(xp, cache_folder):
    first = _run(cache_folder)
    assert first["preloaded"] == 0
    (listed,) = _lists(cache_folder)
    assert len(json.loads(listed.read_text())["kernels"]) == first["pipelines"] > 4
    second = _run(cache_folder)
    assert second["preloaded"] == second["pipelines"] == first["pipelines"]
    assert second["values"] == first["values"]


def test_preloading_can_be_turned_off(xp, cache_folder):
    first = _run(cache_folder)
    second = _run(cache_folder, RUDA_WGPU_PRELOAD="0")
    assert second["preloaded"] == 0 and second["values"] == first["values"]


def test_a_damaged_list_is_ignored_and_written_anew(xp, cache_folder):
    first = _run(cache_folder)
    (listed,) = _lists(cache_folder)
    listed.write_text('{"kernels": [1, 2')
    second = _run(cache_folder)
    assert second["preloaded"] == 0 and second["values"] == first["values"]
    assert len(json.loads(listed.read_text())["kernels"]) == first["pipelines"]
    assert _run(cache_folder)["preloaded"] == first["pipelines"]


def test_clear_shader_cache_deletes_the_lists(xp, cache_folder):
    _run(cache_folder)
    assert _lists(cache_folder)
    python_output("import ruda_wgpu as xp; xp.clear_shader_cache()", RUDA_CACHE_DIR=str(cache_folder))
    assert not (cache_folder / "preload").exists()


def _device(xp):
    dev = xp.__array_namespace_info__().default_device()
    xp.asarray([1.0], device=dev)  # opens it
    return dev


def _listing(monkeypatch, folder: Path, kernels: list[str]) -> str:
    """List ``kernels`` for this program on a made-up adapter; returns the adapter's name."""
    monkeypatch.setenv("RUDA_CACHE_DIR", str(folder))
    adapter = f"test adapter {folder.name}"
    path = _preload.list_path(adapter)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"kernels": kernels}))
    return adapter


def test_a_listed_kernel_that_fails_is_compiled_again_and_raises(xp, monkeypatch, tmp_path):
    dev = _device(xp)
    good, other, bad = GOOD % "1.0", GOOD % "2.0", GOOD % "undefined_name"
    adapter = _listing(monkeypatch, tmp_path, [bad, good])
    preload = _preload.Preload(adapter, dev._compile)
    assert preload.pipeline(good).ruda_layout is not None
    with pytest.raises(Exception, match="undefined_name"):
        preload.pipeline(bad)
    preload.pipeline(other)
    assert preload.preloaded == 1
    preload.close()
    assert json.loads(_preload.list_path(adapter).read_text())["kernels"] == [good, other]


def test_a_kernel_no_thread_has_started_is_compiled_by_the_caller(xp, monkeypatch, tmp_path):
    dev = _device(xp)
    kernels = [GOOD % f"{k}.0" for k in range(3)]
    adapter = _listing(monkeypatch, tmp_path, kernels)
    monkeypatch.setattr(_preload, "threads", lambda: 2)
    release, compiled = threading.Event(), []

    def held(code: str):  # the two threads wait inside their first compiles
        if threading.current_thread() is not threading.main_thread():
            release.wait(30)
        compiled.append(code)
        return dev._compile(code)

    preload = _preload.Preload(adapter, held)
    assert preload.pipeline(kernels[2]) is not None and preload.preloaded == 0
    release.set()
    assert preload.pipeline(kernels[0]) is not None and preload.pipeline(kernels[1]) is not None
    assert preload.preloaded == 2
    preload.close()
    assert sorted(compiled) == sorted(kernels)
