"""Every namespace function handed what is not an array (None, a list, a string, a dict) raises
an error that says so: never an AttributeError from inside the call ("'list' object has no
attribute 'ndim'"), except from_dlpack's, which the standard asks for and which names
``__dlpack__``, and NumPy's ufuncs' (``atan2(x, None)``), which ruda.host keeps as NumPy has
them. Functions that take array-likes (NumPy's do) may return a result instead."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ruda.testing import parametrize_backends

BAD = (None, [1.0, 2.0], "abc", {})


def _functions(xp):
    names = [n for n in dir(xp) if not n.startswith("_") and callable(getattr(xp, n))]
    functions = [getattr(xp, n) for n in sorted(names)]
    return [f for f in functions if not isinstance(f, type | np.ufunc)]


@parametrize_backends("host", "torch", "wgpu")
def test_no_function_meets_a_non_array_with_an_attribute_error(xp):
    good = xp.asarray([1.0, 2.0, 3.0])
    met = []
    for function in _functions(xp):
        for bad in BAD:
            for args in ((bad,), (good, bad), (bad, good)):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        function(*args)
                except AttributeError as err:
                    if not (function.__name__ == "from_dlpack" and "__dlpack__" in str(err)):
                        met.append(f"{function.__name__}({', '.join(type(a).__name__ for a in args)}): {err}")
                except Exception:
                    pass
    assert not met, "\n".join(met)


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
