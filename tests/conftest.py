"""Shared test setup: a private runtime dir (the Vulkan loader warns without one; mkdtemp makes it
0700), and SciPy's array API mode, which SciPy reads once, when it is first imported."""

import os
import tempfile

if not os.environ.get("XDG_RUNTIME_DIR"):
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="ruda-xdg-")

os.environ.setdefault("SCIPY_ARRAY_API", "1")
