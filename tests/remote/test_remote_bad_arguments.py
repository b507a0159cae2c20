"""Every function of the remote namespace handed what is not an array (None, a list, a string,
a dict) raises an error that says so on the client: never an AttributeError from inside the
call, except from_dlpack's, which names ``__dlpack__``; and the session goes on."""

from __future__ import annotations

import warnings
from typing import Any

BAD = (None, [1.0, 2.0], "abc", {})


def test_no_function_meets_a_non_array_with_an_attribute_error(xp: Any) -> None:
    good = xp.asarray([1.0, 2.0, 3.0])
    names = sorted(n for n in dir(xp) if not n.startswith("_") and callable(getattr(xp, n)))
    met = []
    for name in names:
        function = getattr(xp, name)
        if isinstance(function, type):
            continue
        for bad in BAD:
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
    assert not met, "\n".join(met)
    assert xp.sum(good).__float__() == 6.0  # (the session goes on)
