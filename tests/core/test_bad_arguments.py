"""Every namespace function handed what is not an array (None, a list, a string, a dict) raises
an error that says so, never an AttributeError from inside the call (see
``ruda.testing.assert_non_arrays_refused``); asarray refuses what has no dtype of the standard."""

from __future__ import annotations

import numpy as np
import pytest
from ruda.testing import assert_non_arrays_refused, parametrize_backends


@parametrize_backends("host", "torch", "wgpu")
def test_no_function_meets_a_non_array_with_an_attribute_error(xp):
    assert_non_arrays_refused(xp)


@parametrize_backends("host", "torch")
def test_the_error_names_the_function_and_what_it_got(xp):
    with pytest.raises(TypeError, match=r"^std\(\) takes .*, not list$"):
        xp.std([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^unstack\(\) takes .*, not dict$"):
        xp.unstack({})
    with pytest.raises(TypeError, match=r"^take_along_axis\(\) takes .*, not NoneType$"):
        xp.take_along_axis(xp.asarray([1.0]), None, axis=0)


@parametrize_backends("host", "torch", "wgpu")
@pytest.mark.parametrize("obj", [None, {}, object(), "abc", ["a", 1], np.array(["2020-01-01"], "M8[D]")])
def test_asarray_refuses_what_has_no_dtype_of_the_standard(xp, obj):
    # (NumPy makes arrays of dtype object, text or dates of them, and torch had raised a
    # RuntimeError that it "could not infer dtype"; torch's own error for a list holding a
    # string is a ValueError, "too many dimensions 'str'")
    with pytest.raises((TypeError, ValueError), match=r"asarray\(\)|invalid data type|can't convert|'str'"):
        xp.asarray(obj)
