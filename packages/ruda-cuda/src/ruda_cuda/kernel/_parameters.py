"""Kernel parameter types, read from the PTX ``.entry`` declarations.

A kernel's PTX says what each parameter is::

    .visible .entry saxpy(
        .param .f32 saxpy_param_0,
        .param .u64 .ptr .global .align 4 saxpy_param_1,
        .param .u32 saxpy_param_2
    )

Knowing that, a launch converts a Python ``int`` or ``float`` to the declared
type, and refuses what does not fit (a float for an integer parameter, a
negative int for an unsigned one, a value out of range, the wrong number of
arguments) with a message naming the kernel, the argument, what was expected
and what was given. CUBIN and FATBIN images carry no such declarations: their
kernels keep taking NumPy scalars with explicit C types only.

This module needs neither CuPy nor a GPU (only the standard library and
NumPy), so it is tested on every machine.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np

#: How ``struct`` packs a NumPy scalar as the C type its dtype names.
NUMPY_CODES: dict[np.dtype[Any], str] = {
    np.dtype(t): c
    for t, c in [
        (np.bool_, "?"),
        (np.int8, "b"),
        (np.uint8, "B"),
        (np.int16, "h"),
        (np.uint16, "H"),
        (np.int32, "i"),
        (np.uint32, "I"),
        (np.int64, "q"),
        (np.uint64, "Q"),
        (np.float16, "e"),
        (np.float32, "f"),
        (np.float64, "d"),
    ]
}

# PTX scalar types a kernel parameter can have: (kind, bytes).
_TYPES: dict[str, tuple[str, int]] = {
    **{f"s{8 * n}": ("signed", n) for n in (1, 2, 4, 8)},
    **{f"u{8 * n}": ("unsigned", n) for n in (1, 2, 4, 8)},
    **{f"b{8 * n}": ("bits", n) for n in (1, 2, 4, 8)},
    "b128": ("raw", 16),
    "f16": ("float", 2),
    "f32": ("float", 4),
    "f64": ("float", 8),
    "bf16": ("raw", 2),  # no Python conversion to bfloat16: a 2-byte NumPy scalar passes as is
    "f16x2": ("raw", 4),
    "bf16x2": ("raw", 4),
    "texref": ("bits", 8),
    "samplerref": ("bits", 8),
    "surfref": ("bits", 8),
}
_SIGNED_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}
_UNSIGNED_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}

_BINARY_MAGIC = (b"\x7fELF", b"\x50\xed\x55\xba", b"\xb1\x43\x62\x46")  # ELF, fatbin, its wrapper
_COMMENTS = re.compile(r'("(?:[^"\\\n]|\\.)*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%]*)\s*(\()?")
_PARAMETER = re.compile(
    r"\.param\s+(?P<directives>(?:\.[\w]+(?:\s+\d+)?\s+)+)(?P<name>[A-Za-z_$%][\w$%]*)"
    r"\s*(?:\[\s*(?P<count>\d+)\s*\])?"
)


class KernelParameter(NamedTuple):
    """One parameter of a kernel as its PTX declares it.

    ``type`` is the PTX type without its dot (``"f32"``, ``"u64"``, ``"b8"``); ``count`` is
    the element count of an array parameter (``.b8 p[12]``: a 12-byte struct), else None;
    ``pointer`` says the PTX marked it ``.ptr`` (a hint only: NVCC does not always do so).
    """

    name: str
    type: str
    size: int
    align: int
    count: int | None = None  # type: ignore[assignment]  # the PTX's name; hides tuple.count, unused here
    pointer: bool = False

    @property
    def kind(self) -> str:
        """``"signed"``, ``"unsigned"``, ``"bits"``, ``"float"`` or ``"raw"`` (structs, vectors:
        bytes only)."""
        if self.count is not None:
            return "raw"
        return _TYPES[self.type][0]

    def __str__(self) -> str:
        return f".{self.type}" + (f"[{self.count}]" if self.count is not None else "")


def parse_entries(ptx: str) -> dict[str, tuple[KernelParameter, ...]]:
    """The parameters of every ``.entry`` (kernel) in ``ptx``, by kernel name.

    A kernel whose parameter list this parser cannot read fully is left out, so its
    launches are not type-checked rather than checked wrongly.
    """
    text = _COMMENTS.sub(lambda m: m.group(1) or " ", ptx)
    entries: dict[str, tuple[KernelParameter, ...]] = {}
    for match in _ENTRY.finditer(text):
        name = match.group(1)
        if match.group(2) is None:  # `.entry name {`: no parameters
            entries[name] = ()
            continue
        close = text.find(")", match.end())
        if close < 0:
            continue
        inside = text[match.end() : close].strip()
        declarations = [d.strip() for d in inside.split(",")] if inside else []
        parameters = [_parse_parameter(d) for d in declarations]
        if all(p is not None for p in parameters):
            entries[name] = tuple(p for p in parameters if p is not None)
    return entries


def _parse_parameter(declaration: str) -> KernelParameter | None:
    match = _PARAMETER.fullmatch(declaration)
    if match is None:
        return None
    tokens = match.group("directives").split()
    types = [t[1:] for t in tokens if t.startswith(".") and t[1:] in _TYPES]
    if len(types) != 1:
        return None
    ptx_type = types[0]
    size = _TYPES[ptx_type][1]
    align = size
    # `.align N` before the type aligns the parameter; after `.ptr` it describes the pointee.
    before_type = tokens[: tokens.index("." + ptx_type)]
    if ".align" in before_type:
        position = before_type.index(".align")
        if position + 1 >= len(before_type) or not before_type[position + 1].isdigit():
            return None
        align = int(before_type[position + 1])
    count = match.group("count")
    elements = int(count) if count is not None else None
    return KernelParameter(
        name=match.group("name"),
        type=ptx_type,
        size=size * (elements if elements is not None else 1),
        align=align,
        count=elements,
        pointer=".ptr" in tokens,
    )


def is_binary_image(image: bytes) -> bool:
    """Whether a module image starts as a CUBIN (ELF) or a FATBIN does."""
    return bytes(image[:4]) in _BINARY_MAGIC


def ptx_text(image: bytes | bytearray | memoryview) -> str | None:
    """The PTX text in a module image, or None for a CUBIN (ELF), a FATBIN or other binary."""
    if is_binary_image(bytes(image[:4])):
        return None
    raw = bytes(image).split(b"\0", 1)[0]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if ".entry" in text or ".version" in text else None


def host_code(kind: type, parameter: KernelParameter, kernel: str, position: int) -> tuple[str, bool] | None:
    """How a host value of type ``kind`` is packed for ``parameter``: ``(struct code, as_bytes)``.

    ``as_bytes`` means the value is passed as its raw bytes (``value.tobytes()``). Returns
    None when ``kind`` is no host scalar at all (device memory, arrays, other objects: the
    caller decides); raises ``TypeError`` when it is a scalar of the wrong kind. Ranges are
    not checked here: ``struct`` checks them when packing, and :func:`range_error` explains.
    """
    numeric = kind in (bool, int, float, complex) or issubclass(kind, np.generic)
    if not numeric:
        return None
    dtype = np.dtype(kind) if issubclass(kind, np.generic) else None
    size, parameter_kind = parameter.size, parameter.kind
    if parameter_kind == "raw":
        if dtype is not None and dtype.itemsize == size and dtype.kind not in "OSUV":
            return f"{size}s", True
        raise kind_error(kernel, position, parameter, kind)
    is_bool = kind is bool or kind is np.bool_
    is_integer = kind is int or (dtype is not None and dtype.kind in "iu")
    if parameter_kind == "float":
        if not (is_integer or kind is float or (dtype is not None and dtype.kind == "f")):
            raise kind_error(kernel, position, parameter, kind)
        if dtype is not None and dtype.kind == "f" and dtype.itemsize == size:
            return NUMPY_CODES[dtype], False
        return _FLOAT_CODES[size], False
    # signed, unsigned, bits: integers only; a NumPy integer of the parameter's size passes its
    # bits unchanged (NVCC declares a C `int` as .u32, so np.int32(-1) must reach it as is).
    if kind is np.bool_:
        return "?" + (f"{size - 1}x" if size > 1 else ""), False
    if not (is_integer or is_bool):
        raise kind_error(kernel, position, parameter, kind)
    if dtype is not None and dtype.itemsize == size:
        return NUMPY_CODES[dtype], False
    return (_SIGNED_CODES if parameter_kind == "signed" else _UNSIGNED_CODES)[size], False


def expected(parameter: KernelParameter) -> str:
    """What a parameter takes, in words, for error messages."""
    bits = 8 * parameter.size
    kind = parameter.kind
    if kind == "raw":
        return f"{parameter.size} raw bytes (a struct or vector): a NumPy scalar of {parameter.size} bytes"
    if kind == "float":
        return "a float (or int)"
    if kind == "signed":
        text = f"an int in {-(2 ** (bits - 1))}..{2 ** (bits - 1) - 1}"
    else:
        text = f"an int in 0..{2**bits - 1}"
    if parameter.size == 8:
        text += ", or device memory (DeviceBuffer, DeviceBox, a ruda_cuda array)"
    return text


def count_error(kernel: str, parameters: tuple[KernelParameter, ...], given: int) -> TypeError:
    """The error for a launch with the wrong number of arguments."""
    declared = ", ".join(str(p) for p in parameters)
    return TypeError(
        f"kernel {kernel!r} takes {len(parameters)} argument{'s' * (len(parameters) != 1)} "
        f"({declared}), given {given}"
    )


def kind_error(kernel: str, position: int, parameter: KernelParameter, kind: type) -> TypeError:
    """The error for an argument of the wrong kind (a float for an integer, ...)."""
    fix = ""
    if parameter.kind == "raw" and kind in (bool, int, float, complex):
        fix = (
            f": pass e.g. np.complex64(...) for 8 bytes, np.float16(...) for 2 ({kind.__name__} has no size)"
        )
    return TypeError(
        f"kernel {kernel!r}, argument {position} ({parameter}): expected {expected(parameter)}, "
        f"given {_type_name(kind)}{fix}"
    )


def pointer_error(kernel: str, position: int, parameter: KernelParameter, kind: type) -> TypeError:
    """The error for device memory passed where the kernel takes no pointer."""
    return TypeError(
        f"kernel {kernel!r}, argument {position} ({parameter}): expected {expected(parameter)}, "
        f"given device memory ({kind.__name__}): pointers are 8 bytes, .u64 or .b64 in PTX"
    )


def range_error(kernel: str, position: int, parameter: KernelParameter, value: Any) -> ValueError:
    """The error for a value that does not fit its parameter's type."""
    text = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    message = (
        f"kernel {kernel!r}, argument {position} ({parameter}): expected {expected(parameter)}, "
        f"given {_type_name(type(value))} {text}"
    )
    if parameter.kind == "float":
        message += f", which overflows .{parameter.type}"
    elif parameter.kind in ("unsigned", "bits") and _is_negative(value):
        signed = f"np.int{8 * parameter.size}({text})"
        message += (
            f"; NVCC declares C `int`/`long long` parameters unsigned in PTX too: if the "
            f"C parameter is signed, pass {signed}"
        )
    return ValueError(message)


def _is_negative(value: Any) -> bool:
    try:
        return int(value) < 0
    except (TypeError, ValueError, OverflowError):
        return False


def _type_name(kind: type) -> str:
    return f"np.{kind.__name__}" if issubclass(kind, np.generic) else kind.__name__
