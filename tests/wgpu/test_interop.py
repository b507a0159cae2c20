"""SciPy (array API mode) and scikit-learn (array_api_dispatch) on ruda_wgpu arrays.

Each test runs a library function on a wgpu array and on the same NumPy array, and checks that
the result stays a wgpu array (the library computed through our namespace, not on a NumPy copy)
and matches NumPy's to float32 accuracy. SciPy reads SCIPY_ARRAY_API when first imported; the
tests' conftest sets it.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import parametrize_backends

from tests.wgpu.dtype_support import needs

scipy = pytest.importorskip("scipy")
sklearn = pytest.importorskip("sklearn")
for _module in ("fft", "linalg", "signal", "special", "stats"):
    importlib.import_module(f"scipy.{_module}")

pytestmark = parametrize_backends("wgpu")

RNG = np.random.default_rng(0)
MATRIX = RNG.standard_normal((60, 5)).astype(np.float32)
SIGNAL = RNG.standard_normal(64).astype(np.float32)
TARGET = (MATRIX @ np.arange(1, 6, dtype=np.float32) + 0.1 * RNG.standard_normal(60)).astype(np.float32)
LABELS = (MATRIX[:, 0] + MATRIX[:, 1] > 0).astype(np.int64)

NEEDS_INT64 = needs("int64", why="scikit-learn makes int64 arrays on its input's device")


def _same(fn, *hosts, rtol=2e-5, keeps_namespace=True):
    """``fn`` on wgpu copies of ``hosts`` equals ``fn`` on the NumPy arrays."""
    from scipy._lib._array_api import SCIPY_ARRAY_API

    assert SCIPY_ARRAY_API, "SciPy was imported before SCIPY_ARRAY_API=1 was set"
    want = fn(*hosts)
    got = fn(*(ruda_wgpu.asarray(h) for h in hosts))
    if keeps_namespace:
        assert isinstance(got, ruda_wgpu.Array), f"the result is a {type(got).__name__}, not a wgpu array"
    got_host, want_host = np.asarray(got), np.asarray(want)
    wide = np.complex128 if "c" in (got_host.dtype.kind, want_host.dtype.kind) else np.float64
    got_host, want_host = got_host.astype(wide), want_host.astype(wide)
    assert got_host.shape == want_host.shape
    scale = max(float(np.abs(want_host).max(initial=0)), 1.0)
    np.testing.assert_allclose(got_host, want_host, rtol=rtol, atol=rtol * scale)


SCIPY_CASES = {
    "special.softmax": (lambda x: scipy.special.softmax(x, axis=1), MATRIX),
    "special.logsumexp": (lambda x: scipy.special.logsumexp(x, axis=0), MATRIX),
    "special.xlogy": (lambda x: scipy.special.xlogy(x, x * x + 1), MATRIX),
    "stats.zscore": (lambda x: scipy.stats.zscore(x, axis=0), MATRIX),
    "stats.skew": (lambda x: scipy.stats.skew(x, axis=0), MATRIX),
    "stats.kurtosis": (lambda x: scipy.stats.kurtosis(x, axis=0), MATRIX),
    "stats.pearsonr": (lambda x: scipy.stats.pearsonr(x[:, 0], x[:, 1]).statistic, MATRIX),
    "stats.ttest_ind": (lambda x: scipy.stats.ttest_ind(x[:, 0], x[:, 1]).statistic, MATRIX),
    "signal.convolve": (lambda s: scipy.signal.convolve(s, s[:5]), SIGNAL),
    "signal.fftconvolve": (lambda s: scipy.signal.fftconvolve(s, s[:9]), SIGNAL),
    "signal.detrend": (lambda s: scipy.signal.detrend(s), SIGNAL),
    "fft.fft": (lambda s: scipy.fft.fft(s), SIGNAL),
    "fft.irfft(rfft)": (lambda s: scipy.fft.irfft(scipy.fft.rfft(s)), SIGNAL),
    "fft.fftn": (lambda x: scipy.fft.fftn(x), MATRIX),
    "linalg.orthogonal_procrustes": (
        lambda x: scipy.linalg.orthogonal_procrustes(x[:, :3], x[:, 1:4])[0],
        MATRIX,
    ),
    "linalg.block_diag": (lambda x: scipy.linalg.block_diag(x[:2, :2], x[2:5, :3]), MATRIX),
}


@pytest.mark.parametrize("name", SCIPY_CASES)
def test_scipy(xp, name):
    fn, host = SCIPY_CASES[name]
    _same(fn, host, rtol=2e-4 if name.startswith("linalg") else 2e-5)


def _sklearn(fn):
    def run(*args):
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*args)

    return run


def test_sklearn_pca(xp):
    from sklearn.decomposition import PCA

    # components have no sign: compare magnitudes
    for solver in ("full", "covariance_eigh"):
        _same(
            _sklearn(lambda x, solver=solver: abs(PCA(n_components=3, svd_solver=solver).fit_transform(x))),
            MATRIX,
            rtol=2e-4,
        )


def test_sklearn_ridge(xp):
    from sklearn.linear_model import Ridge

    _same(_sklearn(lambda x, y: Ridge(alpha=1.0, solver="svd").fit(x, y).coef_), MATRIX, TARGET, rtol=1e-4)
    _same(
        _sklearn(lambda x, y: Ridge(alpha=0.1, solver="svd").fit(x, y).predict(x)), MATRIX, TARGET, rtol=1e-4
    )


@NEEDS_INT64
def test_sklearn_linear_discriminant_analysis(xp):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    _same(
        _sklearn(lambda x, c: LinearDiscriminantAnalysis().fit(x, c).predict_proba(x)),
        MATRIX,
        LABELS,
        rtol=1e-4,
    )


@NEEDS_INT64
def test_sklearn_scalers(xp):
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    _same(_sklearn(lambda x: StandardScaler().fit_transform(x)), MATRIX)
    _same(_sklearn(lambda x: MinMaxScaler().fit_transform(x)), MATRIX)


@NEEDS_INT64
def test_sklearn_metrics(xp):
    from sklearn import metrics

    # scores are Python floats; the matrices stay on the device
    _same(_sklearn(lambda y: metrics.r2_score(y, y * 0.9)), TARGET, keeps_namespace=False)
    _same(_sklearn(lambda y: metrics.mean_squared_error(y, y * 0.9)), TARGET, keeps_namespace=False)
    _same(_sklearn(lambda c: metrics.confusion_matrix(c, c[::-1])), LABELS)
    _same(_sklearn(lambda x: metrics.pairwise.euclidean_distances(x[:5], x[5:9])), MATRIX)
