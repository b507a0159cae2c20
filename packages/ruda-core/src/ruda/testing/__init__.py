"""Testing kit shared by every ruda backend's tests.

- :func:`parametrize_backends`: run one test on every available backend
  namespace (``xp``), or on the ones named.
- :func:`assert_matches_numpy`: compare a backend's result with NumPy's:
  dtype, shape, and values with tolerances chosen by dtype.
- :func:`assert_exports_host_copies` and :func:`assert_python_scalar_conversions`: DLPack, NumPy
  and Python-scalar export of an array type that can only export host copies.
- :func:`assert_numpy_ufuncs_run_in_namespace`: NumPy's ufuncs on ruda's own array types.
- :func:`assert_non_arrays_refused`: every function handed None, a list, a string or a dict
  says what is wrong, never "'list' object has no attribute 'ndim'".
- :func:`edge_values`, :func:`edge_operands` and :func:`assert_same_bits`: bit-for-bit
  comparisons on NaN, signed zeros, infinities and extremes (fused against unfused results).
- :func:`python_output` and :func:`switched`: a snippet in a fresh interpreter (switches read at
  import), a call with a process-wide switch set another way.
- :func:`sweep_values` and :func:`ulp_error`: accuracy sweeps of elementwise
  functions (:data:`MATH_UNARY`, :data:`MATH_BINARY`), in units in the last place.
- :mod:`ruda.testing.programs`: random programs of operations, views, writes and reads run on a
  backend, on NumPy and unfused, compared step by step (``run_programs(xp)``).
- :mod:`ruda.testing.conformance`: property-based checks built on
  ``hypothesis.extra.array_api.make_strategies_namespace(xp)`` that any
  backend's test module reuses by subclassing ``ConformanceChecks``.
"""

from __future__ import annotations

try:  # (the kit's own needs, which ruda's testing extra installs)
    import hypothesis
    import pytest
except ImportError as err:
    hint = 'pip install "ruda[testing]"'
    raise ImportError(f"ruda.testing needs pytest and hypothesis: {hint} ({err})") from err

from ruda.testing._accuracy import MATH_BINARY, MATH_UNARY, NUMPY_NAMES, sweep_values, ulp_error
from ruda.testing._bits import assert_same_bits, edge_operands, edge_values
from ruda.testing._compare import (
    assert_exports_host_copies,
    assert_matches_numpy,
    assert_numpy_ufuncs_run_in_namespace,
    assert_python_scalar_conversions,
    tolerance_for,
)
from ruda.testing._params import backend_params, parametrize_backends
from ruda.testing._process import python_output, switched
from ruda.testing._refusals import assert_non_arrays_refused

__all__ = [
    "MATH_BINARY",
    "MATH_UNARY",
    "NUMPY_NAMES",
    "assert_exports_host_copies",
    "assert_matches_numpy",
    "assert_non_arrays_refused",
    "assert_numpy_ufuncs_run_in_namespace",
    "assert_python_scalar_conversions",
    "assert_same_bits",
    "backend_params",
    "edge_operands",
    "edge_values",
    "parametrize_backends",
    "python_output",
    "switched",
    "sweep_values",
    "tolerance_for",
    "ulp_error",
]
