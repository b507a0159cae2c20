"""A clear error for a namespace function handed what is not an array.

The namespaces that return another library's arrays (``ruda.host``, ``ruda_torch``) take many
functions from array-api-compat, and write others over them; these read an attribute of their
argument first (``x.ndim``, ``x.dtype``), so a list or None met them as "AttributeError: 'list'
object has no attribute 'ndim'", which names neither the function nor the problem.
:func:`naming_bad_arguments` wraps such a function: only when it raises an AttributeError does
the wrapper look for the argument that is no array (:func:`bad_argument`), and it then raises a
TypeError naming both. A call that succeeds costs one more Python frame. ruda-remote's client,
which works out a result's shape and dtype on stand-ins before it sends an operation, does the
same there.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import numpy as np

from ruda import spec
from ruda._operators import is_foreign_array, mixing_error

F = TypeVar("F", bound=Callable[..., Any])

#: what a namespace function takes besides arrays: Python scalars, axes, shapes
_PLAIN = (bool, int, float, complex, tuple)


def naming_bad_arguments(function: F, namespace: str, takes: Callable[[Any], bool], arrays: str) -> F:
    """``function`` of namespace ``namespace`` (its module name), raising a TypeError that names
    it and the argument it cannot take where it raised an AttributeError; ``takes(value)`` says
    whether a value is one of its library's arrays or dtypes (what the function reads attributes
    of), and ``arrays`` names those arrays in the message ("NumPy arrays")."""
    name = function.__name__

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except AttributeError as err:
            refuse(err, name, args, kwargs, namespace, takes, arrays)

    return call  # type: ignore[return-value]


def refuse(
    err: AttributeError,
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    namespace: str,
    takes: Callable[[Any], bool],
    arrays: str,
) -> NoReturn:
    """Raise :func:`bad_argument`'s TypeError for the call that raised ``err``, or ``err`` itself
    where every argument is of a kind the function takes (the error is then its own)."""
    refusal = bad_argument(name, args, kwargs, namespace, takes, arrays)
    if refusal is None:
        raise err
    raise refusal from err


def bad_argument(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    namespace: str,
    takes: Callable[[Any], bool],
    arrays: str,
) -> TypeError | None:
    """The TypeError for function ``name`` of ``namespace`` called with ``args`` and ``kwargs``,
    one of which it met as an AttributeError: it names the first positional argument that is
    neither taken (``takes``) nor a Python scalar or tuple, then a None among them, then the
    same among the keywords (a device's name is a string); None when every value is of a kind
    it takes."""
    for given in (args, tuple(kwargs.values())):
        # (a sequence holding arrays, as concat's, is looked into: one of its items is at fault)
        values = [i for v in given for i in (v if _holds_arrays(v, takes) else (v,))]
        odd = [v for v in values if v is not None and not takes(v) and not isinstance(v, _PLAIN)]
        if not odd and any(v is None for v in values):  # (None: a bound, an axis, ...)
            odd = [None]
        if odd:
            if is_foreign_array(odd[0]):
                return mixing_error(namespace, name, odd[0])
            return TypeError(f"{name}() takes {arrays}, not {type(odd[0]).__name__}")
    return None


def _holds_arrays(value: Any, takes: Callable[[Any], bool]) -> bool:
    """Whether ``value`` is a list or tuple with an array among its items."""
    return isinstance(value, list | tuple) and any(takes(v) for v in value)


def check_fill(value: Any, function: str, arrays: type) -> None:
    """:func:`ruda.spec.no_fill` for a fill ``value`` of ``full`` or ``full_like`` (``function``)
    that is neither a Python or NumPy scalar nor one of the library's ``arrays`` (which would
    otherwise meet it with an error of its own wording)."""
    if not isinstance(value, bool | int | float | complex | np.generic | arrays):
        raise spec.no_fill(function, value)
