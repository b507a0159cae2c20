"""The Vulkan driver starts in a thread while Python imports ruda_wgpu and wgpu-py.

A Vulkan driver does most of its start-up once per process, in the first ``vkCreateInstance``
and ``vkEnumeratePhysicalDevices``: NVIDIA's takes 80-100 ms there on the H200's host, about a
fifth of a warm ruda start. wgpu-native makes its instance only after wgpu-py's modules are
imported, which is Python work of 40-90 ms. So :func:`start`, called first thing in ruda_wgpu's
import (``_devices.start_driver``), makes a bare Vulkan instance of its own in a thread, through
the Vulkan loader and ctypes (which lets go of the GIL during the calls), and the imports of the
rest of ruda_wgpu and of wgpu-py go on meanwhile; wgpu's own instance then finds the driver
started and takes a few milliseconds. :func:`finish` waits for the thread and destroys that
instance once wgpu has its own, so the driver stays loaded and nothing is left behind. Started
when wgpu-py was imported, the driver still kept finding the adapters waiting 42 ms (median of
12 warm starts on an H200 host); started with ruda_wgpu's import, 8 ms, the imports no slower.

The bare instance enables no layer or extension; it does what wgpu's enumeration does anyway,
in the same process, with the same environment (the drivers' cache folders are set first).
A process that ends without having opened a device (one that only imports ruda_wgpu, or clears
its caches) waits for the thread first, and leaves the instance to the process's end
(:func:`_at_exit`): destroying it there crashed NVIDIA's driver as the process ended (SIGSEGV in
9 of 840 processes that imported ruda_wgpu, cleared its shader cache and ended, on an H200 host;
none of 840, and none of 560 that only imported it, once the instance was kept). Without the
wait, ``python3 benchmarks/wgpu_startup.py --markdown``, which
imports ruda_wgpu and exits at once, now and then never ended on lavapipe: the C library's exit
waited (in ``_dl_fini``) for the dynamic loader's lock, held by the thread loading the driver,
and the thread spun at 100% CPU in LLVM's start-up code (``llvm::PassRegistry::registerPass``,
under ``dlopen``), as exit handlers had run beneath it.

Only Linux's loader is used (``libvulkan.so.1``); where it is missing, or fails, nothing is
started and wgpu starts the driver itself as before. By hand with ctypes rather than through a
Vulkan binding package: it is three calls, and the binding on PyPI (``vulkan``) parses its C
header with cffi when imported, the kind of cost this module exists to hide.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import sys
import threading

_log = logging.getLogger(__name__)
#: seconds :func:`finish` waits for the driver before leaving the thread to end on its own
WAIT_S = 10.0
_VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO = 1
_VK_SUCCESS = 0


class _InstanceCreateInfo(ctypes.Structure):
    """``VkInstanceCreateInfo``: no application info, layers or extensions."""

    _fields_ = [
        ("sType", ctypes.c_int),
        ("pNext", ctypes.c_void_p),
        ("flags", ctypes.c_uint32),
        ("pApplicationInfo", ctypes.c_void_p),
        ("enabledLayerCount", ctypes.c_uint32),
        ("ppEnabledLayerNames", ctypes.c_void_p),
        ("enabledExtensionCount", ctypes.c_uint32),
        ("ppEnabledExtensionNames", ctypes.c_void_p),
    ]


class _Warmup:
    """One process's bare instance: made in a thread, destroyed by :func:`finish`."""

    def __init__(self, loader: ctypes.CDLL) -> None:
        self.loader = loader
        self.instance = ctypes.c_void_p()
        self.devices = 0
        self.lock = threading.Lock()
        self.finished = False
        #: whether the instance is left to the process's end (see :func:`_at_exit`)
        self.kept = False
        self.thread = threading.Thread(target=self.run, name="ruda-vulkan-warmup", daemon=True)

    def run(self) -> None:
        info = _InstanceCreateInfo(_VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, None, 0, None, 0, None, 0, None)
        try:
            made = self.loader.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(self.instance))
            if made != _VK_SUCCESS:
                self.instance = ctypes.c_void_p()
                return
            count = ctypes.c_uint32()
            self.loader.vkEnumeratePhysicalDevices(self.instance, ctypes.byref(count), None)
            self.devices = count.value
        except Exception as err:  # only a head start: wgpu starts the driver itself without it
            _log.debug("Vulkan warm-up failed (%s: %s)", type(err).__name__, err)
        finally:
            with self.lock:
                if self.finished and not self.kept:  # finish() stopped waiting: the thread cleans up
                    self.destroy()

    def destroy(self) -> None:
        if self.instance:
            self.loader.vkDestroyInstance(self.instance, None)
            self.instance = ctypes.c_void_p()


_current: _Warmup | None = None
_starting = threading.Lock()


def start() -> bool:
    """Start the Vulkan driver in a thread (once a process); False where there is no Vulkan
    loader to start it with."""
    with _starting:
        return _start()


def _start() -> bool:
    global _current
    if _current is not None or not sys.platform.startswith("linux"):
        return False
    try:
        loader = ctypes.CDLL("libvulkan.so.1")
        loader.vkCreateInstance.restype = ctypes.c_int
        loader.vkCreateInstance.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        loader.vkEnumeratePhysicalDevices.restype = ctypes.c_int
        loader.vkEnumeratePhysicalDevices.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        loader.vkDestroyInstance.restype = None
        loader.vkDestroyInstance.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    except (OSError, AttributeError):  # no Vulkan loader: wgpu uses another API, or none
        return False
    _current = _Warmup(loader)
    _current.thread.start()
    atexit.register(_at_exit)  # (does nothing once wgpu's instance has called finish)
    return True


def finish(keep: bool = False) -> int | None:
    """Wait for the thread (at most :data:`WAIT_S`) and destroy its instance (unless ``keep``);
    call once wgpu has made its own. Returns the physical devices the driver listed, None when
    none was started or it has not answered yet (the thread then destroys its instance when it
    ends, unless ``keep``)."""
    warmup = _current
    if warmup is None or warmup.finished:
        return None
    warmup.thread.join(WAIT_S)
    with warmup.lock:
        warmup.finished, warmup.kept = True, keep
        if warmup.thread.is_alive():
            return None
        if not keep:
            warmup.destroy()
    return warmup.devices


def _at_exit() -> None:
    """At the end of a process that opened no device: the thread out of the driver, its
    instance kept (see the module's notes)."""
    finish(keep=True)
