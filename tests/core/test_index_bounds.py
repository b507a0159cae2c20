"""An integer index outside its axis raises IndexError on every backend (the GPU ones with
one message, naming the axis's length and the valid indices; ruda.host with NumPy's).

The standard leaves such indices unspecified. NumPy raises; CuPy wraps them around its axis,
and torch's ``take_along_dim`` reads them as flat offsets (another row's element), so code
written once read other elements on those backends without a word. ruda_wgpu flags one in the
kernel and raises at the next read, so each check reads its result back.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from ruda import spec
from ruda.testing import parametrize_backends

BACKENDS = ("host", "torch", "wgpu", "cuda")


def _matrix(xp):
    return xp.reshape(xp.arange(6, dtype=xp.float32), (2, 3))


def _index(xp, values, dtype="int64"):
    info = xp.__array_namespace_info__().dtypes()
    return xp.asarray(values, dtype=info.get(dtype, info["int32"]))


@parametrize_backends(*BACKENDS)
@pytest.mark.parametrize("bad", [3, -4, 100])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_take_and_take_along_axis_refuse_an_index_outside_the_axis(xp, bad, dtype):
    if bad < 0 and dtype.startswith("u"):
        pytest.skip("an unsigned index is never negative")
    x = _matrix(xp)
    message = r"out of bounds for axis \d with size 3|" + re.escape(spec.out_of_bounds("", 3)[2:])
    with pytest.raises(IndexError, match=message):
        np.asarray(xp.take(x, _index(xp, [0, bad], dtype), axis=1))
    # the bad index in the last row: torch had read past the axis into memory after the row
    with pytest.raises(IndexError, match=message):
        np.asarray(xp.take_along_axis(x, _index(xp, [[0], [bad]], dtype), axis=1))
    with pytest.raises(IndexError, match=message):
        np.asarray(xp.take(xp.arange(3), _index(xp, [bad], dtype)))


@parametrize_backends(*BACKENDS)
def test_an_index_array_outside_its_axis_raises_on_read_and_write(xp):
    """A write raises and writes nothing (CuPy had written the wrapped-around element)."""
    x = _matrix(xp)
    for key in [_index(xp, [2]), (1, _index(xp, [-4])), (Ellipsis, _index(xp, [0, 3]))]:
        with pytest.raises(IndexError, match="out of bounds"):
            np.asarray(x[key])
        with pytest.raises(IndexError, match="out of bounds"):
            x[key] = 7.0
            np.asarray(x)
    if xp.__name__ != "ruda_torch":  # (torch's tensors are its own: it writes the indices
        # inside the axis before it raises, a difference its README lists)
        np.testing.assert_array_equal(np.asarray(x), np.arange(6, dtype=np.float32).reshape(2, 3))


@parametrize_backends(*BACKENDS)
def test_indices_inside_the_axis_negative_ones_too_are_taken(xp):
    x = _matrix(xp)
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    rows = _index(xp, [[-1, 0], [2, -3]])
    np.testing.assert_array_equal(
        np.asarray(xp.take_along_axis(x, rows, axis=1)),
        np.take_along_axis(host, np.array([[-1, 0], [2, -3]]), axis=1),
    )
    np.testing.assert_array_equal(np.asarray(xp.take(x, _index(xp, [-3, 2]), axis=1)), host[:, [-3, 2]])
    np.testing.assert_array_equal(np.asarray(x[_index(xp, [-2, 1]), 1:]), host[[-2, 1], 1:])
    # a boolean mask takes its own axes, and the index array after it is checked against the next
    mask = xp.asarray([True, False])
    np.testing.assert_array_equal(np.asarray(x[mask, _index(xp, [2])]), host[[True, False], [2]])
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(x[mask, _index(xp, [3])])
    assert np.asarray(xp.take(x, _index(xp, []), axis=1)).shape == (2, 0)


@parametrize_backends(*BACKENDS)
def test_take_names_an_axis_the_array_lacks(xp):
    x = _matrix(xp)
    with pytest.raises(IndexError, match="axis"):
        xp.take(x, _index(xp, [0]), axis=2)
    with pytest.raises(IndexError, match="axis"):
        xp.take_along_axis(x, _index(xp, [[0]]), axis=-3)
