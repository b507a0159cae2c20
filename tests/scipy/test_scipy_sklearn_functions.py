"""SciPy (array API mode) and scikit-learn (array_api_dispatch) functions on the four ruda
namespaces, each compared with the same function on NumPy arrays.

A case passes when the result comes back as an array of the namespace it was given (the library
worked through our namespace, not on a NumPy copy it kept) and equals NumPy's result. Where a
namespace cannot pass, the case is a strict xfail whose reason names the cause, so a fix shows up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import ruda

from tests.scipy import ruda_namespaces

scipy = pytest.importorskip("scipy")
sklearn = pytest.importorskip("sklearn")
for _module in (
    "cluster.vq", "fft", "integrate", "interpolate", "ndimage", "optimize.elementwise", "signal",
    "spatial.transform", "special", "stats",
):  # fmt: skip
    importlib.import_module(f"scipy.{_module}")
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, StandardScaler  # noqa: E402

RNG = np.random.default_rng(0)
MATRIX = RNG.standard_normal((20, 4))
POSITIVE = RNG.uniform(0.1, 2.0, (20, 4))
SIGNAL = RNG.standard_normal(32)
IMAGE = RNG.standard_normal((8, 9))
LABELS = (MATRIX[:, 0] + MATRIX[:, 1] > 0).astype(np.int64)
PREDICTED = (MATRIX[:, 0] > 0).astype(np.int64)
PROBS = POSITIVE / POSITIVE.sum(axis=0)
SQUARE = MATRIX[:4] + 4 * np.eye(4)
GRID = np.linspace(0.0, 1.0, 10)


def _sk(make: Callable[[], Any], method: str) -> Callable[..., Any]:
    """An estimator's ``method`` (fit_transform, or fit then ``method``) under array_api_dispatch."""

    def run(*arrays: Any) -> Any:
        with sklearn.config_context(array_api_dispatch=True):
            est = make()
            if method == "fit_transform":
                return est.fit_transform(*arrays)
            return getattr(est.fit(*arrays), method)(arrays[0])

    return run


def _metric(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*arrays: Any) -> Any:
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*arrays)

    return run


#: name -> (function of arrays, NumPy inputs, whether the result must be an array of the namespace)
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], bool]] = {
    "special.erf": (lambda x: scipy.special.erf(x), (MATRIX,), True),
    "special.erfc": (lambda x: scipy.special.erfc(x), (MATRIX,), True),
    "special.gammaln": (lambda x: scipy.special.gammaln(x), (POSITIVE,), True),
    "special.expit": (lambda x: scipy.special.expit(x), (MATRIX,), True),
    "special.logit": (lambda x: scipy.special.logit(x / 3.0), (POSITIVE,), True),
    "special.xlogy": (lambda x, y: scipy.special.xlogy(x, y), (MATRIX, POSITIVE), True),
    "special.entr": (lambda x: scipy.special.entr(x), (POSITIVE,), True),
    "special.ndtr": (lambda x: scipy.special.ndtr(x), (MATRIX,), True),
    "special.i0": (lambda x: scipy.special.i0(x), (MATRIX,), True),
    "special.softmax": (lambda x: scipy.special.softmax(x, axis=1), (MATRIX,), True),
    "special.logsumexp": (lambda x: scipy.special.logsumexp(x, axis=0), (MATRIX,), True),
    "special.logsumexp (all axes)": (lambda x: scipy.special.logsumexp(x), (MATRIX,), True),
    "stats.skew": (lambda x: scipy.stats.skew(x, axis=0), (MATRIX,), True),
    "stats.kurtosis": (lambda x: scipy.stats.kurtosis(x, axis=0), (MATRIX,), True),
    "stats.moment": (lambda x: scipy.stats.moment(x, order=3, axis=0), (MATRIX,), True),
    "stats.sem": (lambda x: scipy.stats.sem(x, axis=0), (MATRIX,), True),
    "stats.variation": (lambda x: scipy.stats.variation(x, axis=0), (POSITIVE,), True),
    "stats.entropy": (lambda p: scipy.stats.entropy(p, axis=0), (PROBS,), True),
    "stats.zscore": (lambda x: scipy.stats.zscore(x, axis=0), (MATRIX,), True),
    "stats.gmean": (lambda x: scipy.stats.gmean(x, axis=0), (POSITIVE,), True),
    "stats.describe": (lambda x: scipy.stats.describe(x, axis=0).variance, (MATRIX,), True),
    "stats.ttest_ind": (lambda x: scipy.stats.ttest_ind(x[:, 0], x[:, 1]).statistic, (MATRIX,), True),
    "stats.pearsonr": (lambda x: scipy.stats.pearsonr(x[:, 0], x[:, 1]).statistic, (MATRIX,), True),
    "signal.convolve": (lambda s: scipy.signal.convolve(s, s[:5]), (SIGNAL,), True),
    "signal.fftconvolve": (lambda s: scipy.signal.fftconvolve(s, s[:9]), (SIGNAL,), True),
    "signal.correlate": (lambda s: scipy.signal.correlate(s, s[:5]), (SIGNAL,), True),
    "signal.detrend": (lambda s: scipy.signal.detrend(s), (SIGNAL,), True),
    "signal.welch": (lambda s: scipy.signal.welch(s, nperseg=16)[1], (SIGNAL,), True),
    "fft.rfft": (lambda s: scipy.fft.rfft(s), (SIGNAL,), True),
    "fft.dct": (lambda s: scipy.fft.dct(s), (SIGNAL,), True),
    "ndimage.gaussian_filter": (lambda a: scipy.ndimage.gaussian_filter(a, 1.0), (IMAGE,), True),
    "ndimage.uniform_filter": (lambda a: scipy.ndimage.uniform_filter(a, 3), (IMAGE,), True),
    "ndimage.zoom": (lambda a: scipy.ndimage.zoom(a, 2, order=1), (IMAGE,), True),
    "ndimage.median_filter": (lambda a: scipy.ndimage.median_filter(a, 3), (IMAGE,), True),
    "interpolate.make_interp_spline": (
        lambda x, y: scipy.interpolate.make_interp_spline(x, y, k=3)(x[:-1] + 0.05),
        (GRID, np.sin(6 * GRID)),
        True,
    ),
    "interpolate.RegularGridInterpolator": (
        lambda x, y: scipy.interpolate.RegularGridInterpolator((x,), y)(x[:-1, None] + 0.05),
        (GRID, np.sin(6 * GRID)),
        True,
    ),
    "integrate.trapezoid": (lambda x, y: scipy.integrate.trapezoid(y, x), (GRID, np.sin(6 * GRID)), True),
    "integrate.cumulative_trapezoid": (
        lambda x, y: scipy.integrate.cumulative_trapezoid(y, x),
        (GRID, np.sin(6 * GRID)),
        True,
    ),
    "integrate.tanhsinh": (
        lambda b: scipy.integrate.tanhsinh(lambda t: t * t, b * 0.0, b).integral,
        (GRID[1:],),
        True,
    ),
    "optimize.rosen": (lambda x: scipy.optimize.rosen(x.T), (MATRIX,), True),
    "optimize.rosen_der": (lambda x: scipy.optimize.rosen_der(x[0]), (MATRIX,), True),
    "optimize.elementwise.find_root": (
        lambda c: (
            scipy.optimize.elementwise.find_root(lambda t, c: t**3 - c, (c * 0.0, c + 1.0), args=(c,)).x
        ),
        (POSITIVE[:, 0],),
        True,
    ),
    "spatial.transform.Rotation.as_matrix": (
        lambda q: scipy.spatial.transform.Rotation.from_quat(q).as_matrix(),
        (MATRIX,),
        True,
    ),
    "spatial.transform.Rotation.apply": (
        lambda q: scipy.spatial.transform.Rotation.from_quat(q[:3]).apply(q[:3, :3]),
        (MATRIX,),
        True,
    ),
    "linalg.solve": (lambda a, b: scipy.linalg.solve(a, b), (SQUARE, MATRIX[0]), True),
    "cluster.vq.whiten": (lambda x: scipy.cluster.vq.whiten(x), (MATRIX,), True),
    "cluster.vq.vq": (lambda x: scipy.cluster.vq.vq(x, x[:3])[1], (MATRIX,), True),
    "sklearn.StandardScaler": (_sk(StandardScaler, "fit_transform"), (MATRIX,), True),
    "sklearn.MinMaxScaler": (_sk(MinMaxScaler, "fit_transform"), (MATRIX,), True),
    "sklearn.MaxAbsScaler": (_sk(MaxAbsScaler, "fit_transform"), (MATRIX,), True),
    "sklearn.PCA": (
        _sk(lambda: PCA(2, svd_solver="full"), "fit_transform"),
        (MATRIX,),
        True,
    ),
    "sklearn.LinearDiscriminantAnalysis": (
        _sk(LinearDiscriminantAnalysis, "predict_proba"),
        (MATRIX, LABELS),
        True,
    ),
    "sklearn.Ridge": (
        _sk(lambda: Ridge(solver="svd"), "predict"),
        (MATRIX, MATRIX[:, 0] - MATRIX[:, 2]),
        True,
    ),
    "sklearn.LogisticRegression": (_sk(LogisticRegression, "predict_proba"), (MATRIX, LABELS), True),
    "sklearn.GaussianNB": (_sk(GaussianNB, "predict_proba"), (MATRIX, LABELS), True),
    "sklearn.rbf_kernel": (_metric(sklearn.metrics.pairwise.rbf_kernel), (MATRIX,), True),
    "sklearn.polynomial_kernel": (_metric(sklearn.metrics.pairwise.polynomial_kernel), (MATRIX,), True),
    "sklearn.euclidean_distances": (_metric(sklearn.metrics.pairwise.euclidean_distances), (MATRIX,), True),
    "sklearn.Normalizer": (_sk(Normalizer, "fit_transform"), (MATRIX,), True),
    "sklearn.r2_score": (_metric(sklearn.metrics.r2_score), (MATRIX[:, 0], MATRIX[:, 1]), False),
    "sklearn.accuracy_score": (_metric(sklearn.metrics.accuracy_score), (LABELS, PREDICTED), False),
}

#: cases compared more loosely than 1e-10: scikit-learn averages integer labels in the namespace's
#: default floating dtype, float32 on torch (array_api_compat.torch), so the score is float32-exact
RTOL = {"sklearn.accuracy_score": 1e-6}

#: (case, namespace) -> why it cannot pass yet; each is a strict xfail
KNOWN_FAILURES: dict[tuple[str, str], str] = (
    {
        # SciPy's own limits, the same on SciPy's torch backend: the function converts its input with
        # np.asarray and returns a NumPy array, so only ruda.host (whose arrays are NumPy's) keeps its type
        (case, name): f"SciPy 1.17: {case} has no array API support; it returns a NumPy array"
        for case in ("signal.welch", "linalg.solve")
        for name in ("torch", "router", "remote", "wgpu")
    }
    | {
        ("linalg.solve", name): "SciPy: linalg.solve has no array API support; it returns a NumPy array"
        for name in ruda_namespaces.GPU_NAMES
    }
    | {
        # the case's own b * 0.0 runs in test code, so with fusion on it is pending, a ruda_cuda
        # array, where b is a CuPy array to array-api-compat: SciPy refuses the mix
        ("integrate.tanhsinh", "cuda-fusion"): "a pending and a computed array in one call: two namespaces",
    }
)


@pytest.fixture(scope="module")
def remote_session() -> Iterator[ruda_namespaces.RemoteSession]:
    session = ruda_namespaces.RemoteSession()
    yield session
    session.close()


@pytest.fixture(params=ruda_namespaces.NAMES + ruda_namespaces.GPU_NAMES)
def xp(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "remote":
        request.getfixturevalue("remote_session")
    if request.param not in ruda_namespaces.GPU_NAMES:
        namespace = ruda_namespaces.build(request.param)
        if "float64" not in namespace.__array_namespace_info__().dtypes():
            pytest.skip(
                f"{request.param}'s default device has no float64 (a WebGPU adapter without "
                "shader-f64: OpenGL's, Metal's), and the cases compare float64 results"
            )
        yield namespace
        return
    row = {b.name: b for b in ruda.backends()}["cuda"]
    if not row.available:
        pytest.skip(f"cuda backend unavailable: {row.reason}")
    from ruda_cuda import _fusion

    previous = _fusion.set_enabled(request.param == "cuda-fusion")
    yield ruda_namespaces.build(request.param)
    _fusion.set_enabled(previous)


def _array_types(xp: Any) -> tuple[type, ...]:
    """What a result that stayed in the namespace ``xp`` is: its array type; for ruda_cuda any
    CuPy array (SciPy and scikit-learn compute with CuPy), or a pending one with fusion on."""
    if xp.__name__ == "ruda_cuda":
        import cupy
        from ruda_cuda._fusion import LazyArray

        return (cupy.ndarray, LazyArray)
    return (type(xp.asarray(0.0)),)


def _host(x: Any) -> np.ndarray:
    """``x`` as a NumPy array of float64 or complex128, whatever library's array it is."""
    if hasattr(x, "cpu") and hasattr(x, "numpy"):  # a torch tensor
        x = x.cpu().numpy()
    if hasattr(x, "get") and hasattr(x, "__cuda_array_interface__"):  # a CuPy array, or pending
        x = x.get()
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


@pytest.mark.parametrize("case", list(CASES))
def test_function_matches_numpy(case, xp, request):
    name = request.node.callspec.params["xp"]
    why = KNOWN_FAILURES.get((case, name))
    if why is not None:
        request.applymarker(pytest.mark.xfail(reason=why, strict=True))
    fn, inputs, keeps_namespace = CASES[case]
    want = fn(*inputs)
    got = fn(*(xp.asarray(a) for a in inputs))
    if keeps_namespace:
        array_types = _array_types(xp)
        # SciPy gives NumPy scalars for 0-d NumPy results, and ruda.host's arrays are NumPy's
        numpy_scalar = array_types == (np.ndarray,) and isinstance(got, np.generic)
        assert isinstance(got, array_types) or numpy_scalar, (
            f"the result is a {type(got).__name__}, not a {array_types[0].__name__}"
        )
    got_host, want_host = _host(got), _host(want)
    assert got_host.shape == want_host.shape
    rtol = RTOL.get(case, 1e-10)
    np.testing.assert_allclose(got_host, want_host, rtol=rtol, atol=rtol)
