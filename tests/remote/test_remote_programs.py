"""Random programs of elementwise operations, views, in-place writes, drops and reads, run on a
loopback server and on NumPy (see :mod:`ruda.testing.programs`): what pipelining ops and caching
reads does between calls."""

from __future__ import annotations

from ruda.testing.programs import run_programs


def test_programs_on_the_server_and_on_numpy_agree(xp):
    # (complex64 too: complex scalars cross the wire as an extension type of their own)
    run_programs(xp, dtypes=("float32", "int32", "bool", "complex64"))
