"""Every namespace function handed what is not an array (None, a list, a string, a dict) raises
an error that says so, never an AttributeError from inside the call (see
``ruda.testing.assert_non_arrays_refused``); asarray refuses what has no dtype of the standard."""

from __future__ import annotations

import numpy as np
import pytest
from ruda.testing import assert_non_arrays_refused, parametrize_backends


@parametrize_backends("host", "torch", "wgpu", "cuda")
def test_no_function_meets_a_non_array_with_an_attribute_error(xp):
    assert_non_arrays_refused(xp)


@parametrize_backends("host", "torch", "cuda")
def test_the_error_names_the_function_and_what_it_got(xp):
    with pytest.raises(TypeError, match=r"^std\(\) takes .*, not list$"):
        xp.std([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^unstack\(\) takes .*, not dict$"):
        xp.unstack({})
    with pytest.raises(TypeError, match=r"^take_along_axis\(\) takes .*, not NoneType$"):
        xp.take_along_axis(xp.asarray([1.0]), None, axis=0)


@parametrize_backends("host", "torch", "wgpu", "cuda")
@pytest.mark.parametrize("obj", [None, {}, object(), "abc", ["a", 1], np.array(["2020-01-01"], "M8[D]")])
def test_asarray_refuses_what_has_no_dtype_of_the_standard(xp, obj):
    # (NumPy makes arrays of dtype object, text or dates of them, and torch had raised a
    # RuntimeError that it "could not infer dtype"; torch's own error for a list holding a
    # string is a ValueError, "too many dimensions 'str'")
    with pytest.raises((TypeError, ValueError), match=r"asarray\(\)|invalid data type|can't convert|'str'"):
        xp.asarray(obj)


@parametrize_backends("host", "torch", "wgpu", "cuda")
def test_creation_refuses_a_zero_step_a_fill_of_no_number_and_sizes_of_no_integer(xp):
    # (NumPy raised ZeroDivisionError for the step and made text or objects of the fills;
    # array-api-compat's torch eye said "zeros() takes 1 positional argument but 2 were given")
    with pytest.raises(ValueError, match="step must not be zero"):
        xp.arange(0, 5, 0)
    for fill in ("a", None):
        what = r"full(_like)?\(\) takes a Python bool, int, float or complex, not " + type(fill).__name__
        with pytest.raises(TypeError, match=what):
            xp.full(3, fill)
        with pytest.raises(TypeError, match=what):
            xp.full_like(xp.asarray([1.0]), fill)
    with pytest.raises(TypeError, match="float"):
        xp.eye(2.5)
