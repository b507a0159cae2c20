"""The Vulkan driver starts in a thread while wgpu is imported: after the drivers' cache folders
are set, only where Vulkan may be used, and leaving no instance or thread behind."""

from __future__ import annotations

import ctypes
import json
import sys
import threading
from typing import Any

import pytest
from ruda.testing import parametrize_backends, python_output
from ruda_wgpu import _vulkan_warmup
from ruda_wgpu._shader_cache import DRIVER_CACHES

pytestmark = [
    parametrize_backends("wgpu"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the warm-up uses Linux's Vulkan loader"),
]

#: a fresh process: notes the driver cache folders as the warm-up opens the Vulkan loader (an
#: audit hook: ruda_wgpu's import starts it, before anything could be patched), computes, and
#: reports what the warm-up left
PROCESS = """
import json, os, sys
seen = {}
def hook(event, args):
    if event == "ctypes.dlopen" and "vulkan" in str(args[0]) and not seen:
        seen.update({v: os.environ.get(v) for v in sys.modules["ruda_wgpu._shader_cache"].DRIVER_CACHES})
sys.addaudithook(hook)
import numpy as np, ruda_wgpu as xp
from ruda_wgpu import _vulkan_warmup
values = np.asarray(xp.exp(xp.asarray([0.0, 1.0]))).tolist()
w = _vulkan_warmup._current
left = None if w is None else [w.finished, bool(w.instance), w.thread.is_alive(), w.devices]
print(json.dumps({"values": values, "seen": seen, "started": w is not None, "left": left}))
"""


def test_the_driver_starts_after_its_cache_folder_is_set_and_leaves_nothing(xp, tmp_path):
    unset: dict[str, Any] = {variable: None for variable in DRIVER_CACHES}  # (this process set them)
    out = json.loads(python_output(PROCESS, RUDA_CACHE_DIR=str(tmp_path), RUDA_WGPU_BACKEND=None, **unset))
    assert out["values"] == [1.0, pytest.approx(2.7182817)]
    assert out["started"]
    # the driver reads its cache folder when it starts: ruda's was set before the thread ran
    # (the hook saw it: patching the thread's run after the import that starts it had seen
    # nothing, and this check had held for no folder at all)
    assert set(out["seen"]) == set(DRIVER_CACHES)
    assert all(str(tmp_path) in str(path) for path in out["seen"].values()), out["seen"]
    finished, instance_left, thread_alive, devices = out["left"]
    assert finished and not instance_left and not thread_alive and devices >= 1


def test_no_warm_up_where_another_api_is_asked_for(xp, tmp_path):
    code = (
        "from ruda_wgpu import _devices, _vulkan_warmup\n"
        "_devices.load_wgpu()\n"
        "print(_vulkan_warmup._current is None)\n"
    )
    assert python_output(code, RUDA_CACHE_DIR=str(tmp_path), RUDA_WGPU_BACKEND="gl").strip() == "True"


class _SlowLoader:
    """A Vulkan loader whose instance comes only when ``release`` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.destroyed: list[int] = []

    def vkCreateInstance(self, info: Any, allocator: Any, out: Any) -> int:  # noqa: N802
        self.release.wait(10)
        out._obj.value = 1234
        return 0

    def vkEnumeratePhysicalDevices(self, instance: Any, count: Any, devices: Any) -> int:  # noqa: N802
        count._obj.value = 2
        return 0

    def vkDestroyInstance(self, instance: Any, allocator: Any) -> None:  # noqa: N802
        self.destroyed.append(ctypes.c_void_p(instance.value).value or 0)


@pytest.mark.parametrize("keep", [False, True])
def test_a_driver_slower_than_the_wait_is_cleaned_up_by_its_thread(xp, monkeypatch, keep):
    # (kept: as at the process's end, where the instance is left to it)
    loader = _SlowLoader()
    warmup = _vulkan_warmup._Warmup(loader)  # type: ignore[arg-type]
    monkeypatch.setattr(_vulkan_warmup, "_current", warmup)
    monkeypatch.setattr(_vulkan_warmup, "WAIT_S", 0.05)
    warmup.thread.start()
    assert _vulkan_warmup.finish(keep=keep) is None  # gave up waiting
    assert loader.destroyed == []
    loader.release.set()
    warmup.thread.join(10)
    if keep:
        assert loader.destroyed == [] and warmup.instance.value == 1234
    else:
        assert loader.destroyed == [1234] and not warmup.instance


def test_finish_destroys_the_instance_of_a_driver_that_answered(xp, monkeypatch):
    loader = _SlowLoader()
    loader.release.set()
    warmup = _vulkan_warmup._Warmup(loader)  # type: ignore[arg-type]
    monkeypatch.setattr(_vulkan_warmup, "_current", warmup)
    warmup.thread.start()
    assert _vulkan_warmup.finish() == 2
    assert loader.destroyed == [1234] and not warmup.thread.is_alive()
    assert _vulkan_warmup.finish() is None  # once


def test_a_process_ending_at_once_waits_for_the_driver_to_start(xp, tmp_path):
    # (OpenGL asked for: ruda_wgpu's import starts no warm-up, and the code starts it.) The
    # observer is registered before start(), so it runs after the warm-up's own exit handler
    # (atexit runs handlers last in, first out): the thread must be out of the driver by then.
    code = (
        "import atexit, ruda_wgpu._vulkan_warmup as w\n"
        "atexit.register(lambda: print(w._current and (w._current.thread.is_alive(), w._current.finished, "
        "bool(w._current.instance))))\n"
        "print(w.start(), flush=True)\n"
    )
    output = python_output(code, RUDA_CACHE_DIR=str(tmp_path), RUDA_WGPU_BACKEND="gl")
    started, at_exit = output.split("\n")[:2]
    if started != "True":
        pytest.skip("no Vulkan loader to start the driver with")
    # the thread had ended; its instance is left to the process's end (destroying it there
    # crashed NVIDIA's driver now and then)
    assert at_exit == "(False, True, True)"


#: a fresh process that imports NumPy, then ruda_wgpu, noting the extension modules loaded after
#: the warm-up opened the Vulkan loader (an audit hook sees both)
EXTENSIONS_AFTER_START = """
import json, sys
import numpy
after, started = [], []
def hook(event, args):
    if event == "ctypes.dlopen" and "vulkan" in str(args[0]):
        started.append(True)
    elif event == "import" and started:
        after.append(args[0])
sys.addaudithook(hook)
import ruda_wgpu
loaded = [n for n in after if str(getattr(sys.modules.get(n), "__file__", "")).endswith((".so", ".pyd"))]
print(json.dumps({"started": bool(started), "extensions": sorted(set(loaded))}))
"""


def test_the_import_loads_no_extension_module_while_the_driver_loads(xp, tmp_path):
    """The warm-up thread holds the C library's loader lock while it loads the driver, and an
    extension module loaded meanwhile waits for it (heapq's had, 15-25 ms of each start on
    lavapipe): the import loads those it needs before it starts the thread."""
    unset: dict[str, Any] = {variable: None for variable in DRIVER_CACHES}
    out = json.loads(
        python_output(EXTENSIONS_AFTER_START, RUDA_CACHE_DIR=str(tmp_path), RUDA_WGPU_BACKEND=None, **unset)
    )
    if not out["started"]:
        pytest.skip("no Vulkan loader: nothing is started")
    assert out["extensions"] == []
