"""Which adapters become devices: the probe, its cache, the ranking and RUDA_WGPU_BACKEND."""

from __future__ import annotations

import json
from typing import Any

import pytest

wgpu = pytest.importorskip("wgpu", reason="the wgpu package is not installed")
from ruda_wgpu import _devices  # noqa: E402

pytestmark = pytest.mark.skipif(
    not wgpu.gpu.enumerate_adapters_sync(), reason="wgpu finds no adapter on this machine"
)


class _FakeAdapter:
    """An adapter with chosen info; opening it fails as a GL adapter without compute does."""

    def __init__(self, backend: str, kind: str, name: str = "fake") -> None:
        self.info = {
            "device": name,
            "backend_type": backend,
            "adapter_type": kind,
            "description": "driver 1.0",
            "vendor_id": 1,
            "device_id": 2,
        }

    def request_device_sync(self, **kwargs: Any) -> Any:
        raise RuntimeError(  # what wgpu says of the H200's OpenGL adapter
            "Request device failed (3): Validation Error\n\nCaused by:\n  Parent device is lost"
        )


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(_devices.CACHE_ENV, str(tmp_path))
    return tmp_path / "wgpu-adapters.json"


def test_every_real_adapter_found_is_probed_and_the_verdict_cached(cache, monkeypatch):
    usable, excluded = _devices.usable_adapters()
    verdicts = json.loads(cache.read_text())
    # wgpu's instance was made by this module's skip condition, before ruda could choose its
    # APIs: ruda cannot tell whether it saw every API, so it notes nothing about OpenGL
    note = verdicts.pop(_devices.OPENGL_KEY, None)
    assert (note is not None) == (_devices._instance_apis == "All")
    assert note is None or note["serves a device"] == any(a.info["backend_type"] == "OpenGL" for a in usable)
    assert len(verdicts) == len(usable) + len(excluded)
    failed = [e for e in excluded if e.reason != _devices.DUPLICATE]
    assert all(v["ok"] for v in verdicts.values()) == (not failed)
    calls = []
    monkeypatch.setattr(_devices, "_probe_in_child", lambda key: calls.append(key) or (True, ""))
    again, _ = _devices.usable_adapters()
    assert calls == []  # the second look reads the cache
    assert [_devices.adapter_key(a) for a in again] == [_devices.adapter_key(a) for a in usable]


def test_an_adapter_that_cannot_open_a_device_is_left_out_with_the_reason():
    ok, reason = _devices.probe(_FakeAdapter("OpenGL", "Unknown"))
    assert not ok
    assert reason.startswith("cannot run compute shaders") and "device is lost" in reason


def test_a_real_adapter_passes_the_probe():
    usable, _ = _devices.usable_adapters()
    assert usable, "no adapter passed the probe"
    assert _devices.probe(usable[0]) == (True, "")


def test_devices_rank_discrete_then_integrated_then_cpu_and_native_apis_before_gl():
    adapters = [
        _FakeAdapter("OpenGL", "DiscreteGPU", "gl-discrete"),
        _FakeAdapter("Vulkan", "CPU", "lavapipe"),
        _FakeAdapter("Vulkan", "IntegratedGPU", "igpu"),
        _FakeAdapter("Vulkan", "DiscreteGPU", "dgpu"),
        _FakeAdapter("OpenGL", "Unknown", "gl-unknown"),
    ]
    ranked = [a.info["device"] for a in sorted(adapters, key=_devices._rank)]
    assert ranked == ["dgpu", "gl-discrete", "igpu", "lavapipe", "gl-unknown"]


def test_backend_choice_keeps_only_that_api(cache, monkeypatch):
    found = {a.info["backend_type"] for a in wgpu.gpu.enumerate_adapters_sync()}
    # the first API found, by our name for it (an OpenGL-only machine included)
    api = next(name for name, backend in _devices.BACKENDS.items() if backend in found)
    monkeypatch.setenv(_devices.BACKEND_ENV, api.upper())  # any case
    usable, excluded = _devices.usable_adapters()
    assert {a.info["backend_type"] for a in usable} <= {_devices.BACKENDS[api]}
    assert usable or excluded


def test_backend_choice_that_finds_nothing_says_what_exists(cache, monkeypatch):
    found = {a.info["backend_type"] for a in wgpu.gpu.enumerate_adapters_sync()}
    missing = next(name for name, api in _devices.BACKENDS.items() if api not in found)
    monkeypatch.setenv(_devices.BACKEND_ENV, missing)
    with pytest.raises(RuntimeError, match=f"asks for {_devices.BACKENDS[missing]}") as err:
        _devices.usable_adapters()
    assert all(api in str(err.value) for api in found)


def test_unknown_backend_name_lists_the_choices(monkeypatch):
    monkeypatch.setenv(_devices.BACKEND_ENV, "cuda")
    with pytest.raises(ValueError, match="vulkan") as err:
        _devices.usable_adapters()
    assert "RUDA_WGPU_BACKEND='cuda'" in str(err.value)


#: a fresh process: its devices, the adapters left out, and the APIs wgpu has loaded
LOOK = """
import json, wgpu
from ruda_wgpu import _devices
usable, excluded = _devices.usable_adapters()
print(json.dumps({"devices": [_devices.describe(a) for a in usable],
                  "excluded": sorted([e.description, e.reason] for e in excluded),
                  "loaded": sorted({a.info["backend_type"] for a in wgpu.gpu.enumerate_adapters_sync()})}))
"""


def _look(folder: Any, **environment: str) -> dict[str, Any]:
    from ruda.testing import python_output

    return json.loads(python_output(LOOK, RUDA_CACHE_DIR=str(folder), RUDA_WGPU_BACKEND=None, **environment))


@pytest.fixture
def known_adapters(tmp_path):
    """A cache folder with this machine's verdicts (each probe takes seconds) and no note on
    OpenGL yet."""
    verdicts = _devices.cache_dir() / "wgpu-adapters.json"
    known = json.loads(verdicts.read_text()) if verdicts.exists() else {}
    known.pop(_devices.OPENGL_KEY, None)
    (tmp_path / verdicts.name).write_text(json.dumps(known))
    return tmp_path


def test_opengl_that_served_no_device_is_not_loaded_again(known_adapters):
    first = _look(known_adapters)
    if "OpenGL" in " ".join(first["devices"]):
        pytest.skip("an OpenGL adapter is a device here: OpenGL is always loaded")
    note = json.loads((known_adapters / "wgpu-adapters.json").read_text())[_devices.OPENGL_KEY]
    assert note["serves a device"] is False
    again = _look(known_adapters)
    assert "OpenGL" not in again["loaded"]
    # the same devices, and the OpenGL adapters left out are still listed, with their reasons
    assert (again["devices"], again["excluded"]) == (first["devices"], first["excluded"])


def test_a_machine_whose_other_apis_find_nothing_looks_at_opengl_again(known_adapters):
    first = _look(known_adapters)
    repeated = [d for d, reason in first["excluded"] if "(OpenGL," in d and reason == _devices.DUPLICATE]
    if not repeated:  # e.g. NVIDIA's OpenGL adapter fails the probe, so it serves nothing either way
        pytest.skip("needs an OpenGL adapter that another API's device repeats")
    # Vulkan's loader finds no driver: the devices OpenGL left to Vulkan are OpenGL's now
    gone = _look(known_adapters, VK_DRIVER_FILES="/nonexistent.json", VK_ICD_FILENAMES="/nonexistent.json")
    assert gone["devices"] and all("(OpenGL," in d for d in gone["devices"])
    note = json.loads((known_adapters / "wgpu-adapters.json").read_text())[_devices.OPENGL_KEY]
    assert note["serves a device"] is True
    back = _look(known_adapters)  # every API is looked at again, and OpenGL serves nothing
    assert "OpenGL" in back["loaded"] and back["devices"] == first["devices"]


def test_a_wgpu_instance_made_before_ruda_leaves_the_opengl_note_alone(known_adapters):
    from ruda.testing import python_output

    restricted = (
        "from wgpu.backends.wgpu_native import extras\n"
        "extras.set_instance_extras(backends=['Primary'])  # every API but OpenGL\n"
        "import wgpu\n"
        "wgpu.gpu.enumerate_adapters_sync()\n"
    )
    folder = str(known_adapters)
    out = json.loads(python_output(restricted + LOOK, RUDA_CACHE_DIR=folder, RUDA_WGPU_BACKEND=None))
    assert out["devices"] and "OpenGL" not in out["loaded"]
    # that process saw no OpenGL adapter, which says nothing of what OpenGL would give
    assert _devices.OPENGL_KEY not in json.loads((known_adapters / "wgpu-adapters.json").read_text())


def test_ruda_info_says_which_of_the_standards_dtypes_a_device_lacks():
    from ruda_wgpu._engine import default_device
    from ruda_wgpu._plugin import WgpuBackend, lacking, sizes

    full = ("bool", "int32", "int64", "uint64", "float32", "float64", "complex128")
    assert lacking(full) == ""
    assert lacking(("bool", "int32", "float32")) == (
        "; no int64, uint64, float64, complex128 (the adapter lacks shader-int64)"
    )
    assert lacking(("bool", "int64", "uint64", "float32")) == (
        "; no float64, complex128 (the adapter lacks shader-f64)"
    )
    dev = default_device()
    line = WgpuBackend().probe().details[dev.name]
    assert line == dev.description + sizes(dev.limits["max-buffer-size"], dev.max_binding) + lacking(
        dev.dtype_names
    )


def test_ruda_info_gives_a_devices_array_and_binding_sizes():
    from ruda_wgpu._plugin import sizes

    h200 = "; arrays up to 4.0 GiB, 2.0 GiB a kernel binding (larger ones go in parts)"
    assert sizes(4292870144, 2147483644) == h200
    lavapipe = "; arrays up to 2.0 GiB, 128 MiB a kernel binding (larger ones go in parts)"
    assert sizes((1 << 31) - 1, 1 << 27) == lavapipe


def test_the_binding_cap_from_the_environment(monkeypatch):
    from ruda_wgpu._buffers import MAX_BINDING_ENV, binding_limit

    monkeypatch.delenv(MAX_BINDING_ENV, raising=False)
    assert binding_limit(1 << 27) == 1 << 27
    monkeypatch.setenv(MAX_BINDING_ENV, "4096")
    assert binding_limit(1 << 27) == 4096
    monkeypatch.setenv(MAX_BINDING_ENV, str(1 << 30))
    assert binding_limit(1 << 27) == 1 << 27  # (never above the adapter's)
    for bad, why in (("lots", "a number of bytes"), ("100", "at least 1024")):
        monkeypatch.setenv(MAX_BINDING_ENV, bad)
        with pytest.raises(ValueError, match=why):
            binding_limit(1 << 27)


THREADS_AT_ONCE = """
import threading
import ruda_wgpu as xp
start, made = threading.Barrier(4), []
def first_array():
    start.wait()
    made.append(xp.ones(3))
threads = [threading.Thread(target=first_array) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(len({id(a.device) for a in made}), float(xp.sum(made[0] + made[1] + made[2] + made[3])))
"""


def test_threads_making_their_first_arrays_at_once_share_the_devices(tmp_path):
    """Each had found the adapters and made a device of its own, named alike, whose arrays would
    not mix ("add() got arrays on two devices, wgpu:0 and wgpu:0")."""
    from ruda.testing import python_output

    assert python_output(THREADS_AT_ONCE, RUDA_CACHE_DIR=str(tmp_path)).split() == ["1", "12.0"]
