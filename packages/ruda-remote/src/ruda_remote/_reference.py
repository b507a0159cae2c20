"""``ruda.host``, the reference namespace: the client infers result shapes and dtypes and
answers dtype queries with its functions.

Bound here as a plain module for the type checker: ruda.host re-exports array-api-compat's
functions through an ``__all__`` it computes, which mypy cannot read, so it would see none
of them as exported. Those functions carry no types of their own (array-api-compat is
untyped), so looking them up on a ``ModuleType`` (as ``Any``) loses next to nothing.
"""

from __future__ import annotations

from types import ModuleType

import ruda.host

host: ModuleType = ruda.host
