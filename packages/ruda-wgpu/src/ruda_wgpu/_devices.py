"""Which adapters are devices: those that run our compute kernels correctly, best first.

wgpu lists every adapter of every API it can load, and some cannot run compute
shaders at all (an OpenGL adapter without GL 4.3 loses its device on the first
pipeline). So each adapter is probed once: a child process opens it and runs a
small kernel that uses what ours use (storage and uniform buffers, workgroup
memory and barriers, integer and float arithmetic), and checks the numbers. A
child process, because a broken driver may crash or hang its process. Verdicts
are cached on disk per adapter, driver and wgpu version, so a machine pays for
the probe once.

Beside the verdicts the cache notes whether OpenGL gave a device at the last look
at every API. Where it gave none (its adapters repeat a Vulkan device, or fail
the probe), later processes have wgpu load the other APIs alone, and list the
OpenGL adapters left out as noted; if those APIs then find no device, every API
is looked at again. Where another library made wgpu's instance first, with APIs
ruda cannot know, nothing is noted.

``RUDA_WGPU_BACKEND`` picks the API (``vulkan``, ``metal``, ``dx12``, ``gl``),
as the seed's ``vulkan``/``metal``/``webgpu`` features do.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruda_wgpu import _vulkan_warmup

BACKEND_ENV = "RUDA_WGPU_BACKEND"
#: wgpu-py's native backend's module that parses wgpu-native's C header when imported
BACKEND_FFI = "wgpu.backends.wgpu_native._ffi"
#: where verdicts are kept; default: the platform's user cache folder for ruda
CACHE_ENV = "RUDA_CACHE_DIR"
#: user spellings of each API -> wgpu's backend_type
BACKENDS = {
    "vulkan": "Vulkan",
    "metal": "Metal",
    "dx12": "D3D12",
    "d3d12": "D3D12",
    "gl": "OpenGL",
    "opengl": "OpenGL",
}
PROBE_TIMEOUT_S = 60
#: the verdicts' entry for what OpenGL gave when every API was last looked at
OPENGL_KEY = "OpenGL at the last look at every API"
#: why an adapter that passed the probe is still not a device of its own
DUPLICATE = "the same device as one served by a better API"

#: the APIs ruda had wgpu make its instance with (see :func:`_load_apis`); None where ruda did
#: not choose them (another library made it first, or none is made yet)
_instance_apis: str | None = None

_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 1}


@dataclass(frozen=True)
class Excluded:
    """An adapter wgpu found that is not a device, and why."""

    description: str
    reason: str
    #: its API, as wgpu's ``backend_type`` names it
    api: str = ""


def native_api(device: Any) -> Any:
    """wgpu-py's wgpu-native backend module (``ffi``, ``lib``, its classes) when ``device`` is
    one of its devices, else None: the engine's direct native calls need it."""
    try:
        from wgpu.backends.wgpu_native import _api

        if isinstance(device, _api.GPUDevice):
            return _api
    except (ImportError, AttributeError):
        pass
    return None


def describe(adapter: Any) -> str:
    """``"NVIDIA H200 (Vulkan, DiscreteGPU)"``."""
    info = adapter.info
    return f"{info['device']} ({info['backend_type']}, {info['adapter_type']})"


def adapter_key(adapter: Any) -> str:
    """What identifies an adapter's behaviour: API, device, driver and the wgpu version."""
    info = adapter.info
    parts = [info["backend_type"], info["adapter_type"], info["device"], info["description"]]
    import wgpu  # (loaded already: the adapter is one of its objects)

    parts += [str(info["vendor_id"]), str(info["device_id"]), wgpu.__version__]
    return "|".join(parts)


def wanted_backend() -> str | None:
    """The backend_type ``RUDA_WGPU_BACKEND`` asks for (None: every API); ValueError if unknown."""
    choice = os.environ.get(BACKEND_ENV, "").strip().lower()
    if not choice:
        return None
    if choice not in BACKENDS:
        raise ValueError(
            f"{BACKEND_ENV}={choice!r} is not an API wgpu knows: use one of "
            f"{', '.join(sorted(set(BACKENDS) - {'d3d12', 'opengl'}))}, or unset it"
        )
    return BACKENDS[choice]


def runtime_dir() -> None:
    """Give the graphics stack an XDG_RUNTIME_DIR on a headless Linux machine that has none.

    Without one, the Vulkan loader and Mesa print "error: XDG_RUNTIME_DIR is invalid or not set"
    for every process that opens an adapter, though nothing is wrong. The folder is private
    (0700), per user, and reused, so nothing accumulates in the temporary directory.
    """
    if not sys.platform.startswith("linux") or os.environ.get("XDG_RUNTIME_DIR"):
        return
    path = Path(tempfile.gettempdir()) / f"ruda-runtime-{os.getuid()}"
    with contextlib.suppress(OSError):
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.stat()
        if info.st_uid == os.getuid() and info.st_mode & 0o077 == 0:  # ours, and private
            os.environ["XDG_RUNTIME_DIR"] = str(path)


def start_driver() -> None:
    """What comes before a driver loads: an XDG_RUNTIME_DIR and the drivers' cache folders (read
    when a driver starts); then the Vulkan driver starts in a thread (``_vulkan_warmup``), once a
    process, unless wgpu is loaded already or asked for another API. ruda_wgpu's import calls
    it first, so that the driver starts while the rest of ruda_wgpu and wgpu-py are imported."""
    from ruda_wgpu import _shader_cache  # it builds on cache_dir() here

    runtime_dir()
    _shader_cache.configure()
    if BACKEND_FFI not in sys.modules and _may_use_vulkan():
        _vulkan_warmup.start()


def load_wgpu() -> None:
    """What comes before wgpu's first adapter: :func:`start_driver`, then wgpu-py's native
    backend with its parsed header from ruda's cache."""
    from ruda_wgpu import _ffi_cache

    start_driver()
    _ffi_cache.import_backend()
    _ffi_cache.warm()


def _may_use_vulkan() -> bool:
    try:
        return wanted_backend() in (None, "Vulkan")
    except ValueError:  # usable_adapters says what is wrong with the name
        return False


def usable_adapters() -> tuple[list[Any], list[Excluded]]:
    """The adapters that run our kernels, best first, and those left out with the reason."""
    load_wgpu()
    import wgpu

    backend = wanted_backend()
    verdicts = _Verdicts()
    opengl = verdicts.opengl() if backend is None else None
    if opengl is not None:
        _load_apis("Primary")
    elif backend is None:
        _load_apis("All")
    without_opengl = opengl is not None and _instance_apis == "Primary"
    try:
        found = list(wgpu.gpu.enumerate_adapters_sync())
    finally:
        _vulkan_warmup.finish()  # wgpu has its instance: the driver stays loaded without ours
    if backend is not None:
        chosen = [a for a in found if a.info["backend_type"] == backend]
        if not chosen and found:
            apis = sorted({a.info["backend_type"] for a in found})
            raise RuntimeError(
                f"{BACKEND_ENV} asks for {backend}, but wgpu found adapters only for "
                f"{', '.join(apis)}: {'; '.join(describe(a) for a in found)}"
            )
        found = chosen
    distinct, excluded = _devices_of(found, verdicts)
    if without_opengl and not distinct and _load_apis("All", replace=True):
        # the machine has changed since OpenGL served no device: look at every API again
        without_opengl = False
        distinct, excluded = _devices_of(list(wgpu.gpu.enumerate_adapters_sync()), verdicts)
    if without_opengl:
        excluded += opengl or []
    elif backend is None and _instance_apis == "All":  # a look at every API: note what OpenGL gave
        verdicts.note_opengl(distinct, excluded)
    verdicts.save()
    return distinct, excluded


def _load_apis(apis: str, replace: bool = False) -> bool:
    """Have wgpu load only ``apis`` (wgpu's instance flag: ``"Primary"`` is every API but
    OpenGL, ``"All"`` every one); False, with nothing done, where its instance exists already
    (or, with ``replace``, where this wgpu-py cannot replace it). :data:`_instance_apis` keeps
    what was asked for: an instance made before, by ruda with other APIs or by another library
    with any, leaves it as it was.

    wgpu-py keeps one instance per process, made with the APIs asked for before its first use,
    and loading OpenGL costs a process 30-40 ms on the H200's host (NVIDIA's EGL driver) for an
    adapter that fails the probe; lavapipe's OpenGL adapter only repeats its Vulkan one.
    """
    global _instance_apis
    from wgpu.backends.wgpu_native import _helpers, extras

    try:
        if replace:  # wgpu-py's own comment allows dropping its instance this way
            _helpers._the_instance = None
        extras.set_instance_extras(backends=[apis])
    except (AttributeError, RuntimeError):  # made already, or a wgpu-py without the means
        return False
    _instance_apis = apis
    return True


def _devices_of(found: list[Any], verdicts: _Verdicts) -> tuple[list[Any], list[Excluded]]:
    """The adapters of ``found`` that are devices, best first, and those left out with why."""
    usable, excluded = [], []
    for adapter in found:
        ok, reason = verdicts.get(adapter)
        if ok:
            usable.append(adapter)
        else:
            excluded.append(Excluded(describe(adapter), reason, adapter.info["backend_type"]))
    usable.sort(key=_rank)
    # The same hardware behind a second API (llvmpipe through Vulkan and OpenGL) is one device:
    # the best-ranked API serves it, and the other is listed as excluded.
    seen: set[tuple[str, str, int, int]] = set()
    distinct = []
    for adapter in usable:
        info = adapter.info
        hardware = (info["device"], info["adapter_type"], info["vendor_id"], info["device_id"])
        if hardware in seen:
            excluded.append(Excluded(describe(adapter), DUPLICATE, info["backend_type"]))
        else:
            seen.add(hardware)
            distinct.append(adapter)
    return distinct, excluded


def _rank(adapter: Any) -> tuple[int, int]:
    info = adapter.info
    return _TYPE_RANK.get(info["adapter_type"], 4), _BACKEND_RANK.get(info["backend_type"], 1)


def cache_dir() -> Path:
    """The folder of ruda's caches: ``RUDA_CACHE_DIR``, else the platform's user cache folder."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    import platformdirs

    return Path(platformdirs.user_cache_dir("ruda", appauthor=False))


def switched_on(variable: str) -> bool:
    """Whether the environment leaves the setting ``variable`` on (the default): ``0``,
    ``false``, ``off`` or ``no``, in any case, turn it off."""
    return os.environ.get(variable, "1").strip().lower() not in ("0", "false", "off", "no")


def write_json(path: Path, content: Any, **dumps: Any) -> None:
    """Replace the file ``path`` with ``content`` as JSON in one step, so that processes ending
    together leave one whole file; a folder that cannot be written leaves it as it was."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        part.write_text(json.dumps(content, **dumps))
        part.replace(path)


class _Verdicts:
    """Probe results by adapter key, read from and written back to the cache folder."""

    def __init__(self) -> None:
        self.path = cache_dir() / "wgpu-adapters.json"
        self.known: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(self.path.read_text())
            if isinstance(loaded, dict):
                self.known = loaded
        self.changed = False

    def get(self, adapter: Any) -> tuple[bool, str]:
        key = adapter_key(adapter)
        entry = self.known.get(key)
        if not (isinstance(entry, dict) and isinstance(entry.get("ok"), bool)):
            ok, reason = _probe_in_child(key)
            entry = self.known[key] = {"ok": ok, "reason": reason}
            self.changed = True
        return entry["ok"], str(entry.get("reason", ""))

    def opengl(self) -> list[Excluded] | None:
        """The OpenGL adapters left out at the last look at every API, when none of them was a
        device then (so OpenGL need not be loaded); None when one was, or before a first look."""
        entry = self.known.get(OPENGL_KEY)
        if not (isinstance(entry, dict) and entry.get("serves a device") is False):
            return None
        return [Excluded(str(d), str(r), "OpenGL") for d, r in entry.get("excluded", [])]

    def note_opengl(self, devices: list[Any], excluded: list[Excluded]) -> None:
        """Keep what OpenGL gave at a look at every API: a device, or only adapters left out."""
        entry = {
            "serves a device": any(a.info["backend_type"] == "OpenGL" for a in devices),
            "excluded": [[e.description, e.reason] for e in excluded if e.api == "OpenGL"],
        }
        if self.known.get(OPENGL_KEY) != entry:
            self.known[OPENGL_KEY] = entry
            self.changed = True

    def save(self) -> None:
        if self.changed:  # (a read-only home only costs a probe per process)
            write_json(self.path, self.known, indent=1, sort_keys=True)


def _probe_in_child(key: str) -> tuple[bool, str]:
    """Run :func:`probe` on the adapter ``key`` in a child process; a crash or hang is a verdict too."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ruda_wgpu._devices", key],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"a test kernel did not finish within {PROBE_TIMEOUT_S} s"
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        verdict = json.loads(lines[-1])
        return bool(verdict["ok"]), str(verdict["reason"])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return False, f"the probe process failed (exit {done.returncode}): {tail}"


_PROBE_KERNEL = """
@group(0) @binding(0) var<uniform> p: vec4<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<f32>;
var<workgroup> t: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let i = wid.x * 64u + lid;
  t[lid] = u32(a[i] * 2.0f) + p.x;
  workgroupBarrier();
  var s = 0u;
  for (var k = 0u; k < 64u; k = k + 1u) { s = s + t[k]; }
  o[i] = s + lid;
}
"""


def probe(adapter: Any) -> tuple[bool, str]:
    """Open ``adapter``, run a small kernel and check its result: (works, why not)."""
    import numpy as np
    import wgpu

    try:
        dev = adapter.request_device_sync()
        usage = wgpu.BufferUsage
        n = 128
        values = np.arange(n, dtype=np.float32)
        a = dev.create_buffer_with_data(data=values.tobytes(), usage=usage.STORAGE)
        o = dev.create_buffer(size=4 * n, usage=usage.STORAGE | usage.COPY_SRC)
        p = dev.create_buffer_with_data(data=np.array([5, 0, 0, 0], np.uint32).tobytes(), usage=usage.UNIFORM)
        pipe = dev.create_compute_pipeline(
            layout="auto",
            compute={"module": dev.create_shader_module(code=_PROBE_KERNEL), "entry_point": "main"},
        )
        group = dev.create_bind_group(
            layout=pipe.get_bind_group_layout(0),
            entries=[{"binding": k, "resource": {"buffer": b}} for k, b in enumerate((p, o, a))],
        )
        encoder = dev.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(pipe)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(n // 64)
        compute.end()
        dev.queue.submit([encoder.finish()])
        got = np.frombuffer(dev.queue.read_buffer(o), dtype=np.uint32)
    except Exception as err:  # any failure of the driver is the verdict
        return False, f"cannot run compute shaders: {str(err).strip().splitlines()[-1].strip()}"
    blocks = (values.reshape(-1, 64) * 2 + 5).astype(np.uint32).sum(axis=1)
    want = np.repeat(blocks, 64) + np.tile(np.arange(64, dtype=np.uint32), n // 64)
    if not np.array_equal(got, want):
        return False, "a test kernel returned wrong numbers"
    return True, ""


def _main(key: str) -> None:
    runtime_dir()
    import wgpu

    for adapter in wgpu.gpu.enumerate_adapters_sync():
        if adapter_key(adapter) == key:
            ok, reason = probe(adapter)
            print(json.dumps({"ok": ok, "reason": reason}))
            return
    print(json.dumps({"ok": False, "reason": "the adapter was not found again by the probe"}))


if __name__ == "__main__":
    _main(sys.argv[1])
