"""Compiled kernels persist between processes, in ruda's cache folder.

Compiling a kernel is the driver's work (our WGSL generation and wgpu's translation to SPIR-V
take microseconds to milliseconds; the driver's compile of a library-heavy kernel can take a
second). wgpu-py 0.32 exposes no pipeline-cache API, but the Vulkan drivers keep compiled
pipelines in disk caches of their own, keyed by the shader and the driver's version: Mesa's
(lavapipe, RADV, ANV, ...) in ``MESA_SHADER_CACHE_DIR``, NVIDIA's in
``__GL_SHADER_DISK_CACHE_PATH``. Before wgpu loads a driver, :func:`configure` points both into
``<ruda cache folder>/shaders`` (the platform's user cache folder, or ``RUDA_CACHE_DIR``), so
that ruda's compiled kernels live in one place that :func:`clear` empties; a variable the user
has set is left alone, as is a cache they have turned off.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ruda_wgpu import _preload
from ruda_wgpu._devices import cache_dir

#: driver variable -> the sub-folder of ours it points to
DRIVER_CACHES = {"MESA_SHADER_CACHE_DIR": "mesa", "__GL_SHADER_DISK_CACHE_PATH": "nvidia"}


def shader_cache_dir() -> Path:
    """The folder holding the drivers' caches of ruda's compiled kernels."""
    return cache_dir() / "shaders"


def configure() -> None:
    """Point the drivers' shader caches into :func:`shader_cache_dir` (where the user has not
    chosen a folder); call before wgpu loads a driver."""
    root = shader_cache_dir()
    for variable, sub in DRIVER_CACHES.items():
        if variable not in os.environ:
            path = root / sub
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError:  # a read-only home: the driver keeps its default
                continue
            os.environ[variable] = str(path)
    # NVIDIA trims its cache to a size limit; ruda's kernels are many but small
    os.environ.setdefault("__GL_SHADER_DISK_CACHE_SKIP_CLEANUP", "1")


def clear() -> int:
    """Delete the cached kernels and the programs' lists of them (see :mod:`ruda_wgpu._preload`);
    returns the bytes freed. The next process compiles afresh."""
    freed = 0
    for root in (shader_cache_dir(), _preload.folder()):
        freed += sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.exists() else 0
        shutil.rmtree(root, ignore_errors=True)
    return freed
