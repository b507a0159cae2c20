"""Lazy, fused elementwise execution for ruda_cuda (the seed's ``cuda-fusion``).

With fusion on, an elementwise function of the namespace (and an operator of a pending array)
does not launch a kernel: it returns a :class:`LazyArray` that records the call. Reading the
result (``__array__``, ``__float__``, ``to_device``, DLPack, printing, indexing), passing it to
any other ruda_cuda function, or handing it to CuPy (``__cuda_array_interface__``) computes it:
the pending chain of calls becomes one generated kernel (:mod:`ruda_cuda._fused_kernels`),
cached by its structure and dtypes, and the result is a :class:`~ruda_cuda.Array`, a CuPy
array, again. A chain of one call runs the unfused function itself. Fused results equal the
unfused ones bit for bit.

What is fused: the functions that are one CuPy ufunc call (arithmetic, comparisons, bitwise
and logical operations, powers, the exponential, logarithmic, trigonometric and hyperbolic
functions, and the ones ruda_cuda patches only for complex numbers, on real input). Every
other function computes its inputs first and runs as before.

The operators of a computed array (``ruda_cuda.Array``) record too, so ``x * y + 1`` is one
chain; inside ruda_cuda's own functions fusion pauses (:func:`realizing`), so the CuPy code they
call computes as CuPy does. So do the operators called from the libraries that take a
ruda_cuda array as a CuPy array (:func:`records_for_caller`: SciPy and scikit-learn through
array-api-compat's CuPy namespace, CuPy itself): CuPy's functions there take only CuPy arrays.

Before ruda_cuda writes into an array (``x[i] = v``, ``x += 1``), pending results that read its
memory are computed; code that writes into one by other means (CuPy's ``out=``, a raw kernel)
while results that read it are pending must compute them first (``ruda_cuda.asarray(pending)``).

Fusion is off unless ``RUDA_CUDA_FUSION=1`` (or the ``cuda-fusion`` extra's marker package is
installed; ``RUDA_CUDA_FUSION=0`` then turns it off); :func:`set_enabled` switches it in a
process.
"""

from __future__ import annotations

import importlib.metadata
import math
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import cupy
import numpy as np
from cupy._core import _scalar  # numpy_dtype_from_pyscalar: the dtype CuPy gives a Python scalar
from ruda._arguments import refuse
from ruda._operators import ArrayOperators, unsupported

# _array imports this module too: each reads the other's names only when called
from ruda_cuda import _array, _fused_kernels
from ruda_cuda._devices import on_device, on_inputs_device
from ruda_cuda._kernels import STREAM_MIN_SIZE, VECTOR_DTYPES, stream_blocks

#: the environment variable that turns fusion on (``1``) or off (``0``)
FUSION_ENV = "RUDA_CUDA_FUSION"
#: entry-point group whose ``fusion`` entry (installed by the ``cuda-fusion`` extra) makes fusion
#: the default
DEFAULTS_GROUP = "ruda_cuda.defaults"
#: steps one fused kernel holds at most; a longer chain is cut, its first part computed
MAX_STEPS = 32
#: array operands one fused kernel reads at most
MAX_LEAVES = 16

_PYTHON_SCALARS = (bool, int, float, complex)
#: scalars a chain takes as kernel parameters (NumPy's keep their dtype, Python's are weak)
_SCALARS = (*_PYTHON_SCALARS, np.generic)


def _default() -> bool:
    value = os.environ.get(FUSION_ENV)
    if value is not None:
        return value.strip().lower() not in ("", "0", "false", "off", "no")
    return any(e.name == "fusion" for e in importlib.metadata.entry_points(group=DEFAULTS_GROUP))


_enabled = _default()


class _Paused(threading.local):
    """Per thread: how many ruda_cuda functions are running (fusion waits for none inside them,
    so the CuPy code they call sees CuPy's eager arrays)."""

    depth = 0


_paused = _Paused()


def enabled() -> bool:
    """Whether elementwise functions and operators wait to be fused here and now."""
    return _enabled and not _paused.depth


#: top-level packages whose code takes a ruda_cuda array as a CuPy array and passes what its
#: operators return to CuPy's functions, which take only CuPy arrays
CUPY_CALLERS = frozenset({"cupy", "cupyx", "scipy", "sklearn", "array_api_compat", "array_api_extra"})


def records_for_caller(depth: int = 2) -> bool:
    """Whether an operator of a computed array records here: fusion on, and the operator's
    caller (``depth`` frames up from this function's caller) outside :data:`CUPY_CALLERS`."""
    if not _enabled or _paused.depth:
        return False
    module = sys._getframe(depth).f_globals.get("__name__", "")
    return module.partition(".")[0] not in CUPY_CALLERS


def set_enabled(on: bool) -> bool:
    """Turn fusion on or off in this process (pending results stay pending until read);
    returns the previous setting."""
    global _enabled
    previous, _enabled = _enabled, bool(on)
    return previous


def describe() -> str:
    """Which setting is in effect and why, for ``ruda info``."""
    value = os.environ.get(FUSION_ENV)
    state = "on" if _enabled else "off"
    if value is not None:
        return f"{state} ({FUSION_ENV}={value})"
    if _enabled:
        return f"on (the cuda-fusion extra is installed; {FUSION_ENV}=0 turns it off)"
    return f"off ({FUSION_ENV}=1 turns it on)"


class Node:
    """One pending ufunc call. ``args`` are nodes, CuPy arrays and Python scalars; once
    computed, ``value`` holds the result and ``args`` is emptied, so inputs and intermediates
    are freed as soon as nothing else needs them."""

    __slots__ = ("args", "device", "dtype", "eager", "leaves", "op", "shape", "steps", "ufunc", "value")

    def __init__(
        self,
        ufunc: Any,
        op: Any,
        args: tuple[Any, ...],
        eager: Callable[..., _array.Array],
        shape: tuple[int, ...],
        device: Any,
    ) -> None:
        self.ufunc, self.op, self.args, self.eager = ufunc, op, args, eager
        self.shape, self.device = shape, device
        self.dtype: np.dtype[Any] = np.dtype(op.out_types[0])
        self.value: _array.Array | None = None
        # upper bounds (a node shared by two inputs counts twice): what decides a cut
        steps, leaves = 1, 0
        for a in args:
            if type(a) is Node:
                steps += a.steps
                leaves += a.leaves
            elif isinstance(a, cupy.ndarray):
                leaves += 1
        self.steps: int = steps
        self.leaves: int = leaves

    def compute(self) -> _array.Array:
        """The result, computed now if it is not yet."""
        if self.value is None:
            self.value = _run(self)
            self.args = ()
        return self.value

    def reads(self, memory: Any) -> bool:
        """Whether computing this node reads the allocation ``memory``: an array operand's, or
        the result of an operand node computed since (``y = x + 0`` pending, then ``x``
        computed by a read and written in place: ``y`` had then read the written values)."""
        for a in self.args:
            if type(a) is Node:
                if a.value is None and a.reads(memory):
                    return True
                if a.value is not None and a.value.data.mem is memory:
                    return True
            elif isinstance(a, cupy.ndarray) and a.data.mem is memory:
                return True
        return False


#: weak references to the pending results, checked before ruda_cuda writes into an array; a
#: list (a WeakValueDictionary costs a microsecond and more per result, a third of recording),
#: pruned of dead and computed results by every check, and when it grows past _prune_at
_pending: list[weakref.ref[LazyArray]] = []
_prune_at = 1024


def _live_pending() -> list[weakref.ref[LazyArray]]:
    """The references in :data:`_pending` to results still pending."""
    live = []
    for ref in _pending:
        lazy = ref()
        if lazy is not None and lazy._node.value is None:
            live.append(ref)
    return live


def _register(lazy: LazyArray) -> None:
    global _prune_at
    _pending.append(weakref.ref(lazy))
    if len(_pending) > _prune_at:
        _pending[:] = _live_pending()
        _prune_at = max(1024, 2 * len(_pending))


#: a ufunc's loop by the ufunc and what decides it for each operand: its dtype, or a Python
#: scalar's type (an int at or above 2**63 is "big int": uint64 to CuPy)
_LOOPS: dict[tuple[Any, ...], Any] = {}


def _choose_loop(ufunc: Any, operands: list[Any]) -> Any:
    """The ufunc's loop for these operands, chosen as CuPy's eager call chooses it (Python
    scalars are weak unless their kind is above every array's), or None."""
    in_types: list[np.dtype[Any]] = []
    weaks: list[Any] = []  # the Python type of a weak scalar, else False
    for x in operands:
        if isinstance(x, (Node, cupy.ndarray, np.generic)):
            in_types.append(x.dtype)
            weaks.append(False)
        else:
            dtype, weak = _scalar.numpy_dtype_from_pyscalar(x)
            in_types.append(dtype)
            weaks.append(weak)
    array_kind = max((_kind(t.type) for t, w in zip(in_types, weaks, strict=True) if not w), default=-1)
    scalar_kind = max((_kind(w) for w in weaks if w), default=-1)
    use_weak = array_kind >= 0 and scalar_kind >= 0 and array_kind >= scalar_kind
    op = ufunc._ops._guess_routine_from_in_types(tuple(in_types), tuple(weaks) if use_weak else None)
    if op is None or op.error_func is not None or op._resolution_func is not None or op.nout != 1:
        return None
    return op


def _kind(t: type) -> int:
    """CuPy's kind score of a scalar type (bool 0, integers 1, inexact 2; Python's bool is an int)."""
    if issubclass(t, np.bool_):
        return 0
    if issubclass(t, (np.integer, int)):
        return 1
    return 2


def call(ufunc: Any, args: tuple[Any, ...], eager: Callable[..., _array.Array]) -> Any:
    """``ufunc(*args)``: pending where :func:`record` takes it, else ``eager`` (the unfused
    function) on the arguments, computed."""
    pending = record(ufunc, args, eager)
    return pending if pending is not None else on_inputs_device(eager, *map(realized, args))


def record(ufunc: Any, args: tuple[Any, ...], eager: Callable[..., _array.Array]) -> LazyArray | None:
    """A pending result for ``ufunc(*args)``, or None when fusion is off here or the call cannot
    be fused (then the caller runs ``eager``, which also reports bad input as unfused).

    One pass over the arguments (this runs for every elementwise call with fusion on)."""
    if not _enabled or _paused.depth or not isinstance(ufunc, cupy.ufunc):  # cupy.real, ... are functions
        return None
    operands: list[Any] = []
    key: list[Any] = [ufunc]  # what decides the loop (see _LOOPS)
    arrays: list[Any] = []
    python_ints = False
    for a in args:
        kind = type(a)
        if kind is LazyArray:
            node = a._node
            a = node if node.value is None else node.value
        elif kind in _PYTHON_SCALARS:
            operands.append(a)
            python_ints = python_ints or kind is int
            key.append("big int" if kind is int and a >= 1 << 63 else kind)
            continue
        elif not isinstance(a, (cupy.ndarray, np.generic)):
            return None
        operands.append(a)
        key.append(a.dtype)
        if not isinstance(a, np.generic):
            arrays.append(a)
    if not arrays:
        return None
    first = arrays[0]
    shape = first.shape
    if len(arrays) > 1:
        device_id = _device_id(first)
        if any(_device_id(a) != device_id for a in arrays):
            return None
        if any(a.shape != shape for a in arrays):
            try:
                shape = tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
            except ValueError:
                return None
    loop_key = tuple(key)
    op = _LOOPS.get(loop_key, _LOOPS)
    if op is _LOOPS:
        op = _LOOPS[loop_key] = _choose_loop(ufunc, operands)
    if op is None:
        return None
    if python_ints:
        try:
            for x, in_type in zip(operands, op.in_types, strict=True):
                if type(x) is int:
                    np.array(x, dtype=in_type)  # out of range raises, as CuPy's conversion does
        except (ValueError, OverflowError):
            return None
    device = first.device
    node = Node(ufunc, op, tuple(operands), eager, shape, device)
    if node.steps > MAX_STEPS or node.leaves > MAX_LEAVES:
        node = Node(
            ufunc, op, tuple(o.compute() if type(o) is Node else o for o in operands), eager, shape, device
        )
    return LazyArray(node)


def _device_id(a: Any) -> int:
    """The GPU of a node or CuPy array (a CuPy array's ``device`` makes a new object each time)."""
    return int(a.device.id) if type(a) is Node else int(a.data.device_id)


#: ``x ** y`` that CuPy's operator (as NumPy's) computes with another function, by the type and
#: value of ``y``, with the dtype kinds of ``x`` it does so for
_OPERATOR_POWERS: dict[tuple[type, float], tuple[Any, str]] = {
    (int, 2): (cupy.square, "ifc"),
    (float, 2.0): (cupy.square, "fc"),
    (float, 0.5): (cupy.sqrt, "fc"),
    (float, -1.0): (cupy.reciprocal, "fc"),
}


def power(x: Any, y: Any) -> Any:
    """``x ** y`` with fusion on, where ``x`` is an array: what CuPy's operator computes (``**2``
    is ``square``, ``**0.5`` is ``sqrt``, ``**-1.0`` is ``reciprocal``), so that fused and
    unfused operators agree; otherwise the namespace's ``pow``."""
    import ruda_cuda

    special = _OPERATOR_POWERS.get((type(y), y)) if type(y) in (int, float) else None
    if special is not None and x.dtype.kind not in special[1]:
        # CuPy applies the function with a dtype= of its own (e.g. int16 ** 2.0 squares in
        # float64), which a chain does not record: CuPy's operator computes it
        return _array.as_array(cupy.ndarray.__pow__(realized(x), y))
    if special is not None:
        ufunc: Any = special[0]

        def eager(a: Any) -> _array.Array:
            return _array.as_array(ufunc(a))

        return call(ufunc, (x,), eager)
    namespace_pow: Any = ruda_cuda.pow  # made at import by _elementwise: Any to mypy
    return namespace_pow(x, y)


def _chain(node: Node) -> tuple[_fused_kernels.Chain, list[Any]]:
    """The chain computing ``node`` from its leaves (computed nodes, arrays, scalars), and the
    leaves' values in the kernel's parameter order (scalars converted to their loop's type)."""
    leaves: list[Any] = []
    dtypes: list[np.dtype[Any]] = []
    scalars: list[bool] = []
    raw: list[tuple[Any, Any, list[int]]] = []  # steps; a step's value is -(its position + 1)
    index: dict[int, int] = {}  # id of a node or array -> its value's index

    def visit(x: Any, in_type: Any) -> int:
        if type(x) is Node:
            if x.value is None:
                found = index.get(id(x))
                if found is None:
                    args = [visit(a, t) for a, t in zip(x.args, x.op.in_types, strict=True)]
                    raw.append((x.ufunc, x.op, args))
                    found = index[id(x)] = -len(raw)
                return found
            x = x.value
        if isinstance(x, cupy.ndarray):
            found = index.get(id(x))
            if found is None:
                found = index[id(x)] = len(leaves)
                leaves.append(x)
                dtypes.append(x.dtype)
                scalars.append(False)
            return found
        leaves.append(np.array(x, dtype=in_type)[()])
        dtypes.append(np.dtype(in_type))
        scalars.append(True)
        return len(leaves) - 1

    visit(node, None)
    first = len(leaves) - 1  # steps follow the leaves: -(k + 1) becomes len(leaves) + k
    steps = tuple(
        _fused_kernels.Step(ufunc, op, tuple(a if a >= 0 else first - a for a in args))
        for ufunc, op, args in raw
    )
    return _fused_kernels.Chain(tuple(dtypes), tuple(scalars), steps), leaves


def _run(node: Node) -> _array.Array:
    """Compute ``node`` on its GPU: its unfused function when it is one call on computed
    inputs, else one generated kernel for its whole pending chain."""
    return on_device(node.device.id, _launch, node)


def _launch(node: Node) -> _array.Array:
    if not any(isinstance(a, Node) and a.value is None for a in node.args):
        return node.eager(*(a.value if isinstance(a, Node) else a for a in node.args))
    chain, leaves = _chain(node)
    arrays = [x for x in leaves if isinstance(x, cupy.ndarray)]
    if _streams(node, arrays):
        out = cupy.empty(node.shape, node.dtype)
        blocks = stream_blocks(out.size, node.device)
        _fused_kernels.stream_kernel(chain)((blocks,), (512,), (*leaves, out, np.int64(out.size)))
        return _array.as_array(out)
    return _array.as_array(_fused_kernels.elementwise_kernel(chain)(*leaves))


def reduce(reduction: str, x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """``reduction`` (sum, prod, max, min, any, all) of the pending chain ``x`` as one kernel,
    which never writes the chain's values to memory; None when ``x`` is not pending or the
    reduction would not be the unfused one bit for bit (see
    :data:`~ruda_cuda._fused_kernels.REDUCTIONS`), or the arguments are ones the unfused
    function should judge (it then runs, and reports bad input)."""
    if not isinstance(x, LazyArray):
        return None
    node = x._node
    if node.value is not None:
        return None
    axes = _axes(axis, len(node.shape))
    if axes is None or (reduction in ("max", "min") and any(node.shape[a] == 0 for a in axes)):
        return None
    out = _reduced_dtype(reduction, node.dtype, dtype)
    if out is None:
        return None
    chain, leaves = _chain(node)
    kernel = _fused_kernels.reduction_kernel(chain, reduction, out)
    return _array.as_array(on_device(node.device.id, kernel, *leaves, axis=axes, keepdims=bool(keepdims)))


def _axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` as a tuple of distinct non-negative axes, or None when it is not a valid one."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if type(axis) is tuple else (axis,)
    if not all(type(a) is int for a in items):
        return None
    axes = tuple(a + ndim if a < 0 else a for a in items)
    if len(set(axes)) != len(axes) or not all(0 <= a < ndim for a in axes):
        return None
    return axes


def _reduced_dtype(reduction: str, chain: np.dtype[Any], requested: Any) -> np.dtype[Any] | None:
    """The dtype ``reduction`` of a ``chain``-typed array gives unfused, when it is one whose
    result no order of reduction changes (bool, integers), else None."""
    if reduction in ("any", "all"):
        return np.dtype(bool) if requested is None else None
    if chain.kind not in "biu":
        return None
    if reduction in ("max", "min"):
        return chain if requested is None else None
    if requested is not None:
        dtype = np.dtype(requested)
        return dtype if dtype.kind in "iu" else None
    return np.dtype(np.uint64 if chain.kind == "u" else np.int64)


def _streams(node: Node, arrays: list[Any]) -> bool:
    """Whether the vectorised kernel can run the chain (contiguous aligned float arrays of one
    shape and dtype, large enough to pay for it)."""
    size = math.prod(node.shape)
    return (
        node.dtype.name in VECTOR_DTYPES
        and size >= STREAM_MIN_SIZE
        and all(
            a.shape == node.shape and a.dtype == node.dtype and a.flags.c_contiguous and a.data.ptr % 16 == 0
            for a in arrays
        )
    )


def realized(x: Any) -> Any:
    """``x`` with a pending array computed (a :class:`~ruda_cuda.Array`); anything else as it is."""
    return x.materialize() if isinstance(x, LazyArray) else x


def realizing(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with pending arrays among its arguments (also in lists and tuples, as
    ``stack`` and ``meshgrid`` take them) computed first, run on its arrays' GPU
    (:func:`~ruda_cuda._devices.on_inputs_device`) and with fusion paused: what it computes
    with CuPy is computed at once."""

    name = getattr(function, "__name__", "function")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # every pending array, also one computed already: CuPy would
        # read it through __cuda_array_interface__ on the current device
        args = tuple(_realize_nested(a) for a in args)
        if kwargs:
            kwargs = {k: _realize_nested(v) for k, v in kwargs.items()}
        _paused.depth += 1
        try:
            return on_inputs_device(function, *args, **kwargs)
        except AttributeError as err:  # (a list or None read as an array: name the argument)
            refuse(err, name, args, kwargs, "ruda_cuda", takes, "ruda_cuda arrays")
        finally:
            _paused.depth -= 1

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = function.__doc__
    wrapper.__wrapped__ = function  # type: ignore[attr-defined]  # inspect.signature follows it
    return wrapper


def takes(value: object) -> bool:
    """Whether ``value`` is what ruda_cuda's functions read attributes of: a CuPy array or a
    pending one, or a dtype (see :mod:`ruda._arguments`)."""
    return isinstance(value, cupy.ndarray | LazyArray | np.dtype) or (
        isinstance(value, type) and issubclass(value, np.generic)
    )


def _realize_nested(x: Any) -> Any:
    if isinstance(x, LazyArray):
        return x.materialize()
    if isinstance(x, (list, tuple)) and any(isinstance(item, LazyArray) for item in x):
        return type(x)(_realize_nested(item) for item in x)
    return x


def before_write(x: Any) -> None:
    """Compute the pending results that read ``x``'s memory, before it is overwritten."""
    if not _pending or not isinstance(x, cupy.ndarray):
        return
    memory = x.data.mem
    _pending[:] = _live_pending()
    for ref in list(_pending):
        lazy = ref()
        if lazy is not None and lazy._node.value is None and lazy._node.reads(memory):
            lazy.materialize()


def before_launch(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments of a raw kernel launch (``ruda_cuda.kernel``), made ready: a pending result
    passed is computed (its array goes instead), and the pending results that read an array
    argument's memory are computed first, as the kernel may write any array it is given."""
    ready = tuple(a.materialize() if isinstance(a, LazyArray) else a for a in args)
    for a in ready:
        before_write(a)
    return ready


class LazyArray(ArrayOperators):
    """A ruda_cuda result that is computed when it is first needed (see the module docstring).

    It is a complete Array API array object: shape, dtype and device are known without
    computing it; operators record further elementwise calls; everything else computes it and
    answers from the :class:`~ruda_cuda.Array` it becomes. Any CuPy attribute not defined here
    is read from that array too, so code written for CuPy arrays takes it."""

    __slots__ = ("__weakref__", "_node")
    # CuPy's and NumPy's operators give way to ours (``cupy_array + pending``)
    __array_ufunc__ = None

    def __init__(self, node: Node) -> None:
        self._node = node
        _register(self)

    def materialize(self) -> _array.Array:
        """The computed array (computed now if it is not yet)."""
        return self._node.compute()

    # -- what is known without computing --------------------------------------------------
    @property
    def dtype(self) -> np.dtype[Any]:
        return self._node.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return math.prod(self._node.shape)

    @property
    def device(self) -> Any:
        return self._node.device

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        return _array.Array.__array_namespace__(self, api_version=api_version)  # type: ignore[arg-type]

    # -- operators: recorded while they can be fused ----------------------------------------
    def _binary_operator(self, function: str, dunder: str, other: Any, reflected: bool) -> Any:
        if not isinstance(other, (LazyArray, cupy.ndarray, *_SCALARS)):
            return unsupported(self, function, other)
        if dunder == "__pow__":
            return power(self, other)
        import ruda_cuda

        operation = getattr(ruda_cuda, function)
        return operation(other, self) if reflected else operation(self, other)

    def _inplace_operator(self, function: str, dunder: str, other: Any) -> Any:
        import ruda_cuda

        if self._node.value is None:
            result = getattr(ruda_cuda, function)(self, other)
            if isinstance(result, LazyArray) and result.dtype == self.dtype and result.shape == self.shape:
                # nothing can view a pending array's memory, so taking the new node is the update
                self._node = result._node
                return self
        value = self.materialize()
        before_write(value)
        getattr(value, dunder)(realized(other))
        return self

    def _unary_operator(self, function: str, dunder: str) -> Any:
        import ruda_cuda

        return getattr(ruda_cuda, function)(self)

    # -- everything else computes the array -------------------------------------------------
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        interface: dict[str, Any] = self.materialize().__cuda_array_interface__
        return interface

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.materialize(), name)

    @property
    def T(self) -> _array.Array:  # noqa: N802  (the standard's name)
        return self.materialize().T  # type: ignore[no-any-return]

    @property
    def mT(self) -> _array.Array:  # noqa: N802  (the standard's name)
        return self.materialize().mT

    def to_device(self, device: Any, /, *, stream: Any = None) -> _array.Array:
        return self.materialize().to_device(device, stream=stream)

    def __dlpack__(self, /, **kwargs: Any) -> Any:
        return self.materialize().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.materialize().__dlpack_device__()  # type: ignore[no-any-return]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        return self.materialize().__array__(dtype, copy)

    def __getitem__(self, key: Any) -> _array.Array:
        return self.materialize()[realized(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.materialize()[realized(key)] = realized(value)

    def __bool__(self) -> bool:
        return bool(self.materialize())

    def __int__(self) -> int:
        return int(self.materialize())

    def __float__(self) -> float:
        return float(self.materialize())

    def __complex__(self) -> complex:
        return complex(self.materialize())

    def __index__(self) -> int:
        return self.materialize().__index__()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.materialize())

    def __repr__(self) -> str:
        return repr(self.materialize())

    def __str__(self) -> str:
        return str(self.materialize())

    def __reduce__(self) -> Any:
        return self.materialize().__reduce__()
