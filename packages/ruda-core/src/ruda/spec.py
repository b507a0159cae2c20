"""The names of the Python Array API standard, revision 2025.12.

One list, used by every package that needs the whole surface: the host
namespace (what it exports), the remote wire format (its fixed table of
operations), and the tests (what each backend must provide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

API_VERSION = "2025.12"
#: the revisions an array's ``__array_namespace__(api_version=...)`` accepts: each backend's one
#: namespace serves them all, as the later revisions only add to the earlier ones
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", API_VERSION)


def check_api_version(version: str | None, backend: str) -> None:
    """Raise ValueError unless ``version`` (from ``__array_namespace__``) is None or accepted."""
    if version is not None and version not in API_VERSIONS:
        raise ValueError(
            f"unknown Array API version {version!r}: {backend} implements {API_VERSION} "
            f"(and accepts {', '.join(API_VERSIONS)})"
        )


def out_of_bounds(what: str, n: int) -> str:
    """The message of the IndexError every backend raises for an index outside ``[-n, n)``
    along an axis of length ``n`` (``what`` names the call: ``"take()"``). The standard leaves
    such indices unspecified; NumPy raises, and CuPy and torch's ``take_along_dim`` wrap them
    silently, so that code written once would give another backend's wrong result."""
    return f"{what}: index out of bounds for an axis of length {n} (valid indices are {-n} to {n - 1})"


def no_array_from(what: str) -> TypeError:
    """The error ``asarray`` raises for an object it cannot read as an array (``what`` names it:
    None, a dict, an object of no array protocol), where NumPy makes an array of dtype object."""
    return TypeError(
        f"asarray(): cannot make an array from {what}: it takes arrays, Python or NumPy numbers "
        "and (nested) sequences of them"
    )


def no_fill(function: str, value: object) -> TypeError:
    """The error ``full`` and ``full_like`` (``function``) raise for a fill ``value`` that is no
    number or bool (NumPy had made text or objects of a string or None)."""
    return TypeError(f"{function}() takes a Python bool, int, float or complex, not {type(value).__name__}")


def no_dlpack(x: object) -> AttributeError:
    """The error ``from_dlpack(x)`` raises for an ``x`` that has no ``__dlpack__`` (the standard
    asks for an AttributeError, as NumPy raises; torch had spoken of an invalid capsule)."""
    return AttributeError(f"from_dlpack() takes an object with __dlpack__ (an array), not {type(x).__name__}")


def indexed_axis(what: str, axis: int | None, ndim: int) -> int | None:
    """The axis along which ``take`` or ``take_along_axis`` (``what``: ``"take()"``) reads its
    indices in an array of ``ndim`` dimensions: ``axis``, or 0 for None in a 1-D array; None
    for None in any other (the call's own error says that it needs an axis). IndexError for an
    axis the array lacks."""
    if axis is None:
        return 0 if ndim == 1 else None
    if not -ndim <= axis < ndim:
        raise IndexError(f"{what}: axis {axis} is out of range for {ndim} dimensions")
    return axis


#: creation functions
CREATION_FUNCTIONS: tuple[str, ...] = (
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
)

#: data type functions
DATA_TYPE_FUNCTIONS: tuple[str, ...] = (
    "astype",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "result_type",
)

#: elementwise functions
ELEMENTWISE_FUNCTIONS: tuple[str, ...] = (
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_invert",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "divide",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "remainder",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "square",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "trunc",
)

#: indexing functions
INDEXING_FUNCTIONS: tuple[str, ...] = (
    "take",
    "take_along_axis",
)

#: linear algebra functions
LINEAR_ALGEBRA_FUNCTIONS: tuple[str, ...] = (
    "matmul",
    "matrix_transpose",
    "tensordot",
    "vecdot",
)

#: manipulation functions
MANIPULATION_FUNCTIONS: tuple[str, ...] = (
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
)

#: searching functions
SEARCHING_FUNCTIONS: tuple[str, ...] = (
    "argmax",
    "argmin",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "where",
)

#: set functions
SET_FUNCTIONS: tuple[str, ...] = (
    "isin",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
)

#: sorting functions
SORTING_FUNCTIONS: tuple[str, ...] = (
    "argsort",
    "sort",
)

#: statistical functions
STATISTICAL_FUNCTIONS: tuple[str, ...] = (
    "cumulative_sum",
    "cumulative_prod",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
)

#: utility functions
UTILITY_FUNCTIONS: tuple[str, ...] = (
    "all",
    "any",
    "diff",
)

#: constants
CONSTANTS: tuple[str, ...] = (
    "e",
    "inf",
    "nan",
    "newaxis",
    "pi",
)

#: dtype names by the kinds of ``isdtype`` and ``__array_namespace_info__().dtypes(kind=...)``
DTYPE_KINDS: dict[str, tuple[str, ...]] = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
DTYPE_KINDS["integral"] = DTYPE_KINDS["signed integer"] + DTYPE_KINDS["unsigned integer"]
DTYPE_KINDS["numeric"] = (
    DTYPE_KINDS["integral"] + DTYPE_KINDS["real floating"] + DTYPE_KINDS["complex floating"]
)

#: the 13 dtype names every namespace exposes, in the standard's order
DTYPES: tuple[str, ...] = DTYPE_KINDS["bool"] + DTYPE_KINDS["numeric"]

#: bits of each integer dtype, and the precision (bits of a real part) of each floating one;
#: float16, beyond the standard, promotes as NumPy promotes it
_INTEGER_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UNSIGNED_BITS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
_PRECISION = {"float16": 16, "float32": 32, "float64": 64, "complex64": 32, "complex128": 64}


def promote_names(a: str, b: str) -> str | None:
    """The standard's type promotion of the dtypes named ``a`` and ``b``: within a kind the
    wider one; a signed with an unsigned integer, the narrowest signed one that holds both
    (none holds uint64); real with complex floating, the complex one of the higher precision.
    None where the standard defines none: booleans with numbers, integers with floating dtypes
    (each library decides those), a signed integer with uint64."""
    if a == b:
        return a
    for family in (_INTEGER_BITS, _UNSIGNED_BITS):
        if a in family and b in family:
            return a if family[a] >= family[b] else b
    if a in _UNSIGNED_BITS:
        a, b = b, a
    if a in _INTEGER_BITS and b in _UNSIGNED_BITS:
        wide = max(_INTEGER_BITS[a], 2 * _UNSIGNED_BITS[b])
        return f"int{wide}" if wide <= 64 else None
    if a in _PRECISION and b in _PRECISION:
        bits = max(_PRECISION[a], _PRECISION[b])
        if a.startswith("complex") or b.startswith("complex"):
            return f"complex{2 * max(bits, 32)}"
        return f"float{bits}"
    return None


#: the linalg extension
LINALG: tuple[str, ...] = (
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
)

#: the fft extension
FFT: tuple[str, ...] = (
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
)

#: the parameters each function of the standard takes by keyword (positional-or-keyword and
#: keyword-only, from its signatures; a function missing here takes none), so that a
#: namespace that passes keywords on to a library with more of its own can refuse the rest
KEYWORDS: dict[str, tuple[str, ...]] = {
    "arange": ("stop", "step", "dtype", "device"),
    "asarray": ("dtype", "device", "copy"),
    "empty": ("shape", "dtype", "device"),
    "empty_like": ("dtype", "device"),
    "eye": ("k", "dtype", "device"),
    "from_dlpack": ("device", "copy"),
    "full": ("shape", "fill_value", "dtype", "device"),
    "full_like": ("fill_value", "dtype", "device"),
    "linspace": ("num", "dtype", "device", "endpoint"),
    "meshgrid": ("indexing",),
    "ones": ("shape", "dtype", "device"),
    "ones_like": ("dtype", "device"),
    "tril": ("k",),
    "triu": ("k",),
    "zeros": ("shape", "dtype", "device"),
    "zeros_like": ("dtype", "device"),
    "astype": ("copy", "device"),
    "isdtype": ("dtype", "kind"),
    "clip": ("min", "max"),
    "take": ("axis",),
    "take_along_axis": ("axis",),
    "tensordot": ("axes",),
    "vecdot": ("axis",),
    "broadcast_to": ("shape",),
    "concat": ("axis",),
    "expand_dims": ("axis",),
    "flip": ("axis",),
    "permute_dims": ("axes",),
    "repeat": ("axis",),
    "reshape": ("shape", "copy"),
    "roll": ("shift", "axis"),
    "squeeze": ("axis",),
    "stack": ("axis",),
    "unstack": ("axis",),
    "argmax": ("axis", "keepdims"),
    "argmin": ("axis", "keepdims"),
    "count_nonzero": ("axis", "keepdims"),
    "searchsorted": ("side", "sorter"),
    "isin": ("invert",),
    "argsort": ("axis", "descending", "stable"),
    "sort": ("axis", "descending", "stable"),
    "cumulative_sum": ("axis", "dtype", "include_initial"),
    "cumulative_prod": ("axis", "dtype", "include_initial"),
    "max": ("axis", "keepdims"),
    "mean": ("axis", "keepdims"),
    "min": ("axis", "keepdims"),
    "prod": ("axis", "dtype", "keepdims"),
    "std": ("axis", "correction", "keepdims"),
    "sum": ("axis", "dtype", "keepdims"),
    "var": ("axis", "correction", "keepdims"),
    "all": ("axis", "keepdims"),
    "any": ("axis", "keepdims"),
    "diff": ("axis", "n", "prepend", "append"),
    "linalg.cholesky": ("upper",),
    "linalg.cross": ("axis",),
    "linalg.diagonal": ("offset",),
    "linalg.matrix_norm": ("keepdims", "ord"),
    "linalg.matrix_rank": ("rtol",),
    "linalg.pinv": ("rtol",),
    "linalg.qr": ("mode",),
    "linalg.svd": ("full_matrices",),
    "linalg.tensordot": ("axes",),
    "linalg.trace": ("offset", "dtype"),
    "linalg.vecdot": ("axis",),
    "linalg.vector_norm": ("axis", "keepdims", "ord"),
    "fft.fft": ("n", "axis", "norm"),
    "fft.ifft": ("n", "axis", "norm"),
    "fft.fftn": ("s", "axes", "norm"),
    "fft.ifftn": ("s", "axes", "norm"),
    "fft.rfft": ("n", "axis", "norm"),
    "fft.irfft": ("n", "axis", "norm"),
    "fft.rfftn": ("s", "axes", "norm"),
    "fft.irfftn": ("s", "axes", "norm"),
    "fft.hfft": ("n", "axis", "norm"),
    "fft.ihfft": ("n", "axis", "norm"),
    "fft.fftfreq": ("d", "dtype", "device"),
    "fft.rfftfreq": ("d", "dtype", "device"),
    "fft.fftshift": ("axes",),
    "fft.ifftshift": ("axes",),
}

#: how many arguments each function of the standard (and each operator of its array, the array
#: first) takes by position, from its signatures (None: any number), so that a namespace passing
#: arguments on to a library that takes more by position (NumPy's ``take(a, indices, axis, out)``)
#: can refuse the rest
# fmt: off
POSITIONAL: dict[str, int | None] = {
    "__abs__": 1, "__add__": 2, "__and__": 2, "__eq__": 2, "__floordiv__": 2, "__ge__": 2,
    "__getitem__": 2, "__gt__": 2, "__invert__": 1, "__le__": 2, "__lshift__": 2, "__lt__": 2,
    "__matmul__": 2, "__mod__": 2, "__mul__": 2, "__ne__": 2, "__neg__": 1, "__or__": 2, "__pos__": 1,
    "__pow__": 2, "__rshift__": 2, "__setitem__": 3, "__sub__": 2, "__truediv__": 2, "__xor__": 2,
    "arange": 3, "asarray": 1, "empty": 1, "empty_like": 1, "eye": 2, "from_dlpack": 1, "full": 2,
    "full_like": 2, "linspace": 3, "meshgrid": None, "ones": 1, "ones_like": 1, "tril": 1, "triu": 1,
    "zeros": 1, "zeros_like": 1, "astype": 2, "can_cast": 2, "finfo": 1, "iinfo": 1, "isdtype": 2,
    "result_type": None, "abs": 1, "acos": 1, "acosh": 1, "add": 2, "asin": 1, "asinh": 1, "atan": 1,
    "atan2": 2, "atanh": 1, "bitwise_and": 2, "bitwise_left_shift": 2, "bitwise_invert": 1,
    "bitwise_or": 2, "bitwise_right_shift": 2, "bitwise_xor": 2, "ceil": 1, "clip": 3, "conj": 1,
    "copysign": 2, "cos": 1, "cosh": 1, "divide": 2, "equal": 2, "exp": 1, "expm1": 1, "floor": 1,
    "floor_divide": 2, "greater": 2, "greater_equal": 2, "hypot": 2, "imag": 1, "isfinite": 1,
    "isinf": 1, "isnan": 1, "less": 2, "less_equal": 2, "log": 1, "log1p": 1, "log2": 1, "log10": 1,
    "logaddexp": 2, "logical_and": 2, "logical_not": 1, "logical_or": 2, "logical_xor": 2,
    "maximum": 2, "minimum": 2, "multiply": 2, "negative": 1, "nextafter": 2, "not_equal": 2,
    "positive": 1, "pow": 2, "real": 1, "reciprocal": 1, "remainder": 2, "round": 1, "sign": 1,
    "signbit": 1, "sin": 1, "sinh": 1, "square": 1, "sqrt": 1, "subtract": 2, "tan": 1, "tanh": 1,
    "trunc": 1, "fft.fft": 1, "fft.ifft": 1, "fft.fftn": 1, "fft.ifftn": 1, "fft.rfft": 1,
    "fft.irfft": 1, "fft.rfftn": 1, "fft.irfftn": 1, "fft.hfft": 1, "fft.ihfft": 1, "fft.fftfreq": 1,
    "fft.rfftfreq": 1, "fft.fftshift": 1, "fft.ifftshift": 1, "take": 2, "take_along_axis": 2,
    "linalg.cholesky": 1, "linalg.cross": 2, "linalg.det": 1, "linalg.diagonal": 1, "linalg.eigh": 1,
    "linalg.eigvalsh": 1, "linalg.eig": 1, "linalg.eigvals": 1, "linalg.inv": 1, "linalg.matmul": 2,
    "linalg.matrix_norm": 1, "linalg.matrix_power": 2, "linalg.matrix_rank": 1,
    "linalg.matrix_transpose": 1, "linalg.outer": 2, "linalg.pinv": 1, "linalg.qr": 1,
    "linalg.slogdet": 1, "linalg.solve": 2, "linalg.svd": 1, "linalg.svdvals": 1,
    "linalg.tensordot": 2, "linalg.trace": 1, "linalg.vecdot": 2, "linalg.vector_norm": 1, "matmul": 2,
    "matrix_transpose": 1, "tensordot": 2, "vecdot": 2, "broadcast_arrays": None,
    "broadcast_shapes": None, "broadcast_to": 2, "concat": 1, "expand_dims": 2, "flip": 1,
    "moveaxis": 3, "permute_dims": 2, "repeat": 2, "reshape": 2, "roll": 2, "squeeze": 2, "stack": 1,
    "tile": 2, "unstack": 1, "argmax": 1, "argmin": 1, "count_nonzero": 1, "nonzero": 1,
    "searchsorted": 2, "where": 3, "isin": 2, "unique_all": 1, "unique_counts": 1, "unique_inverse": 1,
    "unique_values": 1, "argsort": 1, "sort": 1, "cumulative_prod": 1, "cumulative_sum": 1, "max": 1,
    "mean": 1, "min": 1, "prod": 1, "std": 1, "sum": 1, "var": 1, "all": 1, "any": 1, "diff": 1,
}
# fmt: on

#: attributes and methods of the array object
ARRAY_ATTRIBUTES: tuple[str, ...] = (
    "dtype",
    "device",
    "mT",
    "ndim",
    "shape",
    "size",
    "T",
    "to_device",
)

#: special methods of the array object
ARRAY_DUNDERS: tuple[str, ...] = (
    "__abs__",
    "__add__",
    "__and__",
    "__array_namespace__",
    "__bool__",
    "__complex__",
    "__dlpack__",
    "__dlpack_device__",
    "__eq__",
    "__float__",
    "__floordiv__",
    "__ge__",
    "__getitem__",
    "__gt__",
    "__index__",
    "__int__",
    "__invert__",
    "__le__",
    "__lshift__",
    "__lt__",
    "__matmul__",
    "__mod__",
    "__mul__",
    "__ne__",
    "__neg__",
    "__or__",
    "__pos__",
    "__pow__",
    "__rshift__",
    "__setitem__",
    "__sub__",
    "__truediv__",
    "__xor__",
)

#: every function of the main namespace, in the order of the spec's sections
FUNCTIONS: tuple[str, ...] = tuple(
    dict.fromkeys(
        CREATION_FUNCTIONS
        + DATA_TYPE_FUNCTIONS
        + ELEMENTWISE_FUNCTIONS
        + INDEXING_FUNCTIONS
        + LINEAR_ALGEBRA_FUNCTIONS
        + MANIPULATION_FUNCTIONS
        + SEARCHING_FUNCTIONS
        + SET_FUNCTIONS
        + SORTING_FUNCTIONS
        + STATISTICAL_FUNCTIONS
        + UTILITY_FUNCTIONS
    )
)


def dtype_names(kind: str | tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The dtype names of ``kind`` (a kind name, a tuple of them, or None for all 13), in the
    standard's order, each once; an unknown kind raises ``ValueError`` listing the known ones."""
    if kind is None:
        return DTYPES
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for name in kinds:
        if not isinstance(name, str) or name not in DTYPE_KINDS:
            raise ValueError(f"unknown dtype kind {name!r}: expected one of {', '.join(DTYPE_KINDS)}")
    return tuple(dict.fromkeys(n for name in kinds for n in DTYPE_KINDS[name]))


def namespace_names(*extra: str) -> list[str]:
    """The ``__all__`` of a whole namespace, sorted: every function, constant and dtype of the
    standard, the ``fft`` and ``linalg`` extensions, ``__array_namespace_info__`` and
    ``__array_api_version__``, and ``extra``, the backend's own names."""
    standard = {"fft", "linalg", "__array_namespace_info__", "__array_api_version__"}
    return sorted(standard.union(FUNCTIONS, CONSTANTS, DTYPES, extra))


@dataclass(frozen=True)
class finfo_object:  # noqa: N801  (the standard's name)
    """Machine limits of a floating dtype as Python numbers (NumPy's finfo gives NumPy scalars);
    ``dtype`` is the namespace's own dtype object."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: Any

    @classmethod
    def of(cls, info: Any, dtype: Any) -> finfo_object:
        """The limits a library's own finfo result ``info`` gives (NumPy, CuPy and PyTorch
        name them alike), as Python numbers, for the namespace's ``dtype``."""
        return cls(
            int(info.bits),
            float(info.eps),
            float(info.max),
            float(info.min),
            float(info.smallest_normal),
            dtype,
        )


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801  (the standard's name)
    """Machine limits of an integer dtype as Python ints; ``dtype`` is the namespace's own."""

    bits: int
    max: int
    min: int
    dtype: Any

    @classmethod
    def of(cls, info: Any, dtype: Any) -> iinfo_object:
        """The limits a library's own iinfo result ``info`` gives, as Python ints, for ``dtype``."""
        return cls(int(info.bits), int(info.max), int(info.min), dtype)


# -- results with several arrays: the standard's field names, one definition for every backend ----


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


#: the functions that return several arrays, by name, and the NamedTuple of their result
RESULT_TYPES: dict[str, type] = {
    "unique_all": UniqueAllResult,
    "unique_counts": UniqueCountsResult,
    "unique_inverse": UniqueInverseResult,
    "linalg.eig": EigResult,
    "linalg.eigh": EighResult,
    "linalg.qr": QRResult,
    "linalg.slogdet": SlogdetResult,
    "linalg.svd": SVDResult,
}
