"""Running a snippet in a fresh interpreter: for what is decided at import (environment switches,
installed entry points)."""

from __future__ import annotations

import os
import subprocess
import sys


def python_output(code: str, **environment: str | None) -> str:
    """The standard output of ``python -c code`` in a fresh process whose environment is this
    one's with ``environment`` applied (a value of None removes the variable), stripped."""
    env = dict(os.environ)
    for name, value in environment.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()
