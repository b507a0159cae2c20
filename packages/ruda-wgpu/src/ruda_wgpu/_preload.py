"""The kernels a program used, compiled again in background threads when its next process opens
the device.

A fresh process pays for each kernel when it first uses it, even with the drivers' disk caches
filled (:mod:`ruda_wgpu._shader_cache`): wgpu translates the WGSL (0.2 ms for a small kernel,
10 for the radix sort's scatter) and the driver looks its pipeline up, or on lavapipe builds it
again (about 15 ms). One kernel after another on the thread that needs them, the 60 kernels of
``benchmarks/wgpu_startup.py``'s script took 90-120 ms on an H200 host and about 1 s on a
2-core lavapipe host. Kernels compile independently and wgpu-native releases the GIL while it
compiles, so threads compile them side by side: 35 ms with 4 threads on that H200 host, 0.56 s
with 2 on lavapipe.

So each process lists the kernels it compiled (their linked WGSL, in the order it first used
them) in ``<ruda cache folder>/preload``, one file per program (its main script, or the command
of ``python -c``) and adapter, written at exit when the list changed. When the next process of
the program opens that device, :class:`Preload` compiles the list in :func:`threads` daemon
threads, and :meth:`GpuDevice.pipeline` takes each kernel from there: compiled, or waited for
while a thread compiles it, or compiled on the spot if no thread has started it (or one
failed). A kernel the program no longer makes is compiled for nothing, once; the list then
loses it. A listed kernel is only compiled, never run: a pipeline is taken only for the very WGSL
the process has just generated. ``RUDA_WGPU_PRELOAD=0`` turns preloading off (the lists are still
written); ``clear_shader_cache()`` deletes them.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ruda_wgpu._devices import cache_dir, switched_on, write_json

#: the environment variable that turns preloading off (``0``)
PRELOAD_ENV = "RUDA_WGPU_PRELOAD"
#: kernels a list holds at most (the first ones a process used)
MAX_KERNELS = 256

#: compiles one kernel's linked WGSL into a pipeline
Compile = Callable[[str], Any]


def enabled() -> bool:
    """Whether a process compiles its program's listed kernels ahead (``RUDA_WGPU_PRELOAD``)."""
    return switched_on(PRELOAD_ENV)


def folder() -> Path:
    """Where the lists live (``clear_shader_cache()`` deletes it)."""
    return cache_dir() / "preload"


def program() -> str:
    """What identifies this process's program: its main script or module's path, the command of
    ``python -c``, or ``<interactive>``."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if isinstance(path, str):
        return os.path.abspath(path)
    argv = sys.orig_argv
    if "-c" in argv[:-1]:
        return "-c " + argv[argv.index("-c") + 1]
    return "<interactive>"


def list_path(adapter: str) -> Path:
    """The list of this program's kernels on the adapter described by ``adapter``."""
    key = hashlib.sha256(f"{program()}\0{adapter}".encode()).hexdigest()[:24]
    return folder() / f"{key}.json"


def threads() -> int:
    """Compiling threads: one per core, up to 4. On a 16-core H200 host 8 compiled the 60 kernels
    no sooner than 4, and each thread holds the GIL between wgpu's calls, which slows the thread
    that runs the program."""
    return max(1, min(4, os.cpu_count() or 1))


class Preload:
    """One device's compiles of the listed kernels, and the list of the kernels it used.

    ``compile`` turns a kernel's linked WGSL into a pipeline. The threads start at once and stop
    at exit after the kernel each is compiling; kernels no thread has started are left alone.
    """

    def __init__(self, adapter: str, compile: Compile) -> None:
        self.path = list_path(adapter)
        self._adapter = adapter
        self._compile = compile
        self._listed = _read(self.path)
        #: linked WGSL of the kernels this process compiled or took, in order of first use
        self.used: dict[str, None] = {}
        #: pipelines taken from the threads' compiles
        self.preloaded = 0
        self._futures: dict[str, Future[Any]] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        if enabled() and self._listed:
            self._futures = {code: Future() for code in self._listed}
            work = iter(list(self._futures.items()))
            lock = threading.Lock()
            for _ in range(min(threads(), len(self._listed))):
                t = threading.Thread(target=self._work, args=(work, lock), daemon=True)
                t.start()
                self._threads.append(t)
        atexit.register(self.close)

    def pipeline(self, code: str) -> Any:
        """The pipeline of ``code``: the one a thread compiled (waiting for it while a thread
        compiles it), else compiled now, which raises what compiling it raises."""
        future = self._futures.pop(code, None)
        if future is not None and not future.cancel() and future.exception() is None:
            self.preloaded += 1
            pipe = future.result()
        else:  # not listed, not started by a thread, or failed there
            pipe = self._compile(code)
        if len(self.used) < MAX_KERNELS:
            self.used[code] = None
        return pipe

    def close(self) -> None:
        """Stop the threads (each after its current kernel) and write the list if it changed."""
        self._stop.set()
        for t in self._threads:
            t.join()
        used = list(self.used)
        if used != self._listed:
            write_json(self.path, {"program": program(), "adapter": self._adapter, "kernels": used})
            self._listed = used

    def _work(self, work: Iterator[tuple[str, Future[Any]]], lock: threading.Lock) -> None:
        """One thread: compile the next kernel that nothing has taken, until none is left."""
        while not self._stop.is_set():
            with lock:
                item = next(work, None)
            if item is None:
                return
            code, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._compile(code))
            except Exception as error:  # pipeline() compiles it again, and raises then
                future.set_exception(error)


def _read(path: Path) -> list[str]:
    """A list's kernels; none when it is missing or unreadable."""
    try:
        kernels = json.loads(path.read_text())["kernels"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [k for k in kernels if isinstance(k, str)] if isinstance(kernels, list) else []
