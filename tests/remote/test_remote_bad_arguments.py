"""Every function of the remote namespace handed what is not an array (None, a list, a string,
a dict) raises an error that says so on the client, never an AttributeError from inside the call
(see ``ruda.testing.assert_non_arrays_refused``); and the session goes on."""

from __future__ import annotations

from typing import Any

from ruda.testing import assert_non_arrays_refused


def test_no_function_meets_a_non_array_with_an_attribute_error(xp: Any) -> None:
    assert_non_arrays_refused(xp)
    assert float(xp.sum(xp.asarray([1.0, 2.0, 3.0]))) == 6.0  # (the session goes on)
