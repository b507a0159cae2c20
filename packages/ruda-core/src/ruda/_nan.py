"""Reductions that leave NaN out (``nansum``, ``nanprod``, ``nanmean``, ``nanmin``, ``nanmax``).

They are not in the Array API standard, but array engines call them on the namespace they are
given (Cubed's ``nansum`` and ``nanmean``, Dask's ``nan*`` reductions). Written once against
any namespace: NaN elements are replaced by the reduction's identity with ``where``, so each
runs on the array's own device. A namespace binds them by name, in the order of :data:`NAMES`::

    nanmax, nanmean, nanmin, nanprod, nansum = NanReductions(sys.modules[__name__], Array).bound()

Results follow NumPy's: a slice of only NaN sums to 0, multiplies to 1, and has NaN as its
mean, minimum and maximum (NumPy warns there; these do not).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

Axis = int | tuple[int, ...] | None

#: the names a namespace binds
NAMES = ("nanmax", "nanmean", "nanmin", "nanprod", "nansum")


class NanReductions:
    """The NaN-skipping reductions of the namespace ``xp``, looked up there at call time;
    ``array_type`` is the type(s) of its arrays, which they take and nothing else."""

    def __init__(self, xp: ModuleType, array_type: type[Any] | tuple[type[Any], ...]) -> None:
        self._xp = xp
        self._array_type = array_type

    def bound(self) -> tuple[Any, ...]:
        """The reductions as bound methods, in the order of :data:`NAMES`."""
        return tuple(getattr(self, name) for name in NAMES)

    def _floating(self, x: Any, fn: str) -> bool:
        """Whether ``x`` is of a floating dtype; a TypeError naming ``fn`` when it is no array of
        the namespace (a list or a Python number would fail on ``x.dtype``, another library's
        array in the first function called on it, naming neither)."""
        if not isinstance(x, self._array_type):
            raise TypeError(f"{fn}() takes an array of {self._xp.__name__}, not {type(x).__name__}")
        return bool(self._xp.isdtype(x.dtype, ("real floating", "complex floating")))

    def _filled(self, x: Any, value: float) -> Any:
        xp = self._xp
        return xp.where(xp.isnan(x), xp.asarray(value, dtype=x.dtype, device=x.device), x)

    def _count(self, x: Any, axis: Axis, keepdims: bool) -> Any:
        """Elements that are not NaN, in x's real dtype."""
        xp = self._xp
        # a complex dtype's finfo names its real dtype (without computing real(x))
        real = xp.finfo(x.dtype).dtype if xp.isdtype(x.dtype, "complex floating") else x.dtype
        return xp.sum(xp.astype(~xp.isnan(x), real), axis=axis, keepdims=keepdims)

    def nansum(self, x: Any, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Any:
        """The sum of ``x`` along ``axis`` with NaN counted as zero."""
        y = self._filled(x, 0) if self._floating(x, "nansum") else x
        return self._xp.sum(y, axis=axis, dtype=dtype, keepdims=keepdims)

    def nanprod(self, x: Any, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Any:
        """The product of ``x`` along ``axis`` with NaN counted as one."""
        y = self._filled(x, 1) if self._floating(x, "nanprod") else x
        return self._xp.prod(y, axis=axis, dtype=dtype, keepdims=keepdims)

    def nanmean(self, x: Any, /, *, axis: Axis = None, keepdims: bool = False) -> Any:
        """The mean of the elements of ``x`` that are not NaN (NaN where there are none)."""
        xp = self._xp
        if not self._floating(x, "nanmean"):
            return xp.mean(x, axis=axis, keepdims=keepdims)
        total, count = self.nansum(x, axis=axis, keepdims=keepdims), self._count(x, axis, keepdims)
        none = count == 0
        mean = total / xp.where(none, xp.ones_like(count), count)  # no 0 / 0: NumPy would warn
        return xp.where(none, xp.asarray(float("nan"), dtype=mean.dtype, device=mean.device), mean)

    def _extreme(self, x: Any, axis: Axis, keepdims: bool, largest: bool) -> Any:
        xp = self._xp
        if not self._floating(x, "nanmax" if largest else "nanmin"):
            return (xp.max if largest else xp.min)(x, axis=axis, keepdims=keepdims)
        m = (xp.max if largest else xp.min)(
            self._filled(x, -float("inf") if largest else float("inf")), axis=axis, keepdims=keepdims
        )
        empty = self._count(x, axis, keepdims) == 0
        return xp.where(empty, xp.asarray(float("nan"), dtype=m.dtype, device=m.device), m)

    def nanmax(self, x: Any, /, *, axis: Axis = None, keepdims: bool = False) -> Any:
        """The largest element of ``x`` along ``axis`` that is not NaN (NaN where there is none)."""
        return self._extreme(x, axis, keepdims, largest=True)

    def nanmin(self, x: Any, /, *, axis: Axis = None, keepdims: bool = False) -> Any:
        """The smallest element of ``x`` along ``axis`` that is not NaN (NaN where there is none)."""
        return self._extreme(x, axis, keepdims, largest=False)
