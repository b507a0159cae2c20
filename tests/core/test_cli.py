"""The ``ruda`` command line: info and demo, human and JSON output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from ruda import cli


def test_info_json_lists_host_available(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    host = next(b for b in report["backends"] if b["name"] == "host")
    assert host["available"] is True and host["devices"] == ["cpu"]


def test_info_table_names_backends_and_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    host = next(line for line in out.splitlines() if line.startswith("host "))
    assert host.split()[1] == "available", host  # ("unavailable" contains "available")


def test_info_shows_the_reason_and_fix_of_an_unavailable_backend(
    install_plugin,
    capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    install_plugin("gpux", "fake_gpux_cli:PLUGIN", "fake_gpux_cli", "import fake_absent_gpu_library")
    assert cli.main(["info", "--json"]) == 0
    row = next(b for b in json.loads(capsys.readouterr().out)["backends"] if b["name"] == "gpux")
    assert not row["available"] and "fake_absent_gpu_library" in row["reason"] and row["fix"]


def test_demo_json_reports_host_matching_numpy(capsys: pytest.CaptureFixture[str]) -> None:
    cli.main(["demo", "--json"])
    results = {r["backend"]: r for r in json.loads(capsys.readouterr().out)}
    assert results["host"]["ok"] is True and results["host"]["max_error"] < 1e-3


def test_python_dash_m_ruda_runs() -> None:
    command = [sys.executable, "-m", "ruda", "--version"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert done.stdout.startswith("ruda ")


def test_unknown_command_fails_with_usage() -> None:
    done = subprocess.run([sys.executable, "-m", "ruda", "frobnicate"], capture_output=True, text=True)
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_info_at_80_columns_prints_every_fix_whole(
    install_plugin,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    install_plugin("gpux", "fake_gpux_cli:PLUGIN", "fake_gpux_cli", "import fake_absent_gpu_library")
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "┃" not in out  # blocks, not a table squeezed into 80 columns
    block = out[out.index("gpux") :]
    assert "unavailable" in block.splitlines()[0]
    row = next(b for b in _json_rows(capsys) if b["name"] == "gpux")
    assert f"fix: {row['fix']}" in " ".join(block.split())  # the fix in full, not cut


def _json_rows(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    cli.main(["info", "--json"])
    return json.loads(capsys.readouterr().out)["backends"]


def test_bare_ruda_prints_help() -> None:
    done = subprocess.run([sys.executable, "-m", "ruda"], capture_output=True, text=True)
    assert done.returncode == 0 and "usage: ruda" in done.stdout and "info" in done.stdout
