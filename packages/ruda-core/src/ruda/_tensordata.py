"""``TensorData``: an array as plain host bytes, the lingua franca between backends.

Every backend can turn its arrays into a ``TensorData`` and back, so any two
backends can exchange data even when they share no memory and no DLPack
device. The bytes are C-contiguous, native-endian, and their length is checked
against shape and dtype on the way in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ruda.spec import DTYPE_KINDS

#: The Array API's dtypes by name, and float16 (NumPy has it, and so does ruda_wgpu).
#: bfloat16 has no NumPy dtype and is not carried.
DTYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(name)
    for name in (
        *DTYPE_KINDS["bool"],
        *DTYPE_KINDS["integral"],
        "float16",
        *DTYPE_KINDS["real floating"],
        *DTYPE_KINDS["complex floating"],
    )
}


@dataclass(frozen=True)
class TensorData:
    """Shape, dtype name and C-contiguous native-endian bytes of an array."""

    shape: tuple[int, ...]
    dtype: str
    data: bytes | memoryview

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"unsupported dtype {self.dtype!r}: expected one of {', '.join(DTYPES)}")
        shape = tuple(self.shape)
        if not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ValueError(f"invalid shape {self.shape!r}: expected non-negative integers")
        object.__setattr__(self, "shape", shape)
        expected = math.prod(shape) * DTYPES[self.dtype].itemsize
        if len(memoryview(self.data).cast("B")) != expected:
            raise ValueError(
                f"TensorData of shape {shape} and dtype {self.dtype} needs {expected} bytes, "
                f"got {memoryview(self.data).nbytes}"
            )

    @property
    def nbytes(self) -> int:
        return memoryview(self.data).nbytes

    @classmethod
    def from_array(cls, x: Any) -> TensorData:
        """Capture any array: a NumPy array, anything with host DLPack or the buffer protocol,
        or a device array whose ``__dlpack__`` can copy to the host."""
        host = to_numpy(x)
        if host.dtype.name not in DTYPES:
            raise TypeError(f"arrays of dtype {host.dtype} cannot be carried as TensorData")
        host = np.asarray(host, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
        if not host.dtype.isnative:
            host = host.astype(host.dtype.newbyteorder("="))
        return cls(host.shape, host.dtype.name, host.reshape(-1).view(np.uint8).data)

    def to_numpy(self) -> np.ndarray:
        """A NumPy array over the same bytes (read-only when the bytes are)."""
        return np.frombuffer(self.data, dtype=DTYPES[self.dtype]).reshape(self.shape)


def to_numpy(x: Any) -> np.ndarray:
    """Bring an array of any backend to a NumPy array on the host.

    Order: a NumPy array as is; DLPack (zero-copy for host memory); DLPack with
    a copy to the CPU (device arrays that support it); the buffer protocol; ``__array__``
    (whose own error, such as a remote array's failed operation, is raised as it is).
    Anything else raises ``TypeError`` naming the type, never a guess.
    """
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        from ruda._registry import exporting  # which imports this module

        with exporting(x):
            try:
                return np.from_dlpack(x)
            except (BufferError, RuntimeError, TypeError, ValueError):
                try:
                    return np.from_dlpack(x, device="cpu", copy=True)
                except (BufferError, RuntimeError, TypeError, ValueError) as err:
                    dlpack_error: Exception | None = err
    else:
        dlpack_error = None
    try:
        return np.asarray(memoryview(x))
    except TypeError:
        pass
    if hasattr(x, "__array__"):
        return np.asarray(x)
    detail = f" (DLPack said: {dlpack_error})" if dlpack_error else ""
    raise TypeError(
        f"cannot read an array of type {type(x).__module__}.{type(x).__qualname__} on the host: "
        f"it supports neither host DLPack nor the buffer protocol{detail}"
    )
