"""The registry: discovery through entry points and each way a backend can be missing."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import textwrap

import pytest
import ruda
from ruda import _registry
from ruda.plugin import install_command

UNAVAILABLE_PLUGIN = textwrap.dedent(
    """
    from ruda.plugin import Availability, Backend

    class Missing(Backend):
        name = "gpux"
        module = "fake_gpux_namespace"
        device_kinds = ("gpux",)

        def probe(self):
            return Availability.unavailable("no GPUX driver found", fix="install the GPUX driver")

    PLUGIN = Missing()
    """
)


def test_host_is_listed_and_available() -> None:
    rows = {row.name: row for row in ruda.backends()}
    host = rows["host"]
    assert host.available and host.reason is None
    assert host.distribution == "ruda" and host.version == ruda.__version__
    assert [str(d) for d in host.devices] == ["cpu"]


def test_namespace_and_attribute_access_give_the_same_module() -> None:
    assert ruda.namespace("host") is ruda.host
    assert ruda.host.__array_api_version__ == "2025.12"


def test_known_but_not_installed_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_entry_points", lambda: {})
    with pytest.raises(ruda.BackendNotFoundError, match=re.escape(install_command("cuda"))):
        ruda.namespace("cuda")
    with pytest.raises(AttributeError, match="not installed"):
        ruda.cuda  # noqa: B018


def test_unknown_name_lists_installed_backends() -> None:
    with pytest.raises(ruda.BackendNotFoundError, match="unknown backend 'nope'.*host"):
        ruda.namespace("nope")


def test_broken_plugin_is_unavailable_with_its_error(install_plugin) -> None:  # type: ignore[no-untyped-def]
    install_plugin("broken", "fake_broken:PLUGIN", "fake_broken", "raise ImportError('libfoo.so.1 missing')")
    rows = {row.name: row for row in ruda.backends()}
    assert rows["broken"].available is False
    assert "libfoo.so.1 missing" in (rows["broken"].reason or "")
    assert rows["broken"].distribution == "fake-broken" and rows["broken"].version == "1.2.3"
    assert rows["host"].available, "a broken plugin must not affect the others"
    with pytest.raises(ruda.BackendUnavailableError, match="libfoo.so.1 missing"):
        ruda.namespace("broken")
    assert ruda.host.sum(ruda.host.ones(3)) == 3


def test_entry_point_that_is_not_a_backend(install_plugin) -> None:  # type: ignore[no-untyped-def]
    install_plugin("odd", "fake_odd:PLUGIN", "fake_odd", "PLUGIN = 42")
    rows = {row.name: row for row in ruda.backends()}
    assert not rows["odd"].available
    assert "not a ruda.plugin.Backend" in (rows["odd"].reason or "")


def test_plugin_reporting_unavailable(install_plugin) -> None:  # type: ignore[no-untyped-def]
    install_plugin("gpux", "fake_gpux:PLUGIN", "fake_gpux", UNAVAILABLE_PLUGIN)
    rows = {row.name: row for row in ruda.backends()}
    assert rows["gpux"].available is False
    assert rows["gpux"].reason == "no GPUX driver found"
    assert rows["gpux"].fix == "install the GPUX driver"
    with pytest.raises(ruda.BackendUnavailableError, match="no GPUX driver found.*install the GPUX driver"):
        ruda.namespace("gpux")
    with pytest.raises(ruda.BackendUnavailableError):
        ruda.gpux  # noqa: B018


def test_moving_to_a_device_of_an_unavailable_backend_says_why(install_plugin) -> None:  # type: ignore[no-untyped-def]
    # without CuPy, ruda.to_device(x, "cuda:0") had raised the bare ModuleNotFoundError of the
    # plugin's import of it
    native_device = "    def native_device(self, device):\n        import fake_gpux_absent_library\n\n"
    source = UNAVAILABLE_PLUGIN.replace("    def probe(self):", native_device + "    def probe(self):")
    install_plugin("gpux", "fake_gpux:PLUGIN", "fake_gpux", source)
    with pytest.raises(ruda.BackendUnavailableError, match="'gpux'.*no GPUX driver found.*install the GPUX"):
        ruda.to_device(ruda.host.ones(3), "gpux:0")


def test_probe_that_raises_is_reported_not_propagated(install_plugin) -> None:  # type: ignore[no-untyped-def]
    source = UNAVAILABLE_PLUGIN.replace(
        'return Availability.unavailable("no GPUX driver found", fix="install the GPUX driver")',
        'raise OSError("driver crashed")',
    )
    install_plugin("gpux", "fake_gpux:PLUGIN", "fake_gpux", source)
    rows = {row.name: row for row in ruda.backends()}
    assert not rows["gpux"].available and "driver crashed" in (rows["gpux"].reason or "")


def test_import_ruda_imports_no_gpu_library() -> None:
    code = (
        "import sys, ruda; ruda.installed(); "
        "bad = [m for m in ('cupy', 'torch', 'wgpu', 'cuda') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plugin_whose_library_is_missing_names_the_library_and_the_extra(install_plugin) -> None:  # type: ignore[no-untyped-def]
    install_plugin("cuda", "fake_cudaplugin:PLUGIN", "fake_cudaplugin", "import fake_cupy_that_is_absent")
    rows = {row.name: row for row in ruda.backends()}
    assert not rows["cuda"].available
    assert "cannot import 'fake_cupy_that_is_absent'" in (rows["cuda"].reason or "")
    assert rows["cuda"].fix == install_command("cuda")


def test_install_command_names_the_clone_or_the_index(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # installed from a clone (pip records the folder): the clone's root with the extras its
    # metapackage has (CUDA's), else the backend's folder (the root has no wgpu extra: its hint
    # had installed every backend, torch among them)
    for folder in ("ruda-core", "ruda-wgpu", "ruda-cuda"):
        (tmp_path / "packages" / folder).mkdir(parents=True)
    metapackage = '[project]\nname = "w"\n[project.optional-dependencies]\ncuda = []\n'
    (tmp_path / "pyproject.toml").write_text(metapackage)
    url = (tmp_path / "packages" / "ruda-core").as_uri()

    class FromFolder:
        def read_text(self, name: str) -> str | None:
            record = {"url": url, "dir_info": {"editable": True}}
            return json.dumps(record) if name == "direct_url.json" else None

    class FromIndex:
        def read_text(self, name: str) -> str | None:
            return None

    wgpu = tmp_path / "packages" / "ruda-wgpu"
    cases = (
        (FromFolder(), "wgpu", f'pip install "{wgpu}"'),
        (FromFolder(), "cuda", f'pip install "{tmp_path}[cuda]"'),
        (FromIndex(), "wgpu", 'pip install "ruda[wgpu]"'),
    )
    for dist, extra, want in cases:
        monkeypatch.setattr(importlib.metadata, "distribution", lambda name, d=dist: d)
        install_command.cache_clear()
        assert install_command(extra) == want
    install_command.cache_clear()
