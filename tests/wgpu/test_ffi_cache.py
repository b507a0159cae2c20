"""wgpu-native's header and wgpu-py's C types, parsed once per machine: the parse read back from
the cache folder is the one cffi makes, a warm process parses nothing, and a damaged file is
parsed again."""

from __future__ import annotations

import json
from pathlib import Path

import cffi
import pytest
from ruda.testing import parametrize_backends, python_output
from ruda_wgpu import _ffi_cache

pytestmark = parametrize_backends("wgpu")

#: a fresh process: counts cffi's parses from the import on, computes, and says where the
#: header came from
PROCESS = """
import json, cffi, cffi.cparser as cp
parses = []
original = cp.Parser._parse
cp.Parser._parse = lambda self, source: parses.append(source[:40]) or original(self, source)
import numpy as np, ruda_wgpu as xp
from ruda_wgpu import _ffi_cache
x = xp.asarray(np.array([3.0, 1.0, 2.0], dtype=np.float32))
values = np.asarray(xp.exp(x) + 1).tolist()
from wgpu.backends.wgpu_native._ffi import ffi
caching = _ffi_cache.CachingFFI
print(json.dumps({"values": values, "parses": len(parses), "source": caching.last_source,
                  "restored": cffi.FFI is not caching, "caching": isinstance(ffi, caching)}))
"""


def _run(folder: Path) -> dict:
    return json.loads(python_output(PROCESS, RUDA_CACHE_DIR=str(folder)))


def test_a_warm_process_parses_nothing(xp, cache_folder: Path):
    want = [pytest.approx(v, rel=1e-6) for v in (21.0855369, 3.7182818, 8.3890561)]
    cold = _run(cache_folder)
    assert cold["source"] == "parsed" and cold["caching"] and cold["restored"]
    assert cold["parses"] == 2  # the header, then every type at once (47 without the cache)
    assert cold["values"] == want
    assert len(list((cache_folder / "cffi").glob("*.pickle"))) == 1
    warm = _run(cache_folder)
    assert warm["source"] == "cache" and warm["caching"] and warm["restored"]
    assert warm["parses"] == 0
    assert warm["values"] == want


def test_a_damaged_file_is_parsed_again_and_replaced(xp, cache_folder: Path):
    _run(cache_folder)
    (stored,) = (cache_folder / "cffi").glob("*.pickle")
    stored.write_bytes(b"not a pickle")
    again = _run(cache_folder)
    assert again["source"] == "parsed" and again["values"][1] == pytest.approx(3.7182818)
    assert _run(cache_folder)["source"] == "cache"


def test_parses_unread_for_a_month_are_deleted_when_a_new_one_is_written(xp, cache_folder: Path):
    import os
    import time

    folder = cache_folder / "cffi"
    folder.mkdir()
    month = _ffi_cache.STALE_DAYS * 86400
    stale, recent = folder / "stale.pickle", folder / "recent.pickle"
    for path, age in ((stale, month + 3600), (recent, month - 3600)):
        path.write_bytes(b"an older wgpu's parse")
        os.utime(path, (time.time() - age, time.time() - age))
    _run(cache_folder)  # parses and writes its own
    assert not stale.exists() and recent.exists()
    (current,) = set(folder.glob("*.pickle")) - {recent}
    os.utime(current, (time.time() - month, time.time() - month))
    assert _run(cache_folder)["source"] == "cache"  # a read renews the date of the file it reads
    assert time.time() - current.stat().st_mtime < 600


def test_the_stored_parse_is_the_one_cffi_makes(xp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from wgpu.backends.wgpu_native._ffi import get_wgpu_header

    monkeypatch.setenv("RUDA_CACHE_DIR", str(tmp_path))
    header = get_wgpu_header()
    stored = _ffi_cache.CachingFFI()
    stored.cdef(header)  # parses and stores
    loaded = _ffi_cache.CachingFFI()
    loaded.cdef(header)  # reads
    assert _ffi_cache.CachingFFI.last_source == "cache"
    plain = cffi.FFI()
    plain.cdef(header)

    def names(declarations: dict) -> dict[str, object]:  # types by C name, constants by value
        return {k: getattr(tp, "_get_c_name", lambda tp=tp: tp)() for k, (tp, _) in declarations.items()}

    assert names(loaded._parser._declarations) == names(plain._parser._declarations)
    assert loaded._parser._int_constants == plain._parser._int_constants
    for cdecl in _ffi_cache.TYPES:
        tp, _quals = plain._parser.parse_type_and_quals(cdecl)
        assert loaded._parser.known_types[cdecl][0]._get_c_name() == tp._get_c_name(), cdecl
    # C types built from the stored parse work: a struct with its fields, and a call
    lib = loaded.dlopen(_ffi_cache.sys.modules[_ffi_cache.BACKEND_FFI].lib_path)
    view = loaded.new("WGPUStringView *", {"length": 3})
    assert view.length == 3 and lib.wgpuGetVersion() > 0


def test_a_backend_imported_before_ruda_is_warmed_in_one_parse(xp):
    code = (
        "import cffi.cparser as cp\n"
        "parses = []\n"
        "original = cp.Parser._parse\n"
        "cp.Parser._parse = lambda self, source: parses.append(source) or original(self, source)\n"
        "import wgpu.backends.wgpu_native\n"
        "import numpy as np, ruda_wgpu as xp\n"
        "before = len(parses)\n"
        "np.asarray(xp.sort(xp.exp(xp.asarray([3.0, 1.0, 2.0])) + 1))\n"
        "print(sum(source.startswith('void __dummy(') for source in parses[before:]))\n"
    )
    assert int(python_output(code)) <= 1  # the warm-up's one parse (46 without it)


def test_types_that_do_not_parse_at_once_are_left_to_cffi(xp):
    parser = cffi.FFI()._parser
    assert _ffi_cache.parse_types(parser, ("int *", "no_such_type *")) == {}
    assert set(_ffi_cache.parse_types(parser, ("int *", "long *"))) == {"int *", "long *"}
