"""The router's dtypes: one object per Array API dtype name, shared by every router.

Decision: the router owns its dtype objects (``ruda_router.float32`` is neither
NumPy's nor torch's) and translates them by name to the dtype of whichever
backend runs a call, and a result's dtype back by name. So ``x.dtype ==
xp.float32`` holds whichever backend holds ``x``, and code never sees two
spellings of one dtype. A backend that lacks a dtype (torch has no uint64
arithmetic, some WGPU devices have no float64) is reported when the dtype is
used there, by name.
"""

from __future__ import annotations

from ruda import spec


class DType:
    """An Array API dtype of a router, compared by identity (one object per name)."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("router dtypes are immutable")

    def __repr__(self) -> str:
        return f"ruda_router.{self.name}"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_by_name, (self.name,))


#: every dtype of the standard, by name
DTYPES: dict[str, DType] = {name: DType(name) for name in spec.DTYPES}


def _by_name(name: str) -> DType:
    return DTYPES[name]


# The standard's dtype kinds, for isdtype (a pure function of names: no backend needed).
KINDS: dict[str, frozenset[str]] = {kind: frozenset(names) for kind, names in spec.DTYPE_KINDS.items()}


def isdtype(dtype: DType, kind: str | DType | tuple[str | DType, ...]) -> bool:
    """Whether ``dtype`` is of ``kind``: a kind name, a dtype, or a tuple of either."""
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype takes a router dtype (e.g. xp.float32), not {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}: expected one of {', '.join(KINDS)}")
        return dtype.name in KINDS[kind]
    raise TypeError(f"kind must be a kind name, a dtype or a tuple of them, not {kind!r}")
