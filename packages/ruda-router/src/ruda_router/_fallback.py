"""The opt-in fallback of a router: ``Router(..., fallback=device)``.

Without it a router never moves data implicitly. With it, an operation that
the holding backend cannot do runs on the fallback device instead, and its
result comes back to the holding device. "Cannot do" means:

- the backend lacks the function, or raises ``NotImplementedError`` when called;
- a dtype of the call is not listed by the holding device's
  ``__array_namespace_info__().dtypes()``: that of an array input, or a dtype
  argument (``dtype=``, ``astype``'s dtype). This is checked before the call, which
  then goes to the fallback unrun, since a backend may compute an unlisted dtype
  wrongly instead of refusing it.

Inputs move with :meth:`Router.to_device` (the router's explicit migration), and
each operation name that falls back is logged once at WARNING on the
``ruda_router`` logger, so a fallback is never silent. A result of a dtype the
holding device lacks comes back only where that device accepts it, else the move
back raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ruda_router._array import Array
from ruda_router._devices import MultiDeviceBase
from ruda_router._dtypes import DType

if TYPE_CHECKING:
    from ruda_router._router import Router

LOG = logging.getLogger("ruda_router")


class Fallback:
    """Where a router runs what its holding backend cannot, and the record of what did."""

    def __init__(self, router: Router, device: Any) -> None:
        devices = router.__array_namespace_info__().devices()
        if type(device) not in router.MultiDevice.variants:
            raise TypeError(
                f"fallback must be a device of this router (a {router.MultiDevice.__module__}.MultiDevice "
                f"variant, e.g. {devices[-1]!r}), not {device!r}"
            )
        if device not in devices:
            raise ValueError(
                f"fallback={device!r} is not one of the devices of {router!r}: "
                f"pick one of {', '.join(map(repr, devices))}"
            )
        self.device: MultiDeviceBase = device
        self._router = router
        self._logged: set[str] = set()
        self._listed: dict[MultiDeviceBase, frozenset[DType]] = {}

    def reason(
        self,
        name: str,
        provided: bool,
        holding: MultiDeviceBase,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> str | None:
        """Why ``name`` cannot run on ``holding`` as called, or None when it can (or when
        ``holding`` is the fallback device itself: there is nowhere else to go)."""
        if holding == self.device:
            return None
        if not provided:
            return "its backend does not provide it"
        listed = self._listed.get(holding)
        if listed is None:
            info = self._router.__array_namespace_info__()
            listed = self._listed[holding] = frozenset(info.dtypes(device=holding).values())
        for value in (*args, *kwargs.values()):
            for item in value if type(value) is tuple or type(value) is list else (value,):
                dtype = item.dtype if type(item) is Array else item if type(item) is DType else None
                if dtype is not None and dtype not in listed:
                    return f"its dtypes() do not list {dtype.name}"
        return None

    def run(
        self,
        name: str,
        holding: MultiDeviceBase,
        reason: str,
        call: Callable[[tuple[Any, ...], dict[str, Any]], Any],
        takes_device: bool,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """``call(args, kwargs)``, which runs ``name`` on the fallback's backend, with the array
        inputs moved to the fallback device (and ``device=`` naming it where the call creates
        arrays), and its array results moved back to ``holding``."""
        if name not in self._logged:
            self._logged.add(name)
            LOG.warning(
                "%s runs on the fallback %r instead of %r (%s): its inputs move there and its "
                "results back (logged once per operation)",
                name,
                self.device,
                holding,
                reason,
            )
        moved = False

        def there(x: Array) -> Array:
            nonlocal moved
            moved = True
            return self._router.to_device(x, self.device)

        moved_args = tuple(_map_arrays(a, there) for a in args)
        moved_kwargs = {k: _map_arrays(v, there) for k, v in kwargs.items()}
        if "device" in kwargs or (takes_device and not moved):
            moved_kwargs["device"] = self.device
        result = call(moved_args, moved_kwargs)
        return _map_arrays(result, lambda x: self._router.to_device(x, holding))


def _map_arrays(value: Any, move: Callable[[Array], Array]) -> Any:
    """``value`` with every router array in it (also in tuples, lists, named results) moved."""
    if type(value) is Array:
        return move(value)
    if type(value) is tuple or type(value) is list:
        return type(value)([_map_arrays(v, move) for v in value])
    if isinstance(value, tuple):  # named results keep their type, as Router._wrap builds them
        items = [_map_arrays(v, move) for v in value]
        return type(value)._make(items) if hasattr(value, "_make") else type(value)(items)
    return value
