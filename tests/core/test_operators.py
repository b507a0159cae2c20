"""The operators of ruda's own array types are written out once, in ``ruda._operators``."""

from __future__ import annotations

import operator

import pytest
from ruda._operators import ArrayOperators

BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift")
BINARY += ("matmul",)
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
UNARY = ("neg", "pos", "abs", "invert")


NAMES = [f"__{p}{stem}__" for stem in BINARY for p in ("", "r", "i")]
NAMES += [f"__{stem}__" for stem in COMPARISONS + UNARY]


def test_every_operator_is_a_method_of_the_class_body():
    assert [name for name in NAMES if name not in vars(ArrayOperators)] == []
    assert ArrayOperators.__hash__ is None  # elementwise == leaves arrays unhashable


@pytest.mark.parametrize("module", ["ruda_wgpu._array", "ruda_remote._array", "ruda_router._array"])
def test_array_types_take_their_operators_from_the_one_class(module):
    array_type = pytest.importorskip(module).Array
    assert issubclass(array_type, ArrayOperators)
    assert [name for name in NAMES if name in vars(array_type)] == []  # none bound on later


@pytest.mark.parametrize("module", ["ruda_wgpu._array", "ruda_remote._array", "ruda_router._array"])
def test_array_types_are_made_by_their_namespace_not_called(module):
    array_type = pytest.importorskip(module).Array
    message = r"^ruda_\w+\.Array is not called directly: make arrays with .*asarray"
    with pytest.raises(TypeError, match=message):
        array_type()
    with pytest.raises(TypeError, match="not called directly"):
        array_type([1.0, 2.0])


class _Recorder(ArrayOperators):
    """Says which hook an operator called, with what."""

    def _binary_operator(self, function, dunder, other, reflected):
        return ("binary", function, dunder, other, reflected)

    def _inplace_operator(self, function, dunder, other):
        return ("inplace", function, dunder, other)

    def _unary_operator(self, function, dunder):
        return ("unary", function, dunder)


def test_each_operator_names_its_function_and_dunder():
    x = _Recorder()
    assert x + 2 == ("binary", "add", "__add__", 2, False)
    assert 2 - x == ("binary", "subtract", "__rsub__", 2, True)
    assert operator.imatmul(x, 3) == ("inplace", "matmul", "__imatmul__", 3)
    assert (x <= 1) == ("binary", "less_equal", "__le__", 1, False)
    assert ~x == ("unary", "bitwise_invert", "__invert__")
    assert abs(x) == ("unary", "abs", "__abs__")


def _arrays_of_our_types():
    """A float array of each of ruda's own array types that runs without a server here."""
    made = []
    wgpu = pytest.importorskip("ruda_wgpu")
    made.append(wgpu.ones(2))
    router = pytest.importorskip("ruda_router")
    import ruda.host

    made.append(router.Router((ruda.host, ruda.host)).ones(2))
    return made


@pytest.mark.parametrize("sequence", ["ab", b"ab", [1, 2], (1, 2), range(2)])
def test_a_sequence_operand_names_both_types_not_an_index(sequence):
    # Python would repeat the sequence x.__index__() times and report an index error instead
    for x in _arrays_of_our_types():
        message = rf"for \*: '\w+' and '{type(sequence).__name__}'"
        with pytest.raises(TypeError, match=message):
            x * sequence
        with pytest.raises(TypeError, match=message):
            sequence * x
        with pytest.raises(TypeError, match="unsupported operand"):
            x + sequence  # (Python's own message: no repetition for +)


def test_an_array_of_another_library_is_refused_with_the_way_out():
    # NumPy would answer "operand does not support ufuncs", and == would fall back to identity
    np = pytest.importorskip("numpy")
    wgpu = pytest.importorskip("ruda_wgpu")
    x = wgpu.ones(3)
    advice = r"cannot combine a ruda_wgpu array with a numpy.ndarray.*ruda_wgpu.asarray\(x, device=...\)"
    for combine in (operator.add, operator.eq, operator.lt, operator.matmul):
        with pytest.raises(TypeError, match=advice):
            combine(x, np.ones(3))
        with pytest.raises(TypeError, match=advice):
            combine(np.ones(3), x)
    with pytest.raises(TypeError, match=advice):
        x += np.ones(3)


def test_another_ruda_array_type_answers_for_itself():
    # not refused by the left operand: the router's reflected operator gives its own advice
    wgpu = pytest.importorskip("ruda_wgpu")
    router = pytest.importorskip("ruda_router")
    import ruda.host

    routed = router.Router((ruda.host, ruda.host)).ones(3)
    assert wgpu.ones(3).__add__(routed) is NotImplemented
    with pytest.raises(TypeError, match=r"Router\(\(ruda.host, ruda.host\)\) computes on its own arrays"):
        wgpu.ones(3) + routed


def test_arrays_have_a_length_and_iterate_over_their_first_axis_as_numpy():
    np = pytest.importorskip("numpy")
    from collections.abc import Iterable

    for x in _arrays_of_our_types():
        assert isinstance(x, Iterable)
        rows = list(x * 2)
        assert len(rows) == 2 and all(row.shape == () for row in rows)
        assert [float(row) for row in rows] == [2.0, 2.0]
        ns = x.__array_namespace__()
        grid = ns.reshape(ns.arange(6), (2, 3))
        assert [np.asarray(row).tolist() for row in grid] == [[0, 1, 2], [3, 4, 5]]
        assert len(x) == 2 and len(grid) == 2 and len(grid[0]) == 3
        with pytest.raises(TypeError, match="iteration over a 0-D"):
            iter(ns.sum(x))
        with pytest.raises(TypeError, match=r"len\(\) of a 0-D ruda_\w+ array"):
            len(ns.sum(x))
