"""WGSL sources: kernels in ``wgsl/<name>.wgsl`` and a library of helper functions linked on use.

Kernel files are templates: ``${NAME}`` placeholders are filled by :func:`kernel`
(``string.Template`` syntax; WGSL itself never uses ``$``). Helper functions
(``isnan_f``, ``round_f16``, ``udiv_floor``...) live in the ``lib_*.wgsl`` files;
:func:`link` adds to a kernel exactly the helpers it calls, and the helpers those
call, so every kernel stays small and no prelude is pasted by hand.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from string import Template

import numpy as np

#: the library files, each a sequence of top-level ``fn``/``struct``/``const`` declarations
LIBRARIES = ("lib_f32", "lib_f16", "lib_f64")


def _float_constants(suffix: str, dtype: str) -> dict[str, str]:
    """The limits the complex library needs, as WGSL literals of one float type."""
    info = np.finfo(dtype)
    eps, tiny, big = float(info.eps), float(info.smallest_normal), float(info.max)
    values = {
        "EPS": eps,
        "RECIP_EPS": 1 / eps,
        "SQRT_MIN": 2.0 ** np.ceil(np.log2(tiny) / 2),  # >= sqrt(smallest normal), a power of two
        "FOUR_SQRT_MIN": 4 * 2.0 ** np.ceil(np.log2(tiny) / 2),
        "QUARTER_SQRT_MAX": 2.0 ** np.floor(np.log2(big) / 2) / 4,
        "HALF_MAX": big / 2,
        "SQRT_MAX_DOWN": 2.0 ** -np.floor(np.log2(big) / 2),  # scales the largest values to its root
        "SQRT_MAX_UP": 2.0 ** np.floor(np.log2(big) / 2),
        "SQRT3_EPS": float(np.sqrt(3 * eps)),
        "SQRT6_EPS": float(np.sqrt(6 * eps)),
        "EXP_OVF": float(np.log(big)),  # exp overflows above
        "BIG_X": 22.0 if dtype == "float64" else 9.0,  # cosh(x) = exp(|x|)/2 to working precision above
        "CSQRT_THRESH": big / (1 + np.sqrt(2)),
    }
    return {k: f"{float(v)!r}{suffix}" for k, v in values.items()}


#: templated library files, rendered once per set of values (integer widths; complex64 and complex128)
TEMPLATE_LIBRARIES = {
    "lib_int": (
        {"I": "i32", "U": "u32", "IS": "i", "US": "u"},
        {"I": "i64", "U": "u64", "IS": "li", "US": "lu"},
    ),
    "lib_complex": (
        {"C": "c64", "F": "f32", "S": "f", "L": "f", **_float_constants("f", "float32")},
        {"C": "c128", "F": "f64", "S": "d", "L": "lf", **_float_constants("lf", "float64")},
    ),
}

_DECL = re.compile(r"^(?:fn|struct|const)\s+(\w+)", re.MULTILINE)
#: a name; the same tokens as ``\b\w+\b``, found half again as fast
_WORD = re.compile(r"\w+")


def read(name: str) -> str:
    """The text of ``wgsl/<name>.wgsl``."""
    return resources.files("ruda_wgpu").joinpath("wgsl", f"{name}.wgsl").read_text(encoding="utf-8")


@functools.cache
def _template(name: str) -> Template:
    return Template(read(name))


def kernel(name: str, /, **subs: object) -> str:
    """The kernel ``wgsl/<name>.wgsl`` with its ``${...}`` placeholders filled (all are required)."""
    return _template(name).substitute({k: str(v) for k, v in subs.items()})


@functools.cache
def _library() -> dict[str, tuple[int, str]]:
    """name -> (order, declaration text) of every library declaration."""
    units: list[tuple[str, str]] = []
    texts = [read(lib) for lib in LIBRARIES]
    for lib, renders in TEMPLATE_LIBRARIES.items():
        texts += [Template(read(lib)).substitute(subs) for subs in renders]
    for text in texts:
        starts = [m.start() for m in _DECL.finditer(text)]
        for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
            chunk = text[begin:end].rstrip() + "\n"
            name = _DECL.match(chunk)
            assert name is not None
            units.append((name.group(1), _strip_trailing_comments(chunk)))
    return {name: (order, body) for order, (name, body) in enumerate(units)}


@functools.cache
def _uses(name: str) -> frozenset[str]:
    """The other library declarations that library declaration ``name`` names (found when
    first linked: a process links few of the hundreds)."""
    lib = _library()
    return frozenset(w for w in _WORD.findall(lib[name][1]) if w in lib and w != name)


def _strip_trailing_comments(chunk: str) -> str:
    """Drop comment lines after a declaration's closing brace: they belong to the next one."""
    lines = chunk.rstrip().splitlines()
    while lines and lines[-1].lstrip().startswith("//"):
        lines.pop()
    return "\n".join(lines) + "\n"


def link(code: str) -> str:
    """``code`` preceded by every library declaration it uses, directly or through another."""
    lib = _library()
    wanted: set[str] = set()
    todo = [w for w in set(_WORD.findall(code)) if w in lib]
    defined = {m.group(1) for m in _DECL.finditer(code)}
    while todo:
        name = todo.pop()
        if name in wanted or name in defined:
            continue
        wanted.add(name)
        todo.extend(_uses(name))
    if not wanted:
        return code
    parts = [lib[n][1] for n in sorted(wanted, key=lambda n: lib[n][0])]
    return "\n".join(parts) + "\n" + code
