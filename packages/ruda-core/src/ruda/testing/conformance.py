"""Property-based conformance checks that any backend's tests reuse.

Subclass :class:`ConformanceChecks` in a backend's test module and name the
namespace; pytest then collects every check for that backend::

    class TestWgpuConformance(ConformanceChecks):
        xp = ruda_wgpu
        unsupported = {"fft": "not in part 1"}

Arrays are drawn with ``hypothesis.extra.array_api.make_strategies_namespace``
applied to the backend itself, so drawing exercises its creation functions
too; every result is compared with NumPy's on the same values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

from ruda import spec
from ruda._tensordata import to_numpy
from ruda.testing._compare import assert_matches_numpy

UNARY_FLOAT = (
    "abs",
    "negative",
    "positive",
    "sqrt",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "atan",
    "asinh",
    "floor",
    "ceil",
    "trunc",
    "round",
    "sign",
    "square",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
)
UNARY_INT = ("abs", "negative", "positive", "square", "sign", "bitwise_invert")
BINARY_NUMERIC = (
    "add",
    "subtract",
    "multiply",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
)
BINARY_INT = ("bitwise_and", "bitwise_or", "bitwise_xor")
REDUCTIONS = ("sum", "prod", "min", "max", "mean", "all", "any")
# Transcendental functions on a GPU are accurate to a few ulp, not correctly rounded.
_TRANSCENDENTAL_RTOL = {"float16": 5e-3, "float32": 2e-4, "float64": 1e-9}

_SMALL_FLOATS = {"allow_nan": False, "allow_infinity": False, "min_value": -30, "max_value": 30}
_COMPLEX_OF = {"float32": np.complex64, "float64": np.complex128}


@functools.cache
def _strategies(xp: Any) -> Any:
    return make_strategies_namespace(xp)


class ConformanceChecks:
    """Checks every backend must pass; set ``xp`` in the subclass."""

    xp: ClassVar[Any] = None
    max_examples: ClassVar[int] = 30
    #: check name (or operation name) -> reason it is skipped for this backend
    unsupported: ClassVar[dict[str, str]] = {}

    # -- helpers -----------------------------------------------------------------
    def _run(self, check: Callable[[st.DataObject], None]) -> None:
        """Run ``check`` under hypothesis with this backend's example budget."""

        @settings(max_examples=self.max_examples, deadline=None)
        @given(data=st.data())
        def run(data: st.DataObject) -> None:
            check(data)

        with np.errstate(all="ignore"):  # NaN from log(-1) is expected, not news
            run()

    def _skip_if_unsupported(self, *names: str) -> None:
        for name in names:
            if name in self.unsupported:
                pytest.skip(f"{name}: {self.unsupported[name]}")

    def _dtypes(self, kind: str | tuple[str, ...]) -> list[Any]:
        return list(self.xp.__array_namespace_info__().dtypes(kind=kind).values())

    def _array(self, data: st.DataObject, kind: str | tuple[str, ...], shape: Any = None) -> Any:
        dtypes = self._dtypes(kind)
        if not dtypes:
            pytest.skip(f"the device has no {kind} dtypes")
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        return self._array_of(data, dtype, shape)

    def _array_of(self, data: st.DataObject, dtype: Any, shape: Any = None) -> Any:
        xps = _strategies(self.xp)
        shape = shape if shape is not None else xps.array_shapes(min_dims=0, max_dims=3, max_side=5)
        # Bounded values: overflow is undefined behaviour in the standard, not a conformance question.
        if self.xp.isdtype(dtype, "complex floating"):
            # hypothesis bounds only the real part of complex elements: build from two real arrays
            part = self.xp.float32 if dtype == self.xp.complex64 else self.xp.float64
            shape = data.draw(shape, label="shape") if not isinstance(shape, tuple) else shape
            real, imag = (to_numpy(data.draw(xps.arrays(part, shape, elements=_SMALL_FLOATS))) for _ in "ri")
            return self.xp.asarray((real + 1j * imag).astype(_COMPLEX_OF[real.dtype.name]))
        elements = _SMALL_FLOATS if self.xp.isdtype(dtype, "real floating") else None
        return data.draw(xps.arrays(dtype, shape, elements=elements), label="x")

    def _compare(self, name: str, got: Any, want: Any, transcendental: bool = False) -> None:
        rtol = _TRANSCENDENTAL_RTOL.get(np.asarray(want).dtype.name) if transcendental else None
        assert_matches_numpy(got, want, rtol=rtol, atol=1e-6 if transcendental else None, err_msg=name)

    def test_array_namespace_versions(self) -> None:
        """An array gives its namespace back for every revision the core accepts and refuses
        another, naming it. Backends whose arrays are their library's own (NumPy's, torch's)
        answer with that library's rules instead."""
        x = self.xp.asarray([1.0, 2.0])
        if getattr(x, "__array_namespace__", lambda: None)() is not self.xp:
            pytest.skip("the arrays are the library's own: their __array_namespace__ is the library's")
        for version in spec.API_VERSIONS:
            assert x.__array_namespace__(api_version=version) is self.xp
        with pytest.raises(ValueError, match="unknown Array API version '2099.12'"):
            x.__array_namespace__(api_version="2099.12")

    # -- checks: each test_* draws its examples in the matching _* method ----------
    def test_roundtrip(self) -> None:
        self._run(self._roundtrip)

    def _roundtrip(self, data: st.DataObject) -> None:
        x = self._array(data, "numeric")
        host = to_numpy(x)
        assert_matches_numpy(self.xp.asarray(host), host)

    @pytest.mark.parametrize("name", UNARY_FLOAT)
    def test_unary_float(self, name: str) -> None:
        self._run(functools.partial(self._unary_float, name))

    def _unary_float(self, name: str, data: st.DataObject) -> None:
        self._skip_if_unsupported("elementwise", name)
        x = self._array(data, "real floating")
        want = getattr(np, name)(to_numpy(x))
        self._compare(name, getattr(self.xp, name)(x), want, transcendental=True)

    @pytest.mark.parametrize("name", UNARY_INT)
    def test_unary_int(self, name: str) -> None:
        self._run(functools.partial(self._unary_int, name))

    def _unary_int(self, name: str, data: st.DataObject) -> None:
        self._skip_if_unsupported("elementwise", name)
        x = self._array(data, "integral")
        want = getattr(np, name)(to_numpy(x))
        self._compare(name, getattr(self.xp, name)(x), want)

    @pytest.mark.parametrize("name", BINARY_NUMERIC + BINARY_INT)
    def test_binary(self, name: str) -> None:
        self._run(functools.partial(self._binary, name))

    def _binary(self, name: str, data: st.DataObject) -> None:
        self._skip_if_unsupported("elementwise", name)
        kind = "integral" if name in BINARY_INT else "numeric"
        dtypes = [d for d in self._dtypes(kind) if not self.xp.isdtype(d, "complex floating")]
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shapes = data.draw(_strategies(self.xp).mutually_broadcastable_shapes(2, max_side=4), label="shapes")
        x1 = self._array_of(data, dtype, shapes.input_shapes[0])
        x2 = self._array_of(data, dtype, shapes.input_shapes[1])
        want = getattr(np, name)(to_numpy(x1), to_numpy(x2))
        self._compare(name, getattr(self.xp, name)(x1, x2), want)

    @pytest.mark.parametrize("name", REDUCTIONS)
    def test_reduction(self, name: str) -> None:
        self._run(functools.partial(self._reduction, name))

    def _reduction(self, name: str, data: st.DataObject) -> None:
        self._skip_if_unsupported("reductions", name)
        # min and max are undefined for complex numbers in the standard
        kind = (
            "bool"
            if name in ("all", "any")
            else "real floating"
            if name == "mean"
            else ("integral", "real floating")
            if name in ("min", "max")
            else "numeric"
        )
        x = self._array(data, kind)
        if x.size == 0 and name in ("min", "max"):
            return
        if name == "prod" and self.xp.isdtype(x.dtype, "real floating"):
            # A product that overflows in some order of multiplication is inf in that order and,
            # with a zero among the factors, 0 * inf = nan, where another order gives 0: the
            # result depends on the order, which the standard leaves to the implementation.
            # Keep arrays whose every partial product is finite.
            magnitudes = np.maximum(np.abs(to_numpy(x).astype(np.float64)), 1.0)
            assume(float(np.prod(magnitudes)) <= float(np.finfo(to_numpy(x).dtype).max))
        axes = st.none() if x.ndim == 0 else st.none() | st.integers(-x.ndim, x.ndim - 1)
        axis = data.draw(axes, label="axis")
        keepdims = data.draw(st.booleans(), label="keepdims")
        got = getattr(self.xp, name)(x, axis=axis, keepdims=keepdims)
        standard = self._reduction_dtype(name, x)
        assert got.dtype == standard, f"{name} of {x.dtype}: {got.dtype}, the standard says {standard}"
        want = getattr(np, name)(to_numpy(x), axis=axis, keepdims=keepdims)
        if name in ("sum", "prod") and self.xp.isdtype(x.dtype, "integral"):
            # Integer overflow is the implementation's choice (torch accumulates unsigned
            # integers in int64, NumPy in uint64; a device without 64-bit integers in 32 bits):
            # compare modulo 2^bits of the result's dtype, where all wrap alike.
            got = to_numpy(got)
            unsigned = np.dtype(f"uint{8 * got.dtype.itemsize}")
            got, want = got.astype(unsigned), np.asarray(want).astype(np.uint64).astype(unsigned)
        # Accumulation order differs between backends: compare sums of floats loosely.
        loose = name in ("sum", "prod", "mean") and self.xp.isdtype(x.dtype, "real floating")
        assert_matches_numpy(
            got,
            want,
            check_dtype=False,
            rtol=1e-3 if loose else None,
            atol=1e-3 if loose else None,
            err_msg=name,
        )

    def _reduction_dtype(self, name: str, x: Any) -> Any:
        """The dtype the standard gives ``name(x)`` without a ``dtype`` argument: bool for all and
        any; for sum and prod of booleans and signed integers the default integer dtype (of
        x's device), of unsigned integers the unsigned dtype of its size (where the namespace has
        it: torch has no uint64 sum, and ruda_torch keeps the size in its default integer); else
        x's dtype."""
        if name in ("all", "any"):
            return self.xp.bool
        if name not in ("sum", "prod") or self.xp.isdtype(x.dtype, ("real floating", "complex floating")):
            return x.dtype
        info = self.xp.__array_namespace_info__()
        default = info.default_dtypes(device=x.device)["integral"]
        unsigned = f"uint{self.xp.iinfo(default).bits}"
        if self.xp.isdtype(x.dtype, "unsigned integer") and unsigned in info.dtypes(device=x.device):
            return getattr(self.xp, unsigned)
        return default

    def test_getitem_basic(self) -> None:
        self._run(self._getitem_basic)

    def _getitem_basic(self, data: st.DataObject) -> None:
        self._skip_if_unsupported("indexing")
        x = self._array(data, "numeric")
        index = data.draw(_strategies(self.xp).indices(x.shape), label="index")
        assert_matches_numpy(x[index], to_numpy(x)[index], err_msg=f"x[{index!r}]")

    def test_reshape_permute_flip(self) -> None:
        self._run(self._reshape_permute_flip)

    def _reshape_permute_flip(self, data: st.DataObject) -> None:
        self._skip_if_unsupported("manipulation")
        x = self._array(data, "numeric")
        host = to_numpy(x)
        assert_matches_numpy(self.xp.reshape(x, (-1,)), host.reshape(-1))
        axes = tuple(data.draw(st.permutations(range(x.ndim)), label="axes"))
        assert_matches_numpy(self.xp.permute_dims(x, axes), np.permute_dims(host, axes))
        assert_matches_numpy(self.xp.flip(x), np.flip(host))

    def test_matmul(self) -> None:
        self._run(self._matmul)

    def _matmul(self, data: st.DataObject) -> None:
        self._skip_if_unsupported("matmul")
        m, k, n = (data.draw(st.integers(1, 24), label=s) for s in "mkn")
        dtype = data.draw(st.sampled_from(self._dtypes("real floating")), label="dtype")
        a = self._array_of(data, dtype, (m, k))
        b = self._array_of(data, dtype, (k, n))
        a64, b64 = to_numpy(a).astype(np.float64), to_numpy(b).astype(np.float64)
        want = a64 @ b64
        got = to_numpy(self.xp.matmul(a, b))
        assert got.dtype == to_numpy(a).dtype
        # A k-term dot product in floating point, summed in any order, is within
        # gamma_k |a| |b| of the exact one, gamma_k = k u / (1 - k u), u the dtype's unit
        # roundoff (Higham, Accuracy and Stability of Numerical Algorithms, 3.1); u |want| more
        # covers a backend that accumulates wider and rounds once, and k times the smallest
        # normal number hardware that flushes subnormal products to zero. Per dtype, so that a
        # float32 product computed at lower precision (TF32: u = 2^-11) fails.
        info = np.finfo(got.dtype)
        u = float(info.eps) / 2
        gamma = k * u / (1 - k * u)
        bound = gamma * (np.abs(a64) @ np.abs(b64)) + u * np.abs(want) + k * float(info.smallest_normal)
        error = np.abs(got.astype(np.float64) - want)
        assert (error <= bound).all(), f"{dtype} matmul: error {error.max():.3g} above {bound.max():.3g}"
