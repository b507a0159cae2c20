"""Functions of the ``linalg`` extension that ruda_wgpu does not compute yet: each raises a clear error.

They exist so that ``hasattr`` finds the whole 2025.12 surface and a call says
what is missing instead of an AttributeError; none falls back to NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from ruda import spec


def missing_names(defined: dict[str, Any], names: tuple[str, ...]) -> tuple[str, ...]:
    """The names of the standard in ``names`` that ``defined`` (a module's globals) lacks."""
    return tuple(n for n in names if n not in defined)


def not_implemented(name: str) -> Callable[..., NoReturn]:
    """A function named ``name`` that raises NotImplementedError saying so."""

    def missing(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(
            f"ruda_wgpu does not implement {name}() yet: the matrix decompositions and what needs "
            "them are not computed on the GPU yet; copy the data to another backend with "
            "ruda.to_device(x, 'cpu') if you need it now"
        )

    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = "Not implemented yet on ruda_wgpu: raises NotImplementedError."
    return missing


def fill(
    defined: dict[str, Any], names: tuple[str, ...] = spec.FUNCTIONS, prefix: str = ""
) -> tuple[str, ...]:
    """Define a raising stand-in in ``defined`` for every name of ``names`` it lacks; return them."""
    missing = missing_names(defined, names)
    for name in missing:
        defined[name] = not_implemented(prefix + name)
    return missing
