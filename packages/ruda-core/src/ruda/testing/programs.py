"""Random programs run on a backend and on NumPy side by side: a differential test of what a
lazy backend does between the calls.

The official suite calls each function once on fresh arrays; the mistakes of a backend that
records operations and runs them later lie in what comes between: a write into an array that a
pending operation still reads, a view of a pending result, an array dropped (its buffer back in a
pool) while a pending graph reads it, a write through one view seen through another, a cached
kernel or launch found again for a graph that only looks the same. :func:`program_machine` makes
a Hypothesis state machine whose steps are such a program: arrays made from drawn values
(NaN, infinities, signed zeros, subnormals, integer extremes; complex numbers of such parts),
elementwise operations with arrays and Python scalars, sums of many arrays, comparisons and
``where``, casts, reductions, views (slices, flips, transposes, reshapes), in-place operators and
item assignment through any view (from other views of the same memory too), arrays dropped, the
last step repeated on the same arrays (as a loop repeats its body), ``synchronize()``, and reads
at random points. Every step runs on NumPy, on the backend, and, given ``set_fusion``, on the
backend with fusion off; each read compares them, and so does the end of the program for every
array still alive. Hypothesis shrinks a failing program to a few steps.

How results compare: the backend with and without fusion, bit for bit (NaN's sign and payload
aside: see :func:`ruda.testing.assert_same_bits`), except what took its sign from a NaN
(``copysign(x, y)`` of a NaN ``y``) and what is computed from that: which operand's NaN an
operation passes on, and so its sign, differs between two compilations of one code. With NumPy,
bit for bit where IEEE arithmetic fixes the result (``+``, ``-``, ``*``, ``floor``,
comparisons, ``where``, wrapping integers, a complex ``+``, ``conj`` or ``real``, ...); up to
the sign of zero where the standard leaves it to the library (``maximum(0.0, -0.0)``); not at
all for what libraries may round differently (``exp``, ``sqrt``, ``/``, a float sum's order, a
complex ``*`` or ``abs``), nor for anything computed from such a value or written into memory
such a value shares, nor after a write into memory that a library's ``real`` or ``imag`` may
share or not (NumPy's are views).

Use it in a backend's tests as::

    def test_programs():
        run_programs(ruda_wgpu, set_fusion=_fusion.set_enabled)
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ruda._tensordata import to_numpy
from ruda.testing._bits import assert_same_bits

#: how far a value is known to match NumPy's (see the module docstring), weakest first; a value
#: that is :data:`UNSETTLED` need not match even between the backend's fused and unfused runs
UNSETTLED, UNKNOWN, VALUE, BITS = -1, 0, 1, 2

#: the shapes of the arrays a program makes (views make others); they broadcast together
SHAPES: list[tuple[int, ...]] = [(3, 4), (4,), (3, 1), (1, 4), (), (2, 3, 4)]
#: arrays alive at once, at most
MAX_ALIVE = 12

_INTEGER_UNARY = {"abs": BITS, "square": BITS, "bitwise_invert": BITS}
_INTEGER_BINARY = {
    "add": BITS,
    "subtract": BITS,
    "multiply": BITS,
    "maximum": BITS,
    "minimum": BITS,
    "bitwise_and": BITS,
    "bitwise_xor": BITS,
}
#: elementwise functions by operand dtype kind, each with what its result is known to match
UNARY: dict[str, dict[str, int]] = {
    "f": {
        "negative": BITS,
        "abs": BITS,
        "floor": BITS,
        "ceil": BITS,
        "trunc": BITS,
        "square": BITS,
        "sign": BITS,
        "exp": UNKNOWN,
        "sin": UNKNOWN,
        "sqrt": UNKNOWN,
        "tanh": UNKNOWN,
    },
    "i": {"negative": BITS, **_INTEGER_UNARY},
    "u": _INTEGER_UNARY,
    "b": {"logical_not": BITS},
    # (real, imag and abs give real arrays; abs is a hypot, whose rounding is the library's)
    "c": {
        "negative": BITS,
        "conj": BITS,
        "real": BITS,
        "imag": BITS,
        "abs": UNKNOWN,
        "square": UNKNOWN,
        "exp": UNKNOWN,
        "sqrt": UNKNOWN,
    },
}
BINARY: dict[str, dict[str, int]] = {
    "f": {
        "add": BITS,
        "subtract": BITS,
        "multiply": BITS,
        "copysign": BITS,
        "maximum": VALUE,
        "minimum": VALUE,
        "divide": UNKNOWN,
        "atan2": UNKNOWN,
    },
    "i": _INTEGER_BINARY,
    "u": _INTEGER_BINARY,
    "b": {"logical_and": BITS, "logical_or": BITS, "logical_xor": BITS},
    # a complex product's parts (ac - bd, ad + bc) round once or twice as the compiler contracts
    # them into fused multiply-adds, and C's Annex G turns some of NumPy's NaN into infinities
    "c": {"add": BITS, "subtract": BITS, "multiply": UNKNOWN, "divide": UNKNOWN},
}
COMPARISONS = ("less", "less_equal", "equal", "not_equal", "greater")
#: the comparisons of complex operands, which have no order
COMPLEX_COMPARISONS = ("equal", "not_equal")
#: unary functions whose result may view the operand's memory or not, as the library chose (the
#: standard leaves it open): NumPy's and PyTorch's real and imag of a complex array are views
MAYBE_VIEWS = frozenset({"real", "imag"})
#: the operators a program uses as operators (``x + y`` rather than ``add(x, y)``)
_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "<": operator.lt,
    "==": operator.eq,
}
#: the operators of complex operands, each with what its result is known to match (see BINARY)
_COMPLEX_OPERATORS = {"+": BITS, "-": BITS, "*": UNKNOWN, "==": BITS}
_INTEGER_IN_PLACE = {"+=": operator.iadd, "*=": operator.imul, "^=": operator.ixor}
#: in-place operators by dtype kind
IN_PLACE: dict[str, dict[str, Callable[[Any, Any], Any]]] = {
    "f": {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul},
    "i": _INTEGER_IN_PLACE,
    "u": _INTEGER_IN_PLACE,
    "b": {"&=": operator.iand, "|=": operator.ior},
    "c": {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul},
}
#: (dtype kind, in-place operator) -> what its result is known to match, where not BITS (a
#: complex product rounds as the library's ``multiply`` does)
IN_PLACE_KNOWN: dict[tuple[str, str], int] = {("c", "*="): UNKNOWN}
#: casts: (from kind, to dtype) -> what the result is known to match (an integer too wide for
#: the floating dtype or for a complex dtype's parts, an int32 for float32 or an int64 for
#: complex128, rounds as the device's conversion rounds: WGSL leaves the direction to it); a
#: cast to the operand's own dtype is a copy; the standard casts complex to bool, not to a real
#: dtype
CASTS: dict[tuple[str, str], int] = {
    ("b", "float32"): BITS,
    ("b", "int32"): BITS,
    ("i", "float32"): UNKNOWN,
    ("i", "int32"): BITS,
    ("u", "int32"): BITS,
    ("f", "bool"): BITS,
    ("f", "float32"): BITS,
    ("f", "float16"): BITS,
    ("i", "bool"): BITS,
    ("b", "complex64"): BITS,
    ("b", "complex128"): BITS,
    ("i", "complex64"): UNKNOWN,
    ("i", "complex128"): UNKNOWN,
    ("f", "complex64"): BITS,
    ("f", "complex128"): BITS,
    ("c", "complex64"): BITS,
    ("c", "complex128"): BITS,
    ("c", "bool"): BITS,
}


def _subnormal_free(dtype: np.dtype[Any], subnormals: bool) -> bool:
    """Whether values of ``dtype`` are drawn without subnormals: float32 ones (complex64's parts
    too), for a backend that flushes them (see :func:`program_machine`)."""
    return dtype == np.float32 and not subnormals


def _part(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The real dtype of complex ``dtype``'s parts (float32 for complex64)."""
    return np.dtype(f"f{dtype.itemsize // 2}")


def _elements(dtype: np.dtype[Any], subnormals: bool) -> st.SearchStrategy[Any]:
    """Values of ``dtype``: edge values often, any value now and then (for complex numbers, in
    each part)."""
    if dtype.kind == "c":
        part = _elements(_part(dtype), subnormals)
        return st.builds(complex, part, part)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        normal = _subnormal_free(dtype, subnormals)
        edges = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.5,
            np.inf,
            -np.inf,
            np.nan,
            info.max,
            info.tiny if normal else info.smallest_subnormal,
            -info.tiny,
        ]
        drawn = st.floats(width=info.bits, allow_subnormal=not normal)  # type: ignore[arg-type]
        return st.sampled_from([float(dtype.type(e)) for e in edges]) | drawn
    if dtype.kind in "iu":
        limits = np.iinfo(dtype)
        edges = [0, 1, 2, 7, int(limits.max), int(limits.min), *([-1] if dtype.kind == "i" else [])]
        return st.sampled_from(edges) | st.integers(int(limits.min), int(limits.max))
    return st.booleans()


def _scalars(dtype: np.dtype[Any], subnormals: bool) -> st.SearchStrategy[Any]:
    """Python scalars for an operation with an array of ``dtype``, each one it holds exactly
    (for a complex array, Python complex numbers and floats)."""
    if dtype.kind == "c":
        part = _scalars(_part(dtype), subnormals)
        return st.builds(complex, part, part) | part
    if dtype.kind == "f":
        special = st.sampled_from([0.0, -0.0, 0.5, -2.0, np.inf, np.nan])
        width = np.finfo(dtype).bits
        return special | st.floats(width=width, allow_subnormal=not _subnormal_free(dtype, subnormals))  # type: ignore[arg-type]
    if dtype.kind in "iu":
        limits = np.iinfo(dtype)
        return st.integers(max(-1000, int(limits.min)), min(1000, int(limits.max)))
    return st.booleans()


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a[::-1], b[::-1], strict=False))


def _into(value: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``value`` broadcasts to exactly ``target``."""
    return len(value) <= len(target) and all(
        x == y or x == 1 for x, y in zip(value[::-1], target[::-1], strict=False)
    )


_PARTS = [slice(1, None), slice(None, -1), slice(None, None, 2)]


def _index(shape: tuple[int, ...], reversed_slices: bool) -> st.SearchStrategy[tuple[Any, ...]]:
    """A basic index of an array of ``shape``: per axis a slice (steps of 1 and 2, and -1 if
    ``reversed_slices``) or an integer, never an empty result; it ends with ``...``, so that
    NumPy gives a view even where every axis takes an integer (rather than a scalar)."""
    parts = [*_PARTS, slice(None, None, -1)] if reversed_slices else _PARTS

    def axis(n: int) -> st.SearchStrategy[Any]:
        slices = [slice(None), *(parts if n > 1 else [])]
        return st.sampled_from(slices) | st.integers(-n, n - 1)

    return st.tuples(*(axis(n) for n in shape)).map(lambda t: (*t, ...))


def _holds_nan(v: Any) -> bool:
    """Whether the operand ``v`` (a :class:`Value` or a Python scalar) is or holds a NaN."""
    values = v.want if isinstance(v, Value) else v
    return bool(np.any(np.isnan(values))) if np.asarray(values).dtype.kind in "fc" else False


def _known(level: int, *operands: Any) -> int:
    """How far the result of an operation whose own result matches NumPy's as far as ``level``
    is known, from ``operands`` (Python scalars are exact): a signed zero or a rounding that may
    differ in an operand can change a result in any way (``1 / x``, ``copysign``), and an
    operand that is :data:`UNSETTLED` makes the result so."""
    weakest = min((v.known for v in operands if isinstance(v, Value)), default=BITS)
    return level if weakest == BITS else min(level, weakest, UNKNOWN)


class Value:
    """One array of the program in each run: NumPy's (``want``), the backend's (``got``) and the
    backend's with fusion off (``plain``, or None); ``known`` says how far ``got`` must match
    ``want`` (:data:`BITS`, :data:`VALUE` or :data:`UNKNOWN`); ``memory`` names the array whose
    memory it views (itself for a fresh one); ``fresh`` is false for views."""

    __slots__ = ("fresh", "got", "known", "memory", "name", "plain", "want")

    def __init__(
        self, name: str, want: Any, got: Any, plain: Any, known: int, memory: str | None, fresh: bool
    ) -> None:
        self.name, self.want, self.got, self.plain, self.known = name, want, got, plain, known
        self.memory = name if memory is None else memory
        self.fresh = fresh

    def __repr__(self) -> str:  # (how a failing program's steps name it)
        view = "" if self.fresh else f", a view of {self.memory}"
        return f"{self.name} ({self.want.dtype}{list(self.want.shape)}{view})"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.want.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = self.want.dtype
        return dtype

    @property
    def kind(self) -> str:
        return str(self.want.dtype.kind)


def program_machine(
    xp: Any,
    *,
    set_fusion: Callable[[bool], bool] | None = None,
    dtypes: Sequence[str] = ("float32", "int32", "bool"),
    reversed_slices: bool = True,
    aliased_writes: bool = True,
    float32_subnormals: bool = True,
    complex_operators: bool = True,
) -> type[RuleBasedStateMachine]:
    """A state machine running random programs on namespace ``xp`` and on NumPy (see the module
    docstring); ``set_fusion(on)`` (returning the previous setting) turns the backend's fusion
    on and off, to run each step a third time unfused; ``dtypes`` are those arrays are made of
    (names of boolean, integer, real and complex floating dtypes; a complex step gives real
    arrays too: ``real``, ``imag``, ``abs``);
    ``reversed_slices=False`` leaves out slices with negative steps, ``aliased_writes=False``
    writes of an array into memory it shares (PyTorch's tensors refuse both);
    ``float32_subnormals=False`` is for a backend that flushes float32 subnormals to zero (NVIDIA's
    GPUs, as WGSL and CUDA's fast paths allow): none is drawn (nor in complex64's parts), and a
    result that holds one at NumPy is not compared with NumPy, nor is what is computed from it;
    ``complex_operators=False`` is for a backend whose arrays' operators are another library's,
    which the namespace cannot fix (PyTorch's tensors add ``x + alpha * y``, which makes NaN of
    the part beside an infinite one): the complex results of ``+``, ``-``, ``+=`` and ``-=`` are
    not compared with NumPy, nor is what is computed from them."""
    other = [name for name in dtypes if np.dtype(name).kind not in "biufc"]
    if other or not dtypes:
        raise ValueError(
            "random programs are made of boolean, integer, real and complex floating arrays, "
            f"not {other or 'none'}"
        )

    complex_levels, in_place_known = _COMPLEX_OPERATORS, IN_PLACE_KNOWN
    if not complex_operators:
        complex_levels = {**complex_levels, "+": UNKNOWN, "-": UNKNOWN}
        in_place_known = {**in_place_known, ("c", "+="): UNKNOWN, ("c", "-="): UNKNOWN}

    def steps(call: Callable[..., Any], *operands: Any) -> tuple[Any, Any, Any]:
        """``call(ns, *operands)`` on NumPy, on the backend, and on the backend unfused (None
        without ``set_fusion``), each on its own run's arrays."""

        def on(run: int) -> list[Any]:
            return [(v.want, v.got, v.plain)[run] if isinstance(v, Value) else v for v in operands]

        with np.errstate(all="ignore"):  # (and backends computing with NumPy: ruda.host)
            want = call(np, *on(0))
            if want is not None:  # (NumPy gives a scalar for a 0-d result; the others an array)
                want = np.asarray(want)
            got = call(xp, *on(1))
            plain = None
            if set_fusion is not None:
                previous = set_fusion(False)
                try:
                    plain = call(xp, *on(2))
                finally:
                    set_fusion(previous)
        return want, got, plain

    class Programs(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.alive: list[Value] = []
            self.made = 0  # arrays made so far, for their names
            #: the last step that computed or wrote, for :meth:`again`
            self.last: Callable[[], object] | None = None
            #: memories that a result of :data:`MAYBE_VIEWS` may share or not: a write into one
            #: shows in that result, or in its operand, in one library and not in another
            self.maybe_shared: set[str] = set()

        def _pick(self, data: st.DataObject, where: Callable[[Value], bool] = lambda v: True) -> Value | None:
            choices = [v for v in self.alive if where(v)]
            return data.draw(st.sampled_from(choices), label="array") if choices else None

        def _operand(self, data: st.DataObject, x: Value, into: tuple[int, ...] | None = None) -> Any:
            """An operand for ``x``: an array of its dtype kind that broadcasts with it (or, to
            be written into an array of shape ``into``, one of its dtype that broadcasts to that
            shape), often another view of the same memory, or a Python scalar."""
            if into is None:
                fits = [v for v in self.alive if v.kind == x.kind and _broadcasts(v.shape, x.shape)]
            else:
                fits = [v for v in self.alive if v.dtype == x.dtype and _into(v.shape, into)]
                if not aliased_writes:
                    fits = [v for v in fits if v.memory != x.memory]
            what = data.draw(
                st.sampled_from(["array", "the same memory", "a Python scalar"]), label="operand"
            )
            if what == "the same memory":
                shared = [v for v in fits if v.memory == x.memory and v is not x]
                if not shared and reversed_slices and into in (None, x.shape):
                    flip = (slice(None, None, -1),) * len(x.shape) + (...,)
                    shared = [self._compute(lambda ns, a: a[flip], (x,), BITS, view_of=x)]
                fits = shared or fits
            if what == "a Python scalar" or not fits:
                return data.draw(_scalars(x.dtype, float32_subnormals), label="scalar")
            return data.draw(st.sampled_from(fits), label="array")

        def _add(self, value: Value) -> Value:
            if len(self.alive) >= MAX_ALIVE:  # (the oldest is forgotten, as by drop)
                self.alive.pop(0)
            self.alive.append(value)
            self.made += 1
            return value

        def _compute(
            self,
            call: Callable[..., Any],
            operands: tuple[Any, ...],
            level: int | Callable[..., int],
            view_of: Value | None = None,
        ) -> Value:
            """A new array, ``call(ns, *operands)`` in each run, matching NumPy's as far as
            ``level`` allows (see :func:`_known`; a function of the operands works it out from
            their values as the step runs); a view of ``view_of``'s memory if given."""
            own = level(*operands) if callable(level) else level
            want, got, plain = steps(call, *operands)
            known = _known(own, *operands) if view_of is None else view_of.known
            if self._flushed(want):
                known = min(known, UNKNOWN)
            memory = None if view_of is None else view_of.memory
            value = self._add(Value(f"a{self.made}", want, got, plain, known, memory, view_of is None))

            def again() -> None:  # (the result replaces this one, as a loop assigns a name again)
                self._forget([value])
                self._compute(call, operands, level, view_of)

            self.last = again
            return value

        def _write(self, call: Callable[..., Any], target: Value, operand: Any, level: int = BITS) -> None:
            """``call(ns, target, operand)`` in each run, writing into ``target``: what shares
            its memory is then known as far as both were, and as far as the write's own result
            matches NumPy's (``level``); not at all in memory that a result may share or not
            (see ``maybe_shared``)."""
            results = steps(call, target, operand)
            if results[0] is not None:  # (an in-place operator's result: the same arrays)
                target.want, target.got, target.plain = results
            maybe_shared = target.memory in self.maybe_shared
            known = _known(level, target, operand)
            if maybe_shared or self._flushed(target.want):
                known = min(known, UNKNOWN)
            for v in self.alive:
                if v.memory == target.memory:
                    v.known = min(v.known, known)
            self.last = lambda: self._write(call, target, operand, level)

        def _sums_level(self, *terms: Value) -> int:
            """:data:`BITS`, or :data:`UNKNOWN` where a partial sum of ``terms`` at NumPy holds
            a float32 subnormal that the backend flushes (or the sum is complex where the
            operators are not known: see ``complex_operators``)."""
            if terms[0].kind == "c" and not complex_operators:
                return UNKNOWN
            with np.errstate(all="ignore"):
                partial = np.asarray(terms[0].want)
                for term in terms[1:]:
                    partial = np.asarray(partial + term.want)
                    if self._flushed(partial):
                        return UNKNOWN
            return BITS

        def _flushed(self, want: Any) -> bool:
            """Whether NumPy's ``want`` holds float32 subnormals (a complex64's parts too) that
            the backend flushes to zero (what is computed from them then differs in any way)."""
            if float32_subnormals or want is None or want.dtype not in (np.float32, np.complex64):
                return False
            magnitude = np.abs(np.stack([want.real, want.imag]))  # (a float's imag: zeros)
            return bool(np.any((magnitude > 0) & (magnitude < np.finfo(np.float32).tiny)))

        def _check(self, v: Value) -> None:
            # (in C order: assert_same_bits views a complex array as its parts, which a strided
            # view of NumPy's cannot be)
            got = np.asarray(to_numpy(v.got), order="C")
            if v.plain is not None and v.known != UNSETTLED:
                assert_same_bits(got, np.asarray(to_numpy(v.plain), order="C"))
            want = np.asarray(v.want, order="C")
            assert (got.dtype, got.shape) == (want.dtype, want.shape), (
                got.dtype,
                got.shape,
                want.dtype,
                want.shape,
            )
            if v.known == BITS:
                assert_same_bits(got, want)
            elif v.known == VALUE:
                np.testing.assert_array_equal(got, want)  # (NaN at the same places; 0.0 == -0.0)

        @initialize(data=st.data())
        def start(self, data: st.DataObject) -> None:
            """Two arrays to begin with, so that every step can run from the first."""
            self.make(data)
            self.make(data)

        @rule(data=st.data())
        def make(self, data: st.DataObject) -> None:
            dtype = data.draw(st.sampled_from(list(dtypes)), label="dtype")
            shape = data.draw(st.sampled_from(SHAPES), label="shape")
            host = data.draw(
                hnp.arrays(dtype, shape, elements=_elements(np.dtype(dtype), float32_subnormals)),
                label="values",
            )
            plain = xp.asarray(host.copy()) if set_fusion is not None else None
            self._add(Value(f"a{self.made}", host.copy(), xp.asarray(host.copy()), plain, BITS, None, True))

        @rule(data=st.data())
        def unary(self, data: st.DataObject) -> None:
            x = self._pick(data)
            assert x is not None
            name = data.draw(st.sampled_from(sorted(UNARY[x.kind])), label="unary")
            view_of = x if name in MAYBE_VIEWS else None  # (a view of x's memory, maybe)
            if view_of is not None:
                self.maybe_shared.add(x.memory)
            self._compute(lambda ns, a: getattr(ns, name)(a), (x,), UNARY[x.kind][name], view_of)

        @rule(data=st.data())
        def binary(self, data: st.DataObject) -> None:
            """A function of two operands, either of them maybe a Python scalar."""
            x = self._pick(data)
            assert x is not None
            name = data.draw(st.sampled_from(sorted(BINARY[x.kind])), label="binary")
            y = self._operand(data, x)
            operands = (y, x) if data.draw(st.booleans(), label="swap") else (x, y)
            level: int | Callable[..., int] = BINARY[x.kind][name]
            if name == "copysign":  # (the sign of a NaN that arithmetic made is the hardware's)
                level = lambda a, b: UNSETTLED if _holds_nan(b) else BITS  # noqa: E731
            self._compute(lambda ns, a, b: getattr(ns, name)(a, b), operands, level)

        @rule(data=st.data())
        def operator_form(self, data: st.DataObject) -> None:
            """``x + y``, ``2.0 * x``, ``x < y``: the operators, which take another path than the
            functions."""
            x = self._pick(data, lambda v: v.kind in "fiuc")
            if x is None:
                return
            y = self._operand(data, x)
            levels = complex_levels if x.kind == "c" else dict.fromkeys(_OPERATORS, BITS)
            symbol = data.draw(st.sampled_from(sorted(levels)), label="operator")
            operands = (y, x) if data.draw(st.booleans(), label="swap") else (x, y)
            self._compute(lambda ns, a, b: _OPERATORS[symbol](a, b), operands, levels[symbol])

        @rule(data=st.data())
        def many(self, data: st.DataObject) -> None:
            """A sum of many arrays, so that a graph reads as many operands as a kernel binds
            and more."""
            x = self._pick(data, lambda v: v.kind in "fiuc")
            if x is None:
                return
            same = [v for v in self.alive if v.dtype == x.dtype and _into(v.shape, x.shape)]
            others = data.draw(st.lists(st.sampled_from(same), min_size=2, max_size=10), label="arrays")
            self._compute(lambda ns, *a: functools.reduce(operator.add, a), (x, *others), self._sums_level)

        @rule(data=st.data())
        def chain(self, data: st.DataObject) -> None:
            """Two to four operations in a row, each on the last one's result and a Python
            scalar, every result kept as an array of the program: a graph whose inner steps
            have names, which later writes and reads may run on their own. Repeated, the chain
            is recorded anew and its results replace the last ones (a loop body)."""
            x = self._pick(data, lambda v: v.kind in "fiuc")
            if x is None:
                return
            steps_of = self._draw_chain(data, x)
            made: list[Value] = []

            def run() -> None:
                self._forget(made)
                made[:] = self._chain(x, steps_of)
                self.last = run

            run()

        @rule(data=st.data())
        def loop(self, data: st.DataObject) -> None:
            """Rounds of an iterative method: a chain on ``x`` (its results named), an in-place
            update of ``x`` with a Python scalar, the last round's results dropped, and a read of
            this round's: each round's graph is the last one's again, on the pooled buffers the
            last one freed, while the write has run part of it."""
            x = self._pick(data, lambda v: v.kind in "fiuc")
            if x is None:
                return
            steps_of = self._draw_chain(data, x)
            symbol = data.draw(st.sampled_from(sorted(IN_PLACE[x.kind])), label="update")
            scalar = data.draw(_scalars(x.dtype, float32_subnormals), label="scalar")
            level = in_place_known.get((x.kind, symbol), BITS)
            previous: list[Value] = []
            for _ in range(data.draw(st.integers(2, 4), label="rounds")):
                made = self._chain(x, steps_of)
                self._write(lambda ns, a, b: IN_PLACE[x.kind][symbol](a, b), x, scalar, level)
                self._forget(previous)
                previous = made
                self._check(made[-1])

        def _draw_chain(self, data: st.DataObject, x: Value) -> list[tuple[str, Any]]:
            names = data.draw(
                st.lists(st.sampled_from(["add", "multiply", "subtract"]), min_size=2, max_size=4)
            )
            return [
                (name, data.draw(_scalars(x.dtype, float32_subnormals), label="scalar")) for name in names
            ]

        def _chain(self, x: Value, steps_of: list[tuple[str, Any]]) -> list[Value]:
            """The operations ``steps_of`` (name, Python scalar) in a row from ``x``, each result
            an array of the program."""
            made = [x]
            for name, scalar in steps_of:
                made.append(
                    self._compute(
                        lambda ns, a, name=name, scalar=scalar: getattr(ns, name)(a, scalar),
                        (made[-1],),
                        BINARY[x.kind][name],
                    )
                )
            return made[1:]

        def _forget(self, values: list[Value]) -> None:
            for v in values:
                if v in self.alive:
                    self.alive.remove(v)

        @rule(data=st.data())
        def compare_and_select(self, data: st.DataObject) -> None:
            """A comparison, alone or selecting with ``where``."""
            x = self._pick(data, lambda v: v.kind in "fiuc")
            if x is None:
                return
            y = self._pick(data, lambda v: v.kind == x.kind and _broadcasts(v.shape, x.shape))
            assert y is not None  # (x itself)
            names = COMPLEX_COMPARISONS if x.kind == "c" else COMPARISONS
            name = data.draw(st.sampled_from(names), label="comparison")
            if data.draw(st.booleans(), label="select"):
                self._compute(lambda ns, a, b: ns.where(getattr(ns, name)(a, b), a, b), (x, y), BITS)
            else:
                self._compute(lambda ns, a, b: getattr(ns, name)(a, b), (x, y), BITS)

        @rule(data=st.data())
        def cast(self, data: st.DataObject) -> None:
            x = self._pick(data)
            assert x is not None
            targets = sorted(t for k, t in CASTS if k == x.kind and t in dtypes)
            if not targets:
                return
            to = data.draw(st.sampled_from(targets), label="to")

            def call(ns: Any, a: Any) -> Any:
                return ns.astype(a, np.dtype(to) if ns is np else getattr(xp, to))

            self._compute(call, (x,), CASTS[(x.kind, to)])

        @rule(data=st.data())
        def reduce(self, data: st.DataObject) -> None:
            """``sum`` (in the operand's dtype), ``max`` or ``min`` (not of complex numbers,
            which have no order), over all axes or one."""
            x = self._pick(data, lambda v: v.kind in "fiuc")
            if x is None:
                return
            names = ["sum"] if x.kind == "c" else ["sum", "max", "min"]
            name = data.draw(st.sampled_from(names), label="reduction")
            ndim = len(x.shape)
            axis = data.draw(st.none() | st.integers(-ndim, ndim - 1) if ndim else st.none(), label="axis")
            keepdims = data.draw(st.booleans(), label="keepdims")
            # a float sum's order of additions is the library's; the max of 0.0 and -0.0 too
            level = (UNKNOWN if name == "sum" else VALUE) if x.kind in "fc" else BITS

            def call(ns: Any, a: Any) -> Any:
                if name == "sum":
                    return ns.sum(a, axis=axis, keepdims=keepdims, dtype=a.dtype)
                return getattr(ns, name)(a, axis=axis, keepdims=keepdims)

            self._compute(call, (x,), level)

        @rule(data=st.data())
        def gather(self, data: st.DataObject) -> None:
            """What reads whole arrays rather than elements, on pending arrays and views too:
            ``concat``, ``sort`` (not of complex numbers), ``cumulative_sum``, ``matmul``."""
            x = self._pick(data, lambda v: v.kind in "fiuc" and len(v.shape) >= 1)
            if x is None:
                return
            # (sums in the library's order, complex products as its multiply rounds; integers wrap)
            exact = BITS if x.kind in "iu" else UNKNOWN
            hows = ["concat", "sort", "cumulative_sum", "matmul"]
            how = data.draw(
                st.sampled_from([h for h in hows if h != "sort" or x.kind != "c"]), label="gather"
            )
            if how == "concat":
                rows = [
                    v for v in self.alive if v.dtype == x.dtype and v.shape[1:] == x.shape[1:] and v.shape
                ]
                y = data.draw(st.sampled_from(rows), label="array")
                self._compute(lambda ns, a, b: ns.concat([a, b, a], axis=0), (x, y), BITS)
            elif how == "sort":
                descending = data.draw(st.booleans(), label="descending")
                # (where 0.0 and -0.0 go is the library's; NaN goes last either way)
                level = VALUE if x.kind == "f" and not descending else BITS if x.kind != "f" else UNKNOWN

                def call(ns: Any, a: Any) -> Any:
                    if ns is np:  # (NumPy's sort has no descending; for floats it is not compared)
                        return np.flip(np.sort(a, axis=-1), axis=-1) if descending else np.sort(a, axis=-1)
                    return ns.sort(a, axis=-1, descending=descending)

                self._compute(call, (x,), level)
            elif how == "cumulative_sum":
                self._compute(lambda ns, a: ns.cumulative_sum(a, axis=-1, dtype=a.dtype), (x,), exact)
            else:
                inner = x.shape[-1]
                right = [
                    v
                    for v in self.alive
                    if v.dtype == x.dtype and v.shape[:1] == (inner,) and len(v.shape) <= 2
                ]
                if not right:  # (x's own transpose fits)
                    self._compute(lambda ns, a: ns.matmul(a, ns.matrix_transpose(a)), (x,), exact)
                else:
                    other = data.draw(st.sampled_from(right), label="array")
                    self._compute(lambda ns, a, b: ns.matmul(a, b), (x, other), exact)

        @rule(data=st.data())
        def view(self, data: st.DataObject) -> None:
            """A view: a slice, a flip of every axis, a transpose, or a reshape of a fresh
            (contiguous) array."""
            x = self._pick(data)
            assert x is not None
            how = data.draw(st.sampled_from(["slice", "flip", "transpose", "reshape"]), label="view")
            if how == "transpose" and len(x.shape) == 2:
                self._compute(lambda ns, a: ns.permute_dims(a, (1, 0)), (x,), BITS, view_of=x)
            elif how == "reshape" and x.fresh:
                self._compute(lambda ns, a: ns.reshape(a, (-1,)), (x,), BITS, view_of=x)
            else:
                flip = (slice(None, None, -1),) * len(x.shape) + (...,)
                index = (
                    flip if how == "flip" and reversed_slices else data.draw(_index(x.shape, reversed_slices))
                )
                self._compute(lambda ns, a: a[index], (x,), BITS, view_of=x)

        @rule(data=st.data())
        def in_place(self, data: st.DataObject) -> None:
            """``t += y`` on any array or view, ``y`` maybe a view of the same memory."""
            t = self._pick(data)
            assert t is not None
            symbol = data.draw(st.sampled_from(sorted(IN_PLACE[t.kind])), label="in-place")
            update = IN_PLACE[t.kind][symbol]
            operand = self._operand(data, t, into=t.shape)
            self._write(lambda ns, a, b: update(a, b), t, operand, in_place_known.get((t.kind, symbol), BITS))

        @rule(data=st.data())
        def assign(self, data: st.DataObject) -> None:
            """``t[index] = y``: a Python scalar, or an array broadcast into the part."""
            t = self._pick(data)
            assert t is not None
            index = data.draw(_index(t.shape, reversed_slices), label="index")

            def call(ns: Any, a: Any, b: Any) -> None:
                a[index] = b

            self._write(call, t, self._operand(data, t, into=np.empty(t.shape)[index].shape))

        @rule()
        def again(self) -> None:
            """The last step that computed or wrote once more, on the same arrays, as a loop
            repeats its body: a new result replaces the last one, whose memory the new one may
            get from a pool (a lazy backend may find what it prepared for it)."""
            if self.last is not None:
                self.last()

        @rule(data=st.data())
        def read(self, data: st.DataObject) -> None:
            v = self._pick(data)
            assert v is not None
            self._check(v)

        @precondition(lambda self: len(self.alive) > 2)
        @rule(data=st.data())
        def drop(self, data: st.DataObject) -> None:
            """Forget an array: its memory may go back to a pool while pending work reads it."""
            v = self._pick(data)
            assert v is not None
            self.alive.remove(v)

        @rule()
        def synchronize(self) -> None:
            if hasattr(xp, "synchronize"):
                xp.synchronize()

        def teardown(self) -> None:
            for v in self.alive:
                self._check(v)

    Programs.__name__ = Programs.__qualname__ = f"Programs_{getattr(xp, '__name__', 'xp')}"
    return Programs


def run_programs(
    xp: Any,
    *,
    set_fusion: Callable[[bool], bool] | None = None,
    programs: int = 60,
    steps: int = 40,
    dtypes: Sequence[str] = ("float32", "int32", "bool"),
    reversed_slices: bool = True,
    aliased_writes: bool = True,
    float32_subnormals: bool = True,
    complex_operators: bool = True,
) -> None:
    """Run ``programs`` random programs of up to ``steps`` steps on ``xp`` (see
    :func:`program_machine`, which takes the other arguments); the first that goes wrong is
    shrunk and raised."""
    machine = program_machine(
        xp,
        set_fusion=set_fusion,
        dtypes=dtypes,
        reversed_slices=reversed_slices,
        aliased_writes=aliased_writes,
        float32_subnormals=float32_subnormals,
        complex_operators=complex_operators,
    )
    run: Callable[..., None] = run_state_machine_as_test  # (untyped in older Hypothesis releases)
    run(
        machine,
        settings=settings(
            max_examples=programs,
            stateful_step_count=steps,
            deadline=None,  # (a program that compiles new kernels takes its time)
            report_multiple_bugs=False,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
