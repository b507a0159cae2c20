"""The fft extension against NumPy: every function, power-of-two and other lengths, every norm.

Tolerance: an FFT of length n in floating point has a relative error (to the largest output) of
about eps * log2(n); Bluestein's lengths (a prime factor above 13) go through three FFTs of twice
the length. The tests allow 64 eps, far below what a wrong twiddle, sign or ordering gives (an
error of order 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import parametrize_backends

pytestmark = parametrize_backends("wgpu")

COMPLEX = [d for d in ("complex64", "complex128") if d in ruda_wgpu.__array_namespace_info__().dtypes()]
NORMS = ("backward", "ortho", "forward")


def _close(got, want, dtype) -> None:
    """``got`` has ``dtype`` and the shape of ``want``, and matches it within 64 eps (relative)."""
    host = np.asarray(got)
    assert host.shape == want.shape, (host.shape, want.shape)
    assert host.dtype == np.dtype(dtype), (host.dtype, dtype)
    err = np.abs(host - want).max(initial=0) / max(np.abs(want).max(initial=0), np.finfo(dtype).tiny)
    assert err < 64 * np.finfo(dtype).eps, f"relative error {err:.2e}"


def _signal(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize(
    "n", [1, 2, 8, 64, 1024, 4096, 8192, 1 << 16, 3, 5, 12, 100, 1000, 30030, 3 << 14, 4099, 34, 17 * 19]
)
def test_fft_and_ifft_of_every_kind_of_length(xp, dtype, n):
    host = _signal((3, n), dtype)
    x = xp.asarray(host)
    wide = host.astype(np.complex128)
    _close(xp.fft.fft(x), np.fft.fft(wide).astype(dtype), dtype)
    _close(xp.fft.ifft(x), np.fft.ifft(wide).astype(dtype), dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [17, 97, 4099])
def test_bluestein_lengths_keep_large_values_in_range(xp, dtype, n):
    """Values whose DFT is within range: Bluestein's inverse FFT takes its 1 / m before its sums,
    not after (the DFT of 4099 values of 1e31 in float32, 4.1e34, had been NaN; the largest
    values it kept finite were 2e34 at n = 4099, 5e36 at n = 17)."""
    big = float(np.finfo(dtype).max) / (8 * n)
    host = (np.full((2, n), big) * np.array([[1.0], [-0.5j]])).astype(dtype)
    wide = host.astype(np.complex128)
    _close(xp.fft.fft(xp.asarray(host)), np.fft.fft(wide).astype(dtype), dtype)
    _close(xp.fft.ifft(xp.asarray(host)), np.fft.ifft(wide).astype(dtype), dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("norm", NORMS)
def test_complex_transforms_axes_lengths_and_norms(xp, dtype, norm):
    host = _signal((3, 6, 10), dtype, seed=1)
    x = xp.asarray(host)
    _close(xp.fft.fft(x, n=7, axis=1, norm=norm), np.fft.fft(host, n=7, axis=1, norm=norm), dtype)
    _close(xp.fft.ifft(x, n=16, axis=0, norm=norm), np.fft.ifft(host, n=16, axis=0, norm=norm), dtype)
    _close(xp.fft.fftn(x, norm=norm), np.fft.fftn(host, norm=norm), dtype)
    s, axes = (4, 12), (0, 2)
    _close(xp.fft.ifftn(x, s=s, axes=axes, norm=norm), np.fft.ifftn(host, s=s, axes=axes, norm=norm), dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("norm", NORMS)
def test_real_and_hermitian_transforms(xp, dtype, norm):
    real = {"complex64": "float32", "complex128": "float64"}[dtype]
    r, c = _signal((3, 6, 10), real, seed=2), _signal((3, 6, 10), dtype, seed=3)
    y, x = xp.asarray(r), xp.asarray(c)
    _close(xp.fft.rfft(y, n=9, norm=norm), np.fft.rfft(r, n=9, norm=norm), dtype)
    _close(xp.fft.irfft(x, norm=norm), np.fft.irfft(c, norm=norm), real)
    _close(xp.fft.irfft(x, n=7, axis=0, norm=norm), np.fft.irfft(c, n=7, axis=0, norm=norm), real)
    _close(xp.fft.rfftn(y, norm=norm), np.fft.rfftn(r, norm=norm), dtype)
    _close(xp.fft.irfftn(x, norm=norm), np.fft.irfftn(c, norm=norm), real)
    s, axes = (5, 9), (0, 1)
    _close(xp.fft.irfftn(x, s=s, axes=axes, norm=norm), np.fft.irfftn(c, s=s, axes=axes, norm=norm), real)
    # s of -1: the axis's own length, and for the last axis 2 (m - 1), as with no s (the standard)
    kept = np.fft.irfftn(c, s=(3, 18), axes=(0, 2), norm=norm)
    _close(xp.fft.irfftn(x, s=(-1, -1), axes=(0, 2), norm=norm), kept, real)
    _close(xp.fft.hfft(x, norm=norm), np.fft.hfft(c, norm=norm), real)
    _close(xp.fft.ihfft(y, norm=norm), np.fft.ihfft(r, norm=norm), dtype)
    assert xp.fft.rfft(y).dtype == getattr(xp, dtype)
    assert xp.fft.irfft(x).dtype == getattr(xp, real)


@pytest.mark.parametrize(
    "radix, threads, register_radix", [(1024, 256, 16), (256, 128, 16), (64, 64, 4), (4096, 512, 32)]
)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_every_pass_layout_gives_the_same_transform(xp, dtype, radix, threads, register_radix, monkeypatch):
    """Pass layouts a GPU may use, here on whatever adapter runs the tests: one to three stages a
    pass, first stages of every radix, workgroups of one DFT or many, several passes a length."""
    from ruda_wgpu import _fft

    monkeypatch.setattr(_fft, "MAX_RADIX", radix)
    monkeypatch.setattr(_fft, "THREADS", threads)
    monkeypatch.setattr(_fft, "REGISTER_RADIX", register_radix)
    # a pass's DFT must fit workgroup memory, whatever radix is asked for (a 4096-point complex128
    # DFT is 64 KiB: the H200's driver hung on such a kernel)
    room = int(xp.__array_namespace_info__().default_device().limits["max-compute-workgroup-storage-size"])
    planned = _fft._radices

    def radices(n: int, max_radix: int) -> list[int]:
        assert max_radix * np.dtype(dtype).itemsize <= room
        return planned(n, max_radix)

    monkeypatch.setattr(_fft, "_radices", radices)
    monkeypatch.setattr(_fft, "_wide_passes", lambda dev: False)  # the radices asked for, on GPUs too
    _fft._plan.cache_clear()
    try:
        for n in (2, 16, 1 << 9, 1 << 12, 1 << 15):
            host = _signal((3, n), dtype, seed=n)  # 3 rows: workgroups left part-full
            wide = host.astype(np.complex128)
            _close(xp.fft.fft(xp.asarray(host)), np.fft.fft(wide).astype(dtype), dtype)
            want = np.fft.ifft(wide, norm="ortho").astype(dtype)
            _close(xp.fft.ifft(xp.asarray(host), norm="ortho"), want, dtype)
    finally:
        _fft._plan.cache_clear()


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("wide", [False, True])
def test_lengths_of_two_wide_passes_or_three(xp, dtype, wide, monkeypatch):
    """2^17 to 2^20 points: two passes of up to 1024 points on GPUs (up to 2^20 points in all),
    three elsewhere; both here."""
    from ruda_wgpu import _fft

    monkeypatch.setattr(_fft, "_wide_passes", lambda dev: wide)
    _fft._plan.cache_clear()
    dev = xp.__array_namespace_info__().default_device()
    try:
        assert len(_fft._plan(dev, 4, 1 << 19, np.dtype(dtype), False, 1.0).passes) == 3  # 2^21 in all
        for n in (1 << 17, 1 << 19):
            plan = _fft._plan(dev, 2, n, np.dtype(dtype), False, 1.0)
            assert len(plan.passes) == (2 if wide else 3)
            host = _signal((2, n), dtype, seed=n)
            wide_host = host.astype(np.complex128)
            _close(xp.fft.fft(xp.asarray(host)), np.fft.fft(wide_host).astype(dtype), dtype)
            _close(xp.fft.ifft(xp.asarray(host)), np.fft.ifft(wide_host).astype(dtype), dtype)
    finally:
        _fft._plan.cache_clear()


#: every radix up to 32 that is not a power of two and whose prime factors are at most 13
MIXED_RADICES = [r for r in range(3, 33) if r & (r - 1) and r not in (17, 19, 23, 29, 31)]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_each_mixed_radix_and_a_forced_split_into_small_radices(xp, dtype, monkeypatch):
    """One pass of each radix the mixed-radix FFT makes (its straight-line DFT), then lengths
    split into many small radices, so that many pass strides and twiddle steps show."""
    from ruda_wgpu import _fft

    for n in MIXED_RADICES:
        host = _signal((3, n), dtype, seed=n)
        wide = host.astype(np.complex128)
        _close(xp.fft.fft(xp.asarray(host)), np.fft.fft(wide).astype(dtype), dtype)
        _close(xp.fft.ifft(xp.asarray(host)), np.fft.ifft(wide).astype(dtype), dtype)
    # (a prime above the bound is a radix of its own)
    for most, n, radices in (
        (4, 2 * 3 * 5 * 7, [7, 5, 3, 2]),
        (6, 6**4, [6, 6, 6, 6]),
        (6, 360, [6, 6, 5, 2]),
    ):
        monkeypatch.setattr(_fft, "MAX_MIXED_RADIX", most)
        monkeypatch.setattr(_fft, "MAX_MIXED_RADIX_128", most)
        assert _fft._mixed_radices(n, most) == radices
        _fft._mixed_plan.cache_clear()
        try:
            host = _signal((2, n), dtype, seed=n)
            wide = host.astype(np.complex128)
            _close(xp.fft.fft(xp.asarray(host)), np.fft.fft(wide).astype(dtype), dtype)
            _close(
                xp.fft.ifft(xp.asarray(host), norm="ortho"),
                np.fft.ifft(wide, norm="ortho").astype(dtype),
                dtype,
            )
        finally:
            _fft._mixed_plan.cache_clear()


def test_lengths_of_small_primes_skip_bluestein(xp, monkeypatch):
    """10^6 (2^6 5^6) and 3 x 2^14 take mixed-radix passes; 17 and 2 x 4099 need Bluestein."""
    from ruda_wgpu import _fft

    taken = []
    bluestein = _fft._bluestein
    monkeypatch.setattr(_fft, "_bluestein", lambda x, *a: taken.append(x.shape[-1]) or bluestein(x, *a))
    for n in (10**6, 3 << 14, 13**2, 17, 2 * 4099):
        host = _signal((n,), "complex64", seed=n)
        _close(
            xp.fft.fft(xp.asarray(host)),
            np.fft.fft(host.astype(np.complex128)).astype("complex64"),
            "complex64",
        )
    assert taken == [17, 2 * 4099]
    for most, passes in ((_fft.MAX_MIXED_RADIX, 4), (_fft.MAX_MIXED_RADIX_128, 5)):
        radices = _fft._mixed_radices(10**6, most)
        assert np.prod(radices) == 10**6 and max(radices) <= most and len(radices) == passes


@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_transforms_of_even_lengths_through_half_length_ones(xp, dtype):
    """Even lengths of every kind (two points, powers of two, small primes, Bluestein's) through
    the half-length complex transform, along either axis, from a view starting at an odd
    element, and irfft ignoring the imaginary parts of the first and last frequencies."""
    real = {"complex64": "float32", "complex128": "float64"}[dtype]
    for n in (2, 4, 6, 1 << 12, 1000, 2 * 4099):
        r = _signal((3, n + 1), real, seed=n)
        for first in (0, 1):  # an even and an odd first element in the buffer
            host, y = r[:, first : first + n], xp.asarray(r)[:, first : first + n]
            _close(xp.fft.rfft(y), np.fft.rfft(host), dtype)
            _close(xp.fft.rfft(y, axis=0, n=4), np.fft.rfft(host, axis=0, n=4), dtype)
            _close(xp.fft.rfft(xp.asarray(r[0])[first : first + n]), np.fft.rfft(host[0]), dtype)  # a view
        spectrum = np.fft.rfft(r[:, :n]).astype(dtype)
        spectrum[:, 0] += 0.25j
        spectrum[:, -1] -= 0.5j
        _close(xp.fft.irfft(xp.asarray(spectrum), n=n), np.fft.irfft(spectrum, n=n), real)
        _close(
            xp.fft.irfft(xp.asarray(spectrum.T), n=n, axis=0, norm="ortho"),
            np.fft.irfft(spectrum.T, n=n, axis=0, norm="ortho"),
            real,
        )
    empty = xp.asarray(np.zeros((0, 8), real))
    assert xp.fft.rfft(empty).shape == (0, 5) and xp.fft.irfft(xp.fft.rfft(empty)).shape == (0, 8)


def test_round_trip_of_a_long_signal(xp):
    host = _signal((1 << 20,), "complex64", seed=4)
    back = np.asarray(xp.fft.ifft(xp.fft.fft(xp.asarray(host))))
    assert np.abs(back - host).max() < 1e-5


def test_frequencies_and_shifts(xp):
    for n, d in ((7, 0.5), (8, 1.0), (1, 3.0)):
        np.testing.assert_allclose(np.asarray(xp.fft.fftfreq(n, d=d)), np.fft.fftfreq(n, d=d), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(xp.fft.rfftfreq(n, d=d)), np.fft.rfftfreq(n, d=d), rtol=1e-6)
    assert xp.fft.fftfreq(4).dtype == xp.float32
    host = _signal((3, 4, 5), "float32", seed=5)
    x = xp.asarray(host)
    np.testing.assert_array_equal(np.asarray(xp.fft.fftshift(x)), np.fft.fftshift(host))
    np.testing.assert_array_equal(
        np.asarray(xp.fft.ifftshift(x, axes=(0, 2))), np.fft.ifftshift(host, axes=(0, 2))
    )
    np.testing.assert_array_equal(np.asarray(xp.fft.fftshift(x, axes=1)), np.fft.fftshift(host, axes=1))


def test_bad_input_says_what_is_wrong(xp):
    x = xp.asarray(_signal((4,), "complex64"))
    with pytest.raises(ValueError, match="norm"):
        xp.fft.fft(x, norm="sideways")
    with pytest.raises(ValueError, match="positive integer"):
        xp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="out of range"):
        xp.fft.fft(x, axis=1)
    with pytest.raises(TypeError, match="real floating-point"):
        xp.fft.rfft(x)
    with pytest.raises(TypeError, match="floating-point"):
        xp.fft.fft(xp.asarray([1, 2, 3]))
    with pytest.raises(ValueError, match="same length"):
        xp.fft.fftn(x, s=(4, 4), axes=(0,))
    with pytest.raises(ValueError, match="s has 2 lengths for an array of 1 dimensions"):
        xp.fft.fftn(x, s=(4, 4))
    with pytest.raises(TypeError, match="sequence of ints"):
        xp.fft.fftn(x, s=4)
    with pytest.raises(TypeError, match="integer"):
        xp.fft.fftshift(x, axes=1.0)
    with pytest.raises(ValueError, match="at least one axis"):
        xp.fft.rfftn(xp.real(x), axes=())


@pytest.mark.parametrize(
    "name", ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft"]
)
def test_an_unknown_norm_names_the_transform(xp, name):
    """An unknown norm is a ValueError that names the transform called and the norms there are."""
    x = xp.asarray(_signal((4,), "float32" if name in ("rfft", "ihfft", "rfftn") else "complex64"))
    for norm in ("sideways", None, ["ortho"]):
        with pytest.raises(
            ValueError, match=rf"^fft\.{name}\(\): norm must be 'backward', 'ortho' or 'forward'"
        ):
            getattr(xp.fft, name)(x, norm=norm)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "fftn", "rfftn"])
def test_a_transform_of_no_points_raises_as_numpy_does(xp, name):
    """A transform along an empty axis has no value (NumPy raises): a clear error, where the
    scale 1/n divided by zero or the real transform's kernel made NaN. Other axes may be empty."""
    dtype = "float32" if name in ("rfft", "ihfft", "rfftn") else "complex64"

    def along(module: Any, x: Any, axis: int) -> Any:
        transform = getattr(module, name)
        return transform(x, axes=(axis,)) if name.endswith("n") else transform(x, axis=axis)

    with pytest.raises(ValueError, match="axis 0 of shape \\(0, 4\\) is empty"):
        along(xp.fft, xp.zeros((0, 4), dtype=getattr(xp, dtype)), 0)
    rows = along(xp.fft, xp.zeros((0, 4), dtype=getattr(xp, dtype)), 1)
    assert rows.shape == along(np.fft, np.zeros((0, 4), dtype), 1).shape


@pytest.mark.parametrize("n", [256, 4096, 1000])  # one pass, two passes, mixed radices
def test_prepared_passes_follow_the_input_and_the_pooled_outputs(xp, n):
    """A transform's dispatches are prepared once per input buffer and offset and output buffers:
    rows of one buffer at other offsets, new data in a buffer seen before, and outputs that come
    round again from the pool all transform as NumPy does."""
    h = _signal((3, n), "complex64", seed=4)
    a = xp.asarray(h)
    for _ in range(2):
        for k in range(3):  # the same buffer at offsets 0, n, 2n
            _close(xp.fft.fft(a[k]), np.fft.fft(h[k]), "complex64")
    for seed in range(3):  # new data in pooled buffers
        g = _signal(n, "complex64", seed=seed)
        _close(xp.fft.ifft(xp.asarray(g)), np.fft.ifft(g), "complex64")


def test_prepared_ffts_follow_buffers_and_are_dropped_by_empty_cache(xp):
    """An FFT's passes are prepared once per input buffer and offset and output buffers: rows
    at other offsets of one buffer, results alive together and rounds on pooled buffers that
    come round again all compute what they should; empty_cache() drops the prepared passes
    (they bind pooled buffers it destroys), and the next FFT prepares them again."""
    base = _signal((4, 256), "complex64")
    x = xp.asarray(base)
    dev = x.device
    for _ in range(2):
        results = [xp.fft.fft(x[k]) for k in range(4)]
        for k, got in enumerate(results):
            _close(got, np.fft.fft(base[k]), "complex64")
    kept = [sig for sig in dev.plans if sig[0] == "fft"]
    assert kept and sum(len(dev.plans[sig]) for sig in kept) >= 4
    xp.empty_cache()
    assert not [sig for sig in dev.plans if sig[0] == "fft"]
    _close(xp.fft.fft(x[1]), np.fft.fft(base[1]), "complex64")
