"""The official array-api-tests suite on every namespace that runs without a GPU, each with its
skips file: what the READMEs' conformance figures claim, checked on every test run.

The suite is not on PyPI; ``../shared/tools/run-array-api-tests`` beside the repository finds
its checkout (``RUDA_ARRAY_API_TESTS`` names another runner). Without it these tests skip and say
so. ``RUDA_SUITE_EXAMPLES`` sets hypothesis's examples per test (default 100; the remote
namespace, one round trip per operation, runs half as many).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(os.environ.get("RUDA_ARRAY_API_TESTS", ROOT.parent / "shared/tools/run-array-api-tests"))
SKIPS = Path(__file__).resolve().parent
EXAMPLES = int(os.environ.get("RUDA_SUITE_EXAMPLES", "100"))
#: torch stores uint16/32/64 but has no kernels for most operations (see torch-skips.txt)
TORCH_DTYPES = {"ARRAY_API_TESTS_SKIP_DTYPES": "uint16,uint32,uint64"}
ROUTER = "exec('import ruda, ruda_router; xp = ruda_router.Router((ruda.torch, ruda.host))')"

#: id: (module for the suite, skips file, extra environment, examples, deadline on)
NAMESPACES = {
    "host": ("ruda.host", "host-skips.txt", {}, EXAMPLES, True),
    "torch": ("ruda_torch", "torch-skips.txt", TORCH_DTYPES, EXAMPLES, False),
    "wgpu": ("ruda_wgpu", "wgpu-skips.txt", {}, EXAMPLES, False),
    "router": (ROUTER, "router-skips.txt", TORCH_DTYPES, EXAMPLES, False),
    "remote": ("ruda_remote", "remote-skips.txt", {}, max(EXAMPLES // 2, 1), False),
}

pytestmark = pytest.mark.skipif(
    not RUNNER.exists(), reason=f"the official suite's runner is not at {RUNNER} (set RUDA_ARRAY_API_TESTS)"
)


@pytest.fixture(scope="module")
def remote_url() -> Iterator[str]:
    """A ``ruda serve --backend host`` on a free loopback port, in its own process."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ruda_remote", "serve", "--backend", "host", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            found = re.search(r"ws://127\.0\.0\.1:\d+", line)
            if found:
                yield found.group(0)
                break
        else:
            raise RuntimeError("ruda serve exited before it was listening")
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.parametrize("name", list(NAMESPACES))
def test_official_suite_passes(name: str, request: pytest.FixtureRequest) -> None:
    module, skips, extra, examples, deadline = NAMESPACES[name]
    pytest.importorskip(module if not module.startswith("exec") else "ruda_router")
    if name in ("torch", "router"):
        pytest.importorskip("ruda_torch")
    env = {**os.environ, **extra, "AAT_WORKERS": os.environ.get("AAT_WORKERS", "2")}
    if name == "remote":
        env["RUDA_REMOTE_URL"] = request.getfixturevalue("remote_url")
    args = [str(RUNNER), module, str(examples), "--", f"--skips-file={SKIPS / skips}"]
    if not deadline:  # first calls compile kernels or cross a process: timing is not checked here
        args.append("--disable-deadline")
    done = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    print(summary)
    counts = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped$", summary)
    assert done.returncode == 0 and counts and counts.group(2) == "0", (
        f"the official suite on {name}: {summary}\n{done.stdout[-6000:]}"
    )
