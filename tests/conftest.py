"""Shared test setup: SciPy's array API mode, which SciPy reads once, when it is first imported.
(ruda_wgpu gives the graphics stack its XDG_RUNTIME_DIR itself.)"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")
