"""The facts about the standard that every backend takes from ``ruda.spec``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ruda import spec

NAMES = [*spec.DTYPES, "float16"]


@pytest.mark.parametrize(("a", "b"), list(itertools.product(NAMES, NAMES)))
def test_promotion_by_name_is_the_standards_table(a, b):
    got = spec.promote_names(a, b)
    kinds = {spec_kind(a), spec_kind(b)}
    mixed = len(kinds) > 1  # bool with numbers, integers with floating dtypes
    signed_with_uint64 = "uint64" in (a, b) and {a, b} & set(spec.DTYPE_KINDS["signed integer"])
    if mixed or signed_with_uint64:  # no signed integer holds every uint64
        assert got is None  # the standard defines none: each library decides
    else:
        assert got == np.promote_types(a, b).name  # NumPy follows the standard's table there
    assert got == spec.promote_names(b, a)


def spec_kind(name: str) -> str:
    if name == "bool":
        return "bool"
    return "integral" if name in spec.DTYPE_KINDS["integral"] else "floating"
