"""Compiled kernels persist between processes in ruda's cache folder, and can be cleared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ruda.testing import parametrize_backends

pytestmark = parametrize_backends("wgpu")

SCRIPT = "import ruda_wgpu as xp; print(float(xp.sum(xp.exp(xp.ones((10,))))))"


def _run(env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True, capture_output=True)


def _clean_env(cache: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MESA_SHADER_CACHE_DIR", "__GL_SHADER_DISK_CACHE_PATH")
    }
    env["RUDA_CACHE_DIR"] = str(cache)
    return env


def test_kernels_are_cached_in_ruda_folder_and_cleared(xp, tmp_path):
    _run(_clean_env(tmp_path))
    files = [f for f in (tmp_path / "shaders").rglob("*") if f.is_file()]
    assert files, "the driver wrote no compiled kernel into ruda's cache folder"
    size = sum(f.stat().st_size for f in files)
    code = "import ruda_wgpu as xp; print(xp.clear_shader_cache())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_clean_env(tmp_path), check=True, capture_output=True, text=True
    )
    assert int(out.stdout) >= size > 0
    assert not (tmp_path / "shaders").exists()


def test_a_folder_the_user_chose_is_kept(xp, tmp_path):
    env = _clean_env(tmp_path / "ruda")
    env["MESA_SHADER_CACHE_DIR"] = str(tmp_path / "mine")
    env["__GL_SHADER_DISK_CACHE_PATH"] = str(tmp_path / "mine")
    _run(env)
    assert not [f for f in (tmp_path / "ruda" / "shaders").rglob("*") if f.is_file()]
