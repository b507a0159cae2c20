"""The random-program machine's own arguments (its runs are the backends' tests)."""

from __future__ import annotations

import numpy as np
import pytest
from ruda.testing.programs import program_machine


@pytest.mark.parametrize("dtypes", [("float32", "complex64"), ()])
def test_dtypes_without_rules_are_refused(dtypes):
    with pytest.raises(ValueError, match="boolean, integer and real floating"):
        program_machine(np, dtypes=dtypes)
