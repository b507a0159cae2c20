"""The random-program machine's own arguments and draws (its runs are the backends' tests)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruda.testing.programs import (
    BITS,
    UNKNOWN,
    UNSETTLED,
    VALUE,
    Value,
    _elements,
    _known,
    _scalars,
    program_machine,
)


@pytest.mark.parametrize("dtypes", [("float32", "datetime64[s]"), ("complex64", "U4"), ()])
def test_dtypes_without_rules_are_refused(dtypes):
    with pytest.raises(ValueError, match="boolean, integer, real and complex floating"):
        program_machine(np, dtypes=dtypes)


def test_complex_dtypes_are_taken():
    program_machine(np, dtypes=("complex64", "complex128", "float32", "bool"))


def _parts(values: list[complex | float]) -> np.ndarray:
    return np.array([[complex(v).real, complex(v).imag] for v in values])


@settings(max_examples=50)
@given(
    st.lists(_elements(np.dtype("complex64"), subnormals=False), min_size=20),
    st.lists(_scalars(np.dtype("complex64"), subnormals=False), min_size=20),
)
def test_complex64_parts_are_drawn_without_subnormals_for_a_flushing_device(values, scalars):
    magnitude = np.abs(_parts(values + scalars))
    assert not np.any((magnitude > 0) & (magnitude < np.finfo(np.float32).tiny))
    assert all(np.complex64(v) == v or np.isnan(complex(v)) for v in values + scalars)  # (exact)


def test_complex_values_come_with_edge_parts():
    drawn: list[complex] = []

    @settings(max_examples=300, database=None)
    @given(_elements(np.dtype("complex128"), subnormals=True))
    def collect(value: complex) -> None:
        drawn.append(value)

    collect()
    parts = _parts(drawn)
    assert np.isnan(parts).any() and np.isinf(parts).any()
    assert np.any((parts == 0) & np.signbit(parts)) and np.any(parts == np.finfo(np.float64).max)
    assert np.any((parts != 0) & (np.abs(parts) < np.finfo(np.float64).tiny))  # (subnormal)


def test_what_took_its_sign_from_a_nan_stays_unsettled_in_all_that_follows():
    # (the fused and unfused runs of a backend may give a NaN of either sign, and copysign
    # carries that sign into a number: neither it nor what is computed from it is compared)
    def value(known: int) -> Value:
        return Value("a", np.zeros(1), None, None, known, None, True)

    assert _known(BITS, value(BITS), 2.0) == BITS
    assert _known(BITS, value(VALUE)) == UNKNOWN
    assert _known(UNSETTLED, value(BITS)) == UNSETTLED
    assert _known(BITS, value(UNSETTLED), value(BITS)) == UNSETTLED
    assert _known(VALUE, value(UNKNOWN), value(UNSETTLED)) == UNSETTLED
