"""wgpu-native's C declarations and types, parsed once per machine instead of once per process.

Importing wgpu-py's native backend parses wgpu-native's C header (about 100 KB) with cffi,
whose C parser (pycparser) is pure Python; and cffi parses each type string wgpu-py hands to
``ffi.new`` or ``ffi.callback`` the first time it sees it, together with a typedef line for
each of the header's 440 types. On a desktop core the header takes 0.1 s and each type 10 ms;
on the H200's host 0.2 s and 60 ms, most of a warm start. wgpu-py has no way to take
declarations parsed before, and cffi's pre-parsed form (out-of-line ABI mode) needs a build
step in wgpu-py's packaging. So :func:`import_backend` imports the backend with ``cffi.FFI``
replaced, for that one import, by :class:`CachingFFI`. Its ``cdef`` parses the header and the
:data:`TYPES` (all of them in one parse, which takes the time of one), stores what cffi's
parser built in ruda's cache folder, and in later processes reads that back instead.

The parse is stored before any C type is built from it: building one marks cffi's model of a
struct as completed, and a model stored after that would be taken as complete by the next
process. The file is keyed by a hash of the header, the type list and the versions of Python,
cffi and pycparser, so a new wgpu, cffi or Python parses afresh; a missing, unreadable or stale
file means parsing as before. A file that no process has read for :data:`STALE_DAYS` (an older
wgpu's, say) is deleted when a new one is written; a read renews its file's date once a day,
so the parses of Pythons that share the folder all stay. It is a pickle, which runs code when
loaded: it lives in the user's own cache folder, which the user's compiled bytecode and the
drivers' compiled kernels already trust.

cffi offers no public call for any of this, so this module uses its parser and type cache
(``ffi._parser``, ``ffi._parsed_types``, ``ffi._get_cached_btype``, as ``FFI._typeof_locked``
does); if a cffi release changes them, each type is parsed on first use, as without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import cffi
import cffi.cparser
import pycparser

from ruda_wgpu._devices import BACKEND_FFI, cache_dir

_log = logging.getLogger(__name__)
#: parser attributes that are not declarations: its options, and a map from parse-tree nodes
#: (which are gone after parsing) to types
_TRANSIENT = frozenset({"_options", "_structnode2type"})
_swap = threading.Lock()
#: days after its last use that a parse of another header or set of versions is deleted
STALE_DAYS = 30
_DAY = 86400.0

#: the type strings wgpu-py (0.32) passes to ffi.new and ffi.callback on importing, and on the
#: way to running, reading and writing ruda's kernels, as it spells them (the trailing space
#: included), and those ruda_wgpu's own calls into wgpu-native use
TYPES = (
    "void(WGPULogLevel, WGPUStringView, void *)",
    "WGPUInstanceExtras *",
    "WGPUStringView *",
    "WGPUInstanceDescriptor *",
    "WGPUAdapter[]",
    "WGPUAdapterInfo *",
    "WGPUChainedStruct *",
    "WGPUNativeLimits *",
    "WGPULimits *",
    "char []",
    "WGPUQueueDescriptor *",
    "WGPUDeviceExtras *",
    "WGPUChainedStruct * ",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "WGPUDeviceLostCallbackInfo *",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "WGPUUncapturedErrorCallbackInfo *",
    "WGPUFeatureName[]",
    "WGPUDeviceDescriptor *",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
    "WGPURequestDeviceCallbackInfo *",
    "WGPUBufferDescriptor *",
    "uint8_t []",
    "uintptr_t",
    "uint8_t *",
    "WGPUShaderSourceWGSL *",
    "WGPUShaderModuleDescriptor *",
    "WGPUBufferBindingLayout *",
    "WGPUBindGroupLayoutEntry *",
    "WGPUBindGroupLayoutEntry[]",
    "WGPUBindGroupLayoutDescriptor *",
    "WGPUBindGroupLayout[]",
    "WGPUPipelineLayoutDescriptor *",
    "WGPUComputeState *",
    "WGPUComputePipelineDescriptor *",
    "WGPUBindGroupEntry *",
    "WGPUBindGroupEntry[]",
    "WGPUBindGroupDescriptor *",
    "WGPUCommandEncoderDescriptor *",
    "WGPUComputePassDescriptor *",
    "uint32_t []",
    "WGPUCommandBufferDescriptor *",
    "WGPUCommandBuffer[]",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    "WGPUBufferMapCallbackInfo *",
    "intptr_t",
    # and those of ruda_wgpu._wait
    "void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)",
    "WGPUQueueWorkDoneCallbackInfo *",
    "void *",
)


def declarations_dir() -> Path:
    """The folder of parsed headers, one file per header and set of versions."""
    return cache_dir() / "cffi"


def _path(csource: str) -> Path:
    versions = [sys.version, cffi.__version__, pycparser.__version__]
    digest = hashlib.sha256("\0".join([*versions, *TYPES, csource]).encode()).hexdigest()
    return declarations_dir() / f"{digest[:32]}.pickle"


class CachingParser(cffi.cparser.Parser):  # type: ignore[misc]  # cffi has no type hints
    """cffi's parser, answering the type strings it parsed with the header without parsing."""

    def __init__(self) -> None:
        super().__init__()
        self.known_types: dict[str, Any] = {}

    def parse_type_and_quals(self, cdecl: str) -> Any:
        known = self.known_types.get(cdecl)
        return known if known is not None else super().parse_type_and_quals(cdecl)


class CachingFFI(cffi.FFI):  # type: ignore[misc]
    """A ``cffi.FFI`` whose first ``cdef`` reads the parse of the header and of :data:`TYPES`
    from the cache folder, or parses and stores them there; other ``cdef`` calls parse as
    cffi's do."""

    #: where the last header came from: "cache" or "parsed"
    last_source = ""

    def __init__(self) -> None:
        super().__init__()
        self._parser = CachingParser()

    def cdef(
        self, csource: str, override: bool = False, packed: bool = False, pack: int | None = None
    ) -> None:
        if override or packed or pack is not None or self._cdefsources or not isinstance(csource, str):
            super().cdef(csource, override=override, packed=packed, pack=pack)
            return
        path = _path(csource)
        state = _read(path)
        if state is None:
            super().cdef(csource)
            with self._lock:
                self._parser.known_types = parse_types(self._parser, TYPES)
            CachingFFI.last_source = "parsed"
            _write(path, self._parser)
            return
        with self._lock:  # what cffi's own cdef does after parsing, with nothing to complete
            self._cdef_version = object()
            self._parser.__dict__.update(state)
            self._cdefsources.append(csource)
        CachingFFI.last_source = "cache"


def parse_types(parser: Any, cdecls: tuple[str, ...]) -> dict[str, Any]:
    """``parser.parse_type_and_quals`` of each type string, from one parse of a declaration with
    all of them as parameters (pycparser takes about the time of one); {} where that fails."""
    try:
        ast, macros = parser._parse("void __dummy(\n" + ",\n".join(cdecls) + "\n);")[:2]
        params = ast.ext[-1].type.args.params
        if macros or len(params) != len(cdecls):
            return {}
        return {c: parser._get_type_and_quals(p.type) for c, p in zip(cdecls, params, strict=True)}
    except Exception as err:  # only a warm-up: cffi parses each type on first use without it
        _log.debug("cffi types not parsed at once (%s: %s)", type(err).__name__, err)
        return {}


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as file:
            state = pickle.load(file)
    except FileNotFoundError:
        return None
    except Exception as err:  # a damaged or foreign file: parse again, and replace it
        _log.debug("parsed header %s unreadable (%s: %s)", path, type(err).__name__, err)
        return None
    if not isinstance(state, dict) or "_declarations" not in state:
        return None
    with contextlib.suppress(OSError):  # a read-only folder: its files are never pruned either
        if time.time() - path.stat().st_mtime > _DAY:
            os.utime(path)
    return state


def _write(path: Path, parser: Any) -> None:
    if parser._recomplete:  # types cffi completes only against a live FFI: not cacheable
        return
    state = {k: v for k, v in vars(parser).items() if k not in _TRANSIENT}
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as file:
            pickle.dump(state, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # whole or not at all, for processes reading at the same time
        prune(path.parent, keep=path)
    except Exception as err:  # a read-only or full disk: the next process parses again
        _log.debug("parsed header not cached at %s (%s: %s)", path, type(err).__name__, err)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def prune(folder: Path, keep: Path) -> int:
    """Delete the parses in ``folder`` other than ``keep`` that no process has read for
    :data:`STALE_DAYS`; returns how many."""
    deadline, pruned = time.time() - STALE_DAYS * _DAY, 0
    for old in folder.glob("*.pickle"):
        with contextlib.suppress(OSError):  # another process pruned it first
            if old != keep and old.stat().st_mtime < deadline:
                old.unlink()
                pruned += 1
    return pruned


def import_backend() -> str:
    """Import wgpu-py's native backend with its header's declarations from the cache folder
    when they are there; returns where they came from: ``"cache"``, ``"parsed"`` or
    ``"imported before"`` (by whoever imported wgpu's backend first)."""
    with _swap:
        if BACKEND_FFI in sys.modules:
            return "imported before"
        original, cffi.FFI = cffi.FFI, CachingFFI
        try:
            import wgpu.backends.wgpu_native  # noqa: F401  (parses or reads the header)
        finally:
            cffi.FFI = original
    return CachingFFI.last_source or "imported before"


def warm() -> int:
    """Parse the :data:`TYPES` that the backend's ``ffi`` would parse one by one, in one go;
    returns how many. Nothing to do when :func:`import_backend` imported it."""
    from wgpu.backends.wgpu_native._ffi import ffi

    if isinstance(ffi, CachingFFI):
        return 0
    with ffi._lock:
        todo = tuple(cdecl for cdecl in TYPES if cdecl not in ffi._parsed_types)
        if len(todo) < 2:
            return 0
        parsed = {}
        for cdecl, (ctype, _quals) in parse_types(ffi._parser, todo).items():
            try:
                raw_function = ctype.is_raw_function
                if raw_function:
                    ctype = ctype.as_function_pointer()
                parsed[cdecl] = (ffi._get_cached_btype(ctype), raw_function)
            except Exception as err:  # as in parse_types: the type is parsed on first use
                _log.debug("cffi type %s not warmed (%s: %s)", cdecl, type(err).__name__, err)
        ffi._parsed_types.update(parsed)
        return len(parsed)
