"""Backend namespaces that import their library on first use, so that importing the package (what
``ruda`` does to list backends) stays cheap and works without the library."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any


class LazyNamespace:
    """The names of package ``package``, copied from module ``implementation`` on first access.

    ``missing_library(err)`` is the error to raise when importing ``implementation`` fails with
    ``err`` for want of the library (one that names the fix), or None to let ``err`` through.
    """

    def __init__(
        self,
        package: str,
        implementation: str,
        names: Sequence[str],
        missing_library: Callable[[ImportError], ImportError | None],
    ) -> None:
        self._package = package
        self._implementation = implementation
        self._names = frozenset(names)
        self._missing_library = missing_library

    def attribute(self, name: str) -> Any:
        """What the package's module ``__getattr__`` returns for ``name``; the first call loads
        the implementation and puts every name into the package, so later lookups skip this."""
        if name not in self._names:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        try:
            namespace = importlib.import_module(self._implementation)
        except ImportError as err:
            fixed = self._missing_library(err)
            if fixed is None:
                raise
            raise fixed from err
        missing = sorted(name for name in self._names if not hasattr(namespace, name))
        if missing:
            # A programming error in the package, or the implementation is still being imported
            # and asks for a submodule (``from package import fft``): an AttributeError lets that
            # import load the submodule.
            raise AttributeError(f"{self._package} lacks {missing}")
        vars(sys.modules[self._package]).update({name: getattr(namespace, name) for name in self._names})
        return getattr(namespace, name)
