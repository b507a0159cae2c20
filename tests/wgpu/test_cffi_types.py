"""The one-parse warm-up of wgpu-py's C types: the same types as cffi's own parses, and the
first operations of a fresh process then parse almost nothing."""

from __future__ import annotations

import pytest
from ruda.testing import parametrize_backends, python_output
from ruda_wgpu import _cffi_types

pytestmark = parametrize_backends("wgpu")


def test_warmed_types_are_the_ones_cffi_makes_itself(xp):
    from wgpu.backends.wgpu_native._ffi import ffi

    xp.asarray([1.0]) + 1  # the device is open: the warm-up has run
    with ffi._lock:  # cffi's parser and type cache are used under it
        for cdecl in _cffi_types.TYPES:
            ctype = ffi._parser.parse_type(cdecl)
            raw_function = ctype.is_raw_function
            if raw_function:
                ctype = ctype.as_function_pointer()
            assert ffi._parsed_types[cdecl] == (ffi._get_cached_btype(ctype), raw_function), cdecl
    assert _cffi_types.warm() == 0  # nothing left to do


def test_a_fresh_process_parses_its_types_at_once(xp):
    code = (
        "import cffi.cparser as cp\n"
        "parses = []\n"
        "original = cp.Parser._parse\n"
        "cp.Parser._parse = lambda self, source: parses.append(source) or original(self, source)\n"
        "import numpy as np, ruda_wgpu as xp\n"
        "before = len(parses)\n"
        "np.asarray(xp.sort(xp.exp(xp.asarray([3.0, 1.0, 2.0])) + 1))\n"
        "print(sum(source.startswith('void __dummy(') for source in parses[before:]))\n"
    )
    # type parses: two wgpu-py makes at its import, before the warm-up, then the warm-up's one
    # (46 without it)
    assert int(python_output(code)) <= 3


def test_a_cffi_without_the_private_parser_warms_nothing(xp, monkeypatch: pytest.MonkeyPatch):
    from wgpu.backends.wgpu_native._ffi import ffi

    monkeypatch.setattr(_cffi_types, "TYPES", ("int *", "long *"))
    monkeypatch.delattr(type(ffi), "_get_cached_btype")
    monkeypatch.setattr(ffi, "_parsed_types", {})
    assert _cffi_types.warm() == 0
