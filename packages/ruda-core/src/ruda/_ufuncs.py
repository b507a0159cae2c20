"""NumPy's ufuncs called on ruda's own arrays, run by the array's namespace where it computes.

``np.abs(x)``, ``np.isfinite(x)`` (which matplotlib calls), ``np.float32(2) * x``, ``np.matmul``
and ``np.vecdot`` become the namespace's function of the same name (NumPy 2 has the standard's
names too: ``np.asin is np.arcsin``), as CuPy's arrays do; so does the ``reduce`` that
``np.sum``, ``np.prod``, ``np.max``, ``np.min``, ``np.all`` and ``np.any`` call. Anything else
raises TypeError rather than copy to the host (``np.asarray(x)`` does that, explicitly): other
ufunc methods (``accumulate``, ``at``), keywords the namespace has not (``out=``, ``where=``),
NumPy arrays among the operands (as in operators: no silent transfer), and ufuncs that are not
the standard's functions (``np.cbrt``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ruda._array import python_scalar
from ruda._operators import unsupported

#: the ufuncs whose ``reduce`` NumPy's reductions call, with the namespace's function for it
_REDUCTIONS = {
    "add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
    "logical_or": "any",
}  # fmt: skip


@functools.cache
def _ufunc_names() -> dict[np.ufunc, str]:
    """NumPy's ufuncs that are the standard's elementwise functions, ``matmul`` and ``vecdot``,
    each with its name in the standard."""
    from ruda.spec import ELEMENTWISE_FUNCTIONS

    found = ((getattr(np, name, None), name) for name in (*ELEMENTWISE_FUNCTIONS, "matmul", "vecdot"))
    return {ufunc: name for ufunc, name in found if isinstance(ufunc, np.ufunc)}


def _reduction(namespace: Any, ufunc: np.ufunc, x: Any, kwargs: dict[str, Any]) -> Any:
    """``ufunc.reduce(x, **kwargs)`` by the namespace's reduction, or None where it has none:
    ``axis`` (the first, as NumPy's, when not given), ``keepdims`` and, for sums and products,
    ``dtype`` are taken; ``out``, ``initial`` and ``where`` are not."""
    name = _REDUCTIONS.get(ufunc.__name__)
    options = dict(kwargs)
    axis = options.pop("axis", 0)
    keepdims = options.pop("keepdims", False)
    dtype = options.pop("dtype", None)
    if name in ("all", "any") and dtype in (bool, np.bool_):
        dtype = None  # (np.all and np.any pass it)
    if name is None or options or (dtype is not None and name not in ("sum", "prod")):
        return None
    extra = {} if dtype is None else {"dtype": dtype}
    return getattr(namespace, name)(x, axis=axis, keepdims=keepdims, **extra)


class NumpyUfuncs:
    """``__array_ufunc__`` for an array type whose ``__array_namespace__()`` computes its arrays
    (see the module docstring). Operands are arrays of this type and Python or NumPy scalars; an
    array of another ruda type gives ``NotImplemented``, so that NumPy asks that type."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = _ufunc_names().get(ufunc)
        kind = type(self)
        operands = []
        for value in inputs:
            if type(value) is not kind:
                if type(value) is np.ndarray and value.ndim == 0:
                    # (NumPy hands a scalar on the left of a comparison, np.float32(1.5) < x, as
                    # a 0-d array: taken as the scalar it holds, as on the right)
                    value = value[()]
                value = python_scalar(value)
                if not isinstance(value, bool | int | float | complex):
                    return unsupported(self, name or ufunc.__name__, value)
            operands.append(value)
        namespace = self.__array_namespace__()  # type: ignore[attr-defined]
        if method == "reduce" and len(operands) == 1:
            reduced = _reduction(namespace, ufunc, operands[0], kwargs)
            if reduced is not None:
                return reduced
        if method != "__call__" or name is None or kwargs:
            what = f"numpy.{ufunc.__name__}" + (f".{method}" if method != "__call__" else "")
            refused = list(kwargs)
            if method == "reduce" and ufunc.__name__ in _REDUCTIONS:  # (only what it cannot take)
                refused = [k for k in kwargs if k not in ("axis", "keepdims", "dtype")] or refused
            extra = f" with {', '.join(f'{k}=' for k in refused)}" if refused else ""
            why = ""
            if method == "reduce" and ufunc.__name__ not in _REDUCTIONS:
                extra, why = "", f" (the namespace has no reduction of {ufunc.__name__})"
            package = kind.__module__.partition(".")[0]
            raise TypeError(
                f"{what}(){extra} does not run on {package} arrays{why}: use the namespace's "
                "functions, or np.asarray(x) for a host copy"
            )
        return getattr(namespace, name)(*operands)
