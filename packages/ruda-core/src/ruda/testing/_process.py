"""Switches in tests: a snippet run in a fresh interpreter (for what is decided at import:
environment switches, installed entry points), and a call run with a switch set another way."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


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


def switched(set_switch: Callable[[Any], Any], value: Any, call: Callable[[], T]) -> T:
    """``call()`` with a process-wide switch set to ``value`` by ``set_switch`` (which returns
    the previous setting, as the backends' ``set_enabled`` do), restored afterwards."""
    previous = set_switch(value)
    try:
        return call()
    finally:
        set_switch(previous)
