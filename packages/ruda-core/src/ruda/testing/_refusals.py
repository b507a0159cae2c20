"""The sweep that hands every namespace function what is not an array."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ruda import spec

#: what is not an array: None, a list, a string, a dict
NON_ARRAYS: tuple[Any, ...] = (None, [1.0, 2.0], "abc", {})


def assert_non_arrays_refused(xp: Any) -> None:
    """Call every function of the standard in namespace ``xp`` with each of :data:`NON_ARRAYS` alone, after an
    array and before one, and fail naming each call that met it with an AttributeError from
    inside ("'list' object has no attribute 'ndim'") rather than an error that says what is
    wrong. A call may succeed (NumPy's functions take lists) or raise anything else. Left out:
    ``from_dlpack``'s AttributeError when it names ``__dlpack__`` (the standard asks for it),
    and NumPy's ufuncs, which ``ruda.host`` keeps as NumPy has them (``atan2(x, None)``)."""
    good = xp.asarray([1.0, 2.0, 3.0])
    met = []
    # (the standard's functions, not a namespace's own: ruda_remote.set_default_device(None))
    functions = [(name, getattr(xp, name)) for name in spec.FUNCTIONS]
    for extension, names in (("linalg", spec.LINALG), ("fft", spec.FFT)):
        functions += [(f"{extension}.{n}", getattr(getattr(xp, extension), n)) for n in names]
    for name, function in functions:
        if isinstance(function, np.ufunc):
            continue
        for bad in NON_ARRAYS:
            for args in ((bad,), (good, bad), (bad, good)):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        function(*args)
                except AttributeError as err:
                    if not (name == "from_dlpack" and "__dlpack__" in str(err)):
                        met.append(f"{name}({', '.join(type(a).__name__ for a in args)}): {err}")
                except Exception:
                    pass
    assert not met, "AttributeErrors from inside the calls:\n" + "\n".join(met)
