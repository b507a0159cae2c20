"""The linalg decompositions against NumPy/LAPACK, batched, in float32, float64 and complex.

Tolerances: results are compared relative to the size of the input, rtol 2e-4 for float32 and
1e-10 for float64. Our kernels and LAPACK take different (equally valid) roundings on the way:
Jacobi rotations against Householder/QR iterations, another order of sums. The identities a
factorisation must satisfy (Q R = A, U S Vh = A, orthonormal columns) are checked at the same
tolerances; eigen- and singular vectors are compared through those identities, as their signs
and order among equal values are not unique.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import assert_matches_numpy, parametrize_backends

from tests.wgpu.dtype_support import keeps_float32_subnormals, needs, skip_if_float32_subnormals_flush

pytestmark = parametrize_backends("wgpu")

FLOATS = list(ruda_wgpu.__array_namespace_info__().dtypes(kind=("real floating", "complex floating")))
RTOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}
SHAPES = [(3, 3), (4, 6, 6), (2, 3, 17, 17), (1, 1), (0, 2, 2)]


@pytest.fixture(params=["loops", "written out"])
def steps(request, monkeypatch):
    """Each form of the blocked kernels' per-thread steps, whatever the adapter (GPUs get them
    written out, CPU adapters as loops: see ``_linalg_steps``)."""
    from ruda_wgpu import _linalg_steps

    monkeypatch.setattr(_linalg_steps, "written_out", lambda dev: request.param == "written out")


def _mat(dtype: str, shape, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _h(a: np.ndarray) -> np.ndarray:
    """The conjugate transpose of the matrices of ``a``."""
    return np.conj(np.swapaxes(a, -1, -2))


def _spd(dtype: str, shape, seed: int = 0) -> np.ndarray:
    """Symmetric (Hermitian) positive definite matrices."""
    a = _mat(dtype, shape, seed)
    n = shape[-1]
    return (a @ _h(a) + n * np.eye(n)).astype(dtype)


def _close(got, want, dtype: str, scale: float = 1.0) -> None:
    assert_matches_numpy(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale, check_dtype=False)


def _orthonormal(q: np.ndarray, dtype: str) -> None:
    k = q.shape[-1]
    identity = np.broadcast_to(np.eye(k), (*q.shape[:-2], k, k))
    np.testing.assert_allclose(_h(q) @ q, identity, atol=RTOL[dtype] * 10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_solve_inv_det_slogdet(xp, dtype, shape):
    a = _mat(dtype, shape) + 3 * np.eye(shape[-1], dtype=dtype)
    b = _mat(dtype, (*shape[:-1], 2), 1)
    x = xp.asarray(a)
    _close(xp.linalg.solve(x, xp.asarray(b)), np.linalg.solve(a, b), dtype, 10)
    if shape[-1]:
        v = _mat(dtype, (shape[-1],), 2)
        _close(xp.linalg.solve(x, xp.asarray(v)), np.linalg.solve(a, v[..., None])[..., 0], dtype, 10)
    _close(xp.linalg.inv(x), np.linalg.inv(a), dtype, 10)
    _close(xp.linalg.det(x), np.linalg.det(a), dtype, 10)
    got = xp.linalg.slogdet(x)
    want = np.linalg.slogdet(a)
    _close(got.sign, want.sign, dtype)
    _close(got.logabsdet, want.logabsdet, dtype, 10)


def _lu_identity(a: np.ndarray, lu: np.ndarray, piv: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """|L U - P A| / |A| per matrix, P the row exchanges ``piv`` (LAPACK's getrf order), which
    must put the rows in the order ``perm``."""
    n = a.shape[-1]
    pa = a.astype(np.complex128).copy()
    order = np.broadcast_to(np.arange(n), piv.shape).copy()
    for idx in np.ndindex(a.shape[:-2]):
        for k in range(n):
            p = int(piv[idx][k])
            pa[idx][[k, p]] = pa[idx][[p, k]]
            order[idx][[k, p]] = order[idx][[p, k]]
    assert (order == perm).all()
    lower = np.tril(lu, -1) + np.eye(n)
    return np.abs(lower @ np.triu(lu) - pa).max(axis=(-1, -2)) / np.abs(a).max(axis=(-1, -2))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [17, 40, 67])
def test_blocked_lu_factors_panel_by_panel(xp, dtype, n, steps, monkeypatch):
    """The blocked factorisation (panels of 8 columns from 32 rows here, 16 from 256 by default) gives
    factors with P A = L U, the pivots of the unblocked one, and solves, inverts and takes
    determinants as LAPACK does; one matrix of the batch is singular: a zero column, in a later
    panel where there is one, gives an exactly zero pivot at its step."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "LU_BLOCKED_MIN", 32)
    monkeypatch.setattr(_decompositions, "LU_PANEL", 8)
    a = _mat(dtype, (3, n, n))
    zero = min(20, n - 1)
    a[1, :, zero] = 0
    lu, piv, perm, info = _decompositions._lu(xp.asarray(a), "test")
    assert (_lu_identity(a, np.asarray(lu), np.asarray(piv), np.asarray(perm)) < 10 * RTOL[dtype]).all()
    with monkeypatch.context() as unblocked:
        unblocked.setattr(_decompositions, "LU_BLOCKED_MIN", n + 1)
        assert (np.asarray(_decompositions._lu(xp.asarray(a), "test").piv) == np.asarray(piv)).all()
    flags = np.frombuffer(lu.device.read(info.buffer, 0, 12), np.uint32)
    assert list(flags) == [0, zero + 1, 0]
    good = a[[0, 2]]
    b = _mat(dtype, (2, n, 3), 1)
    _close(xp.linalg.solve(xp.asarray(good), xp.asarray(b)), np.linalg.solve(good, b), dtype, 100)
    small = (good / 4).astype(dtype)  # a determinant within float32's range
    _close(xp.linalg.det(xp.asarray(small)), np.linalg.det(small), dtype, abs(np.linalg.det(small)).max())
    with pytest.raises(xp.linalg.LinAlgError, match="singular"):
        xp.linalg.inv(xp.asarray(a))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matrices_shared_by_a_stack_of_right_hand_sides_are_factorised_once(xp, dtype, monkeypatch):
    """solve of matrices that the broadcast shares among right-hand sides (one matrix for a
    stack, or (3, 1) matrices for (1, 4) right-hand sides) factorises each once, the right-hand
    sides it meets side by side, and matches NumPy's broadcast result."""
    from ruda_wgpu import _decompositions

    factorised = []
    lu = _decompositions._lu
    monkeypatch.setattr(_decompositions, "_lu", lambda x, fn: factorised.append(x.shape) or lu(x, fn))
    for a_shape, b_shape, shapes in [
        ((6, 6), (4, 6, 2), [(6, 6)]),
        ((1, 6, 6), (2, 3, 6, 1), [(6, 6)]),
        ((1, 1, 6, 6), (5, 6, 3), [(1, 6, 6)]),
        ((3, 1, 6, 6), (1, 4, 6, 2), [(3, 6, 6)]),
        ((1, 4, 6, 6), (3, 1, 6, 2), [(4, 6, 6)]),
        ((2, 1, 6, 6), (3, 6, 1), [(2, 6, 6)]),
        ((2, 3, 6, 6), (3, 6, 2), [(2, 3, 6, 6)]),  # (nothing shared)
    ]:
        a = (_mat(dtype, a_shape, seed=3) + 4 * np.eye(6)).astype(dtype)
        b = _mat(dtype, b_shape, seed=4)
        factorised.clear()
        got = xp.linalg.solve(xp.asarray(a), xp.asarray(b))
        assert factorised == shapes, (a_shape, b_shape)
        _close(np.asarray(got), np.linalg.solve(a, b), dtype, 10)
        assert got.shape == np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + b_shape[-2:]


def test_large_solve_takes_the_blocked_path_and_is_right(xp):
    """A matrix of 400 (the default blocked path): one workgroup doing the whole factorisation
    got matrices from about 400 wrong on lavapipe, which the blocked path never asks of it."""
    a = _mat("float32", (400, 400), 3)
    b = _mat("float32", (400, 2), 4)
    want = np.linalg.solve(a.astype(np.float64), b)
    got = np.asarray(xp.linalg.solve(xp.asarray(a), xp.asarray(b)))
    assert np.abs(got - want).max() / np.abs(want).max() < 1e-3


@pytest.mark.parametrize("dtype", ["float32", pytest.param("complex128", marks=needs("complex128"))])
def test_solve_takes_many_rows_and_columns_a_workgroup(xp, dtype, steps, monkeypatch):
    """300 rows (18 blocks of 16 and a short one) and 6 right-hand sides: a workgroup's 4 columns
    of 300 rows are more (row, column) pairs than its threads update at once, the last
    workgroup has 2 columns. The LU's panels of 4 columns hold up to 2 rows a thread, which
    exchange one column outside the panel at a time (so the columns from 256 take a second)."""
    from ruda_wgpu import _decompositions, _linalg_steps

    monkeypatch.setattr(_decompositions, "LU_PANEL", 4)
    monkeypatch.setattr(_linalg_steps, "SWAP_COLUMNS", 1)
    a = _mat(dtype, (300, 300), 7)
    b = _mat(dtype, (300, 6), 8)
    want = np.linalg.solve(a.astype(np.complex128), b)
    got = np.asarray(xp.linalg.solve(xp.asarray(a), xp.asarray(b)))
    assert np.abs(got - want).max() / np.abs(want).max() < 100 * RTOL[dtype]


def _on_llvmpipe(xp) -> bool:
    return "llvmpipe" in xp.__array_namespace_info__().default_device().description


def test_sizes_past_llvmpipes_loop_limit_are_computed_or_refused(xp):
    """llvmpipe stops a GPU thread's loops after 65535 iterations without a word: the Jacobi
    sweeps and the columns of QR and Cholesky are split over dispatches there, so a 128 x 128
    eigh, a 300 x 300 QR and a 400 x 400 Cholesky are right (they came back wrong, or were
    refused, before), and what cannot be split (a 64 x 64 eig) raises rather than returning wrong
    numbers. On other adapters all are computed."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    s = (a @ a.T / 128 + np.eye(128)).astype(np.float32)
    w, v = (np.asarray(u) for u in xp.linalg.eigh(xp.asarray(s)))
    assert np.abs(s @ v - v * w).max() < 1e-4
    a = rng.standard_normal((300, 300)).astype(np.float32)
    q, r = (np.asarray(u) for u in xp.linalg.qr(xp.asarray(a)))
    assert np.abs(q @ r - a).max() < 1e-4 and np.abs(np.tril(r, -1)).max() == 0
    _orthonormal(q, "float32")
    a = rng.standard_normal((400, 400)).astype(np.float32)
    s = (a @ a.T / 400 + np.eye(400)).astype(np.float32)
    low = np.asarray(xp.linalg.cholesky(xp.asarray(s)))
    assert np.abs(low @ low.T - s).max() < 1e-4 and np.abs(np.triu(low, 1)).max() == 0
    g = rng.standard_normal((64, 64)).astype(np.float32)
    if _on_llvmpipe(xp):
        with pytest.raises(NotImplementedError, match="llvmpipe silently stops"):
            xp.linalg.eigvals(xp.asarray(g))
    else:
        w, v = (np.asarray(u) for u in xp.linalg.eig(xp.asarray(g)))
        assert np.abs(g @ v - v * w).max() < 1e-3


@pytest.mark.parametrize("dtype", FLOATS)
def test_work_split_over_dispatches_gives_the_same_factors(xp, dtype, monkeypatch):
    """QR, Q and Cholesky in many dispatches of a few columns each, and Jacobi sweeps in spans of
    a few rounds, as llvmpipe's loop limit makes them at a few hundred rows, here forced on small
    matrices on any adapter: the factors equal those of one dispatch, and a pivot that fails in
    a later dispatch is still reported."""
    from ruda_wgpu import _decompositions

    a, spd = _mat(dtype, (2, 40, 24), seed=7), _spd(dtype, (2, 30, 30), seed=8)

    def factors() -> list[np.ndarray]:
        qr = xp.linalg.qr(xp.asarray(a), mode="complete")
        eigh, svd = xp.linalg.eigh(xp.asarray(spd)), xp.linalg.svd(xp.asarray(a))
        return [np.asarray(t) for t in (*qr, xp.linalg.cholesky(xp.asarray(spd)), *eigh, *svd)]

    whole = factors()
    monkeypatch.setattr(_decompositions, "loop_limited", lambda dev: True)
    monkeypatch.setattr(_decompositions, "LLVMPIPE_LOOPS", _decompositions.LOOP_RESERVE + 200)
    dev = xp.__array_namespace_info__().default_device()
    assert len(_decompositions._spans(_decompositions._qr_costs(40, 24, 40)[0], dev, "qr", a.shape)) > 5
    # a sweep of the 30 x 30 eigh (29 rounds) and of the 40 x 24 svd (23) no longer fits a dispatch
    for m, n, one_sided in ((30, 30, False), (40, 24, True)):
        per_round = _decompositions._round_loops(m, n, one_sided, _decompositions._jacobi_threads(m, n))
        spans = _decompositions._jacobi_dispatches(dev, per_round, n - 1, "eigh", spd.shape)
        assert {r0 for _, r0, _ in spans} != {0}
    for got, want in zip(factors(), whole, strict=True):
        np.testing.assert_array_equal(got, want)
    spd[1, 25, 25] = -1e3
    with pytest.raises(xp.linalg.LinAlgError, match="positive definite"):
        xp.linalg.cholesky(xp.asarray(spd))


def test_svd_by_blocks_raises_where_llvmpipe_would_stop_its_loops(xp, monkeypatch):
    """The Gram matrices of svd's blocks are summed down every row in one thread's loops: past
    llvmpipe's loop limit (forced here, low) svd raises NotImplementedError, not wrong numbers."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "JACOBI_BLOCKS_MIN", 8)
    monkeypatch.setattr(_decompositions, "loop_limited", lambda dev: True)
    monkeypatch.setattr(_decompositions, "LLVMPIPE_LOOPS", 40)
    with pytest.raises(NotImplementedError, match="would loop about 264 times"):
        xp.linalg.svd(xp.asarray(_mat("float32", (40, 24))))


def _factors_an_svd(u: np.ndarray, s: np.ndarray, vh: np.ndarray, a: np.ndarray, dtype: str) -> None:
    """u s vh = a (through u's first k columns and vh's first k rows, k = len(s): the reduced
    product of full matrices), with u's columns and vh's rows orthonormal."""
    k = s.shape[-1]
    _close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, 10)
    _orthonormal(u, dtype)
    _orthonormal(_h(vh), dtype)


def _eigh_matches(xp, h: np.ndarray, dtype: str) -> np.ndarray:
    """eigh of Hermitian ``h`` on the device: NumPy's eigenvalues, h v = v w, v orthonormal; v."""
    w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(h)))
    scale = max(np.abs(w).max(), 1.0)
    _close(w, np.linalg.eigvalsh(h), dtype, scale)
    _close(h @ v, v * w[..., None, :], dtype, scale)
    _orthonormal(v, dtype)
    return v


@pytest.mark.parametrize("dtype", FLOATS)
def test_jacobi_rounds_over_the_whole_gpu(xp, dtype, monkeypatch):
    """Jacobi sweeps by blocks over the whole GPU (from JACOBI_BLOCKS_MIN columns, forced here
    from 8), odd and even sizes, in a batch, match NumPy: eigh, and svd, whose blocks' Gram
    matrices sum slices of tiles of rows (150 rows: slices of 3 and 2 tiles in float32, 4, 4
    and 2 in float64). The sweeps stop once one rotates nothing, long before MAX_SWEEPS."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "JACOBI_BLOCKS_MIN", 8)
    reads = []
    flags = _decompositions._flags
    monkeypatch.setattr(_decompositions, "_flags", lambda *args: reads.append(1) or flags(*args))
    _eigh_matches(xp, _spd(dtype, (2, 17, 17), seed=9), dtype)
    assert 2 <= len(reads) < 15  # sweeps, each followed by a look at its flag
    a = _mat(dtype, (2, 21, 12), seed=10)
    tall = _mat(dtype, (150, 90), seed=11)  # (rows in several tiles; columns in 6 or 12 blocks)
    for m in (a, a[:, :12, :11], _h(a), tall, _h(tall)[:, :100]):
        reads.clear()
        u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(m), full_matrices=False))
        assert 2 <= len(reads) < 15
        _close(s, np.linalg.svd(m, compute_uv=False), dtype, 10)
        _factors_an_svd(u, s, vh, m, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("slice_tiles", "workgroups"), [(1, 1024), (2, 1024), (1, 12)])
def test_svd_gram_sums_in_slices(xp, dtype, slice_tiles, workgroups, monkeypatch):
    """A batch of svds whose rounds sum their Gram matrices in slices of one or two tiles of rows,
    the last one short (100 rows), or in as few slices as 12 workgroups allow for the batch's 6
    pairs: singular values and vectors match NumPy's whatever the slicing."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "JACOBI_BLOCKS_MIN", 8)
    monkeypatch.setattr(_decompositions, "GRAM_SLICE_TILES", slice_tiles)
    monkeypatch.setattr(_decompositions, "GRAM_WORKGROUPS", workgroups)
    m = _mat(dtype, (3, 100, 60), seed=12)
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(m), full_matrices=False))
    _close(s, np.linalg.svd(m, compute_uv=False), dtype, 10)
    _factors_an_svd(u, s, vh, m, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [9, 40, 47])
def test_eigh_by_blocks(xp, dtype, n, monkeypatch):
    """eigh by blocks (forced from 8 columns): one block pair (9), several rounds with a spare
    block and a short last block (40 and 47 in blocks of 16 or 8), on random, repeated-eigenvalue,
    widely scaled, diagonal and zero matrices. The diagonal one takes one sweep and keeps its
    unit vectors; a stays exactly Hermitian, so the zero matrix's vectors are the identity."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "JACOBI_BLOCKS_MIN", 8)
    rng = np.random.default_rng(n)
    q = np.linalg.qr(_mat(dtype, (n, n), seed=n))[0]
    repeated = np.repeat(np.arange(1.0, 4.0), -(-n // 3))[:n]
    scaled = np.logspace(-3, 3, n) * rng.choice([-1.0, 1.0], n)
    for values in (repeated, scaled):
        _eigh_matches(xp, ((q * values) @ _h(q)).astype(dtype), dtype)
    _eigh_matches(xp, _spd(dtype, (3, n, n), seed=n + 1), dtype)
    reads = []
    flags = _decompositions._flags
    monkeypatch.setattr(_decompositions, "_flags", lambda *args: reads.append(1) or flags(*args))
    diagonal = np.diag(rng.permutation(n).astype(dtype))
    v = _eigh_matches(xp, diagonal, dtype)
    assert len(reads) == 1
    np.testing.assert_array_equal(np.abs(v), np.eye(n)[:, np.argsort(np.diag(diagonal))])
    w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.zeros((n, n), dtype=getattr(xp, dtype))))
    np.testing.assert_array_equal(w, np.zeros(n))
    np.testing.assert_array_equal(v, np.eye(n))


def test_singular_matrices(xp):
    s = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    with pytest.raises(xp.linalg.LinAlgError, match="singular"):
        xp.linalg.solve(xp.asarray(s), xp.ones(2))
    with pytest.raises(xp.linalg.LinAlgError, match=r"linalg.inv\(\): a matrix is singular"):
        xp.linalg.inv(xp.asarray(s))
    assert float(xp.linalg.det(xp.asarray(s))) == 0.0
    sign, logabsdet = xp.linalg.slogdet(xp.asarray(s))
    assert float(sign) == 0.0 and float(logabsdet) == -np.inf
    with pytest.raises(ValueError, match="square"):
        xp.linalg.inv(xp.ones((2, 3)))
    for b in (xp.asarray(1.0), xp.ones(3), xp.ones((3, 2))):  # (had raised IndexError, or a reshape's)
        with pytest.raises(ValueError, match=re.escape(f"shape {b.shape} does not match matrices of size 2")):
            xp.linalg.solve(xp.eye(2), b)
    with pytest.raises(TypeError, match="trace\\(\\) needs a numeric array, not bool"):
        xp.linalg.trace(xp.ones((2, 2), dtype=xp.bool))
    with pytest.raises(TypeError, match="axis must be an integer, not float"):
        xp.vecdot(xp.ones((2, 2)), xp.ones((2, 2)), axis=0.0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cholesky(xp, dtype, shape):
    a = _spd(dtype, shape)
    got = xp.linalg.cholesky(xp.asarray(a))
    _close(got, np.linalg.cholesky(a), dtype, shape[-1])
    _close(xp.linalg.cholesky(xp.asarray(a), upper=True), _h(np.linalg.cholesky(a)), dtype, 10)
    if shape[-1] > 1 and a.size:
        with pytest.raises(xp.linalg.LinAlgError, match="positive definite"):
            xp.linalg.cholesky(xp.asarray(-a))


@pytest.mark.parametrize("dtype", FLOATS)
def test_blocked_cholesky(xp, dtype, steps, monkeypatch):
    """The blocked Cholesky (from CHOLESKY_BLOCKED_MIN rows, forced here from 8 in blocks of 4 or
    5 columns, so that the last block is narrower): batched factors match NumPy's, with the upper
    triangle zero, and a matrix that fails in a later block, or in the first, is reported."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "CHOLESKY_BLOCKED_MIN", 8)
    for block, shape in ((4, (3, 18, 18)), (5, (2, 13, 13)), (4, (4, 4))):
        monkeypatch.setattr(_decompositions, "CHOLESKY_BLOCK", block)
        a = _spd(dtype, shape, seed=block)
        got = np.asarray(xp.linalg.cholesky(xp.asarray(a)))
        _close(got, np.linalg.cholesky(a), dtype, shape[-1])
        assert not np.triu(got, 1).any()
    a = _spd(dtype, (3, 18, 18), seed=1)
    for row in (16, 2):
        bad = a.copy()
        bad[1, row, row] = -1e3
        with pytest.raises(xp.linalg.LinAlgError, match="positive definite"):
            xp.linalg.cholesky(xp.asarray(bad))


@pytest.mark.parametrize("dtype", FLOATS)
def test_tall_qr_as_a_tree(xp, dtype, monkeypatch):
    """The reduced QR of tall matrices as a tree of QRs (TSQR, forced here from blocks of 8 or
    10 rows): rows not a multiple of a block (zero padding), several levels of the tree, a batch, a
    zero column. Q R = A with Q orthonormal; R of full rank matches NumPy's up to the signs of
    its rows."""
    from ruda_wgpu import _decompositions

    monkeypatch.setattr(_decompositions, "_tsqr_rows", lambda n: 2 * n)
    monkeypatch.setattr(_decompositions, "TSQR_RATIO", 3)
    trees = []
    tsqr = _decompositions._tsqr
    monkeypatch.setattr(_decompositions, "_tsqr", lambda a, want_q: trees.append(a.shape) or tsqr(a, want_q))
    a = _mat(dtype, (2, 83, 4), seed=6)
    a[1, :, 2] = 0
    for m, full_rank in ((a, False), (_mat(dtype, (61, 5), seed=7), True)):
        trees.clear()
        q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(m)))
        assert len(trees) >= 2  # the rows, then the stacked R factors (and theirs)
        assert q.shape == m.shape and r.shape == (*m.shape[:-2], m.shape[-1], m.shape[-1])
        _close(q @ r, m, dtype, 10)
        _orthonormal(q, dtype)
        np.testing.assert_array_equal(np.triu(r), r)
        if full_rank:  # else the rows of R from a zero column on are not unique
            _close(np.abs(r), np.abs(np.linalg.qr(m)[1]), dtype, 10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_blocked_qr(xp, dtype, mode, steps, monkeypatch):
    """The blocked QR (from QR_BLOCKED_MIN rows and columns, forced here from 8 in blocks of 4 or
    5 columns, panels of 2 within them, and the panel's reflectors applied to the rest of its
    block 2 columns at a time where the panels stay in registers): tall, wide and square matrices
    in a batch, one with a zero column (a reflector with tau = 0) and one with a column already
    zero below its diagonal, give the one-workgroup kernel's factors, up to rounding."""
    from ruda_wgpu import _decompositions, _linalg_steps

    a = _mat(dtype, (3, 23, 23), seed=3)
    a[1, :, 6] = 0
    a[2, 9:, 9] = 0
    cases = [(4, a), (5, _mat(dtype, (2, 30, 17), seed=4)), (4, _mat(dtype, (2, 13, 21), seed=5))]
    for block, m in cases:
        whole = [np.asarray(t) for t in xp.linalg.qr(xp.asarray(m), mode=mode)]
        with monkeypatch.context() as patch:
            patch.setattr(_decompositions, "QR_BLOCKED_MIN", 8)
            patch.setattr(_decompositions, "QR_BLOCK", block)
            patch.setattr(_decompositions, "QR_PANEL", 2)
            patch.setattr(_linalg_steps, "QR_CHUNK", 2)
            q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(m), mode=mode))
        _close(q, whole[0], dtype, 10)
        _close(r, whole[1], dtype, 10)
        _close(q @ r, m, dtype, 10)
        _orthonormal(q, dtype)
        np.testing.assert_array_equal(np.triu(r), r)


@pytest.mark.parametrize("dtype", FLOATS)
def test_qr_panel_in_registers_takes_several_rows_a_thread(xp, dtype, monkeypatch):
    """A blocked QR whose panels are taller than a workgroup (each thread holding two or more
    rows of the panel in registers) gives the one-workgroup kernel's factors, up to rounding."""
    from ruda_wgpu import _decompositions, _linalg_steps

    m = _mat(dtype, (300, 40), seed=6)  # (not tall enough for a tree of QRs)
    whole = [np.asarray(t) for t in xp.linalg.qr(xp.asarray(m))]
    monkeypatch.setattr(_linalg_steps, "written_out", lambda dev: True)
    monkeypatch.setattr(_decompositions, "QR_BLOCKED_MIN", 8)
    monkeypatch.setattr(_decompositions, "QR_BLOCK", 8)
    monkeypatch.setattr(_decompositions, "QR_PANEL", 3)
    monkeypatch.setattr(_linalg_steps, "QR_CHUNK", 4)
    launched, run = [], _decompositions.run
    monkeypatch.setattr(
        _decompositions, "run", lambda dev, name, *rest: launched.append(name) or run(dev, name, *rest)
    )
    q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(m)))
    assert launched.count("linalg_qr_panel") == 15 and "linalg_qr" not in launched
    _close(q, whole[0], dtype, 10)
    _close(r, whole[1], dtype, 10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 7, 4), (4, 1), (0, 3)], ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(xp, dtype, shape, mode):
    a = _mat(dtype, shape)
    q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(a), mode=mode))
    want_q, want_r = np.linalg.qr(a, mode=mode)
    assert q.shape == want_q.shape and r.shape == want_r.shape
    _close(q @ r, a, dtype, 10)
    _orthonormal(q, dtype)
    np.testing.assert_array_equal(np.triu(r), r)
    _close(np.abs(r), np.abs(want_r), dtype, 10)  # R is unique up to the signs (phases) of its rows


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("blocked", [False, True], ids=["one kernel", "blocked"])
def test_qr_of_subnormal_matrices(xp, dtype, blocked, steps, monkeypatch):
    """A reflector is formed in units of its column's largest magnitude: of a column of
    subnormals, 1 / (alpha - beta) had overflowed and Q was NaN. QR commutes with a power of
    two, so the factors of a subnormal matrix are those of the same matrix scaled up (exactly),
    to within the subnormals' fewer bits."""
    from ruda_wgpu import _decompositions

    skip_if_float32_subnormals_flush(dtype)
    if blocked:
        monkeypatch.setattr(_decompositions, "QR_BLOCKED_MIN", 8)
        monkeypatch.setattr(_decompositions, "QR_BLOCK", 8)
        monkeypatch.setattr(_decompositions, "QR_PANEL", 4)
    k = -np.finfo(dtype).minexp + 8  # (float32: entries near 2^-134, 1 / which overflows)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    half = 2.0 ** (k // 2)  # (2^k itself is past float64's range: scaled twice, each exact)
    tiny = (_mat(dtype, (2, 20, 12), seed=8).astype(wide) / half / 2.0 ** (k - k // 2)).astype(dtype)
    unit = tiny.astype(wide) * half * 2.0 ** (k - k // 2)
    q, r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(tiny)))
    want_q, want_r = (np.asarray(t) for t in xp.linalg.qr(xp.asarray(unit.astype(dtype))))
    assert np.isfinite(q).all() and np.isfinite(r).all()
    bits = 2.0 ** -(np.finfo(dtype).nmant - 12)  # (the subnormals have 8 to 12 bits fewer)
    np.testing.assert_allclose(q, want_q, atol=bits * 20)
    np.testing.assert_allclose(r.astype(wide) * half * 2.0 ** (k - k // 2), want_r, atol=bits * 20)
    _orthonormal(q, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_eigh(xp, dtype, shape):
    a = _spd(dtype, shape)
    a = a - 2 * shape[-1] * np.eye(shape[-1], dtype=dtype)  # negative eigenvalues too
    w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(a)))
    _close(w, np.linalg.eigvalsh(a), dtype, 10 * shape[-1])
    _orthonormal(v, dtype)
    _close((v * w[..., None, :]) @ _h(v), a, dtype, 10 * shape[-1])
    _close(xp.linalg.eigvalsh(xp.asarray(a)), np.linalg.eigvalsh(a), dtype, 10 * shape[-1])


@pytest.mark.parametrize("dtype", FLOATS)
def test_eigh_reads_the_lower_triangle_as_lapack_does(xp, dtype):
    """What the upper triangle holds (here noise, and a NaN) and a complex diagonal's imaginary
    part are not read, as in NumPy, CuPy and PyTorch (UPLO='L'), which code filling only the
    lower triangle relies on; the whole matrix had been rotated."""
    a = _mat(dtype, (2, 5, 5), seed=6)
    a[0, 1, 3] = np.nan
    w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(a)))
    _close(w, np.linalg.eigvalsh(a), dtype, 50)
    mirrored = np.tril(a) + _h(np.tril(a, -1))
    mirrored[..., range(5), range(5)] = mirrored[..., range(5), range(5)].real
    _close((v * w[..., None, :]) @ _h(v), mirrored, dtype, 50)
    _close(xp.linalg.eigvalsh(xp.asarray(a)), np.linalg.eigvalsh(a), dtype, 50)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("n", [3, 40], ids=["one workgroup", "by blocks"])
def test_vectors_of_a_matrix_holding_nan_or_inf_are_nan(xp, dtype, n):
    """Its values come out NaN, and its vectors had come out as identity-like columns that
    looked like an answer; the other matrices of the batch are untouched."""
    a = _spd(dtype, (4, n, n), seed=2)
    a[1, 1, 2] = a[1, 2, 1] = np.nan
    a[2, 0, 0] = np.inf
    a[3, 0, 1] = a[3, 1, 0] = np.inf
    w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(a)))
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a[..., : n - 1])))
    for values, vectors in ((w, [v]), (s, [u, vh])):
        undefined = np.isnan(values).any(axis=-1)
        assert undefined[1:].all() and not undefined[0]
        for vecs in vectors:
            assert np.isnan(vecs[1:]).all() and np.isfinite(vecs[0]).all()
    _close((v[0] * w[0]) @ _h(v[0]), a[0], dtype, 10 * n)
    _close((u[0][:, : n - 1] * s[0]) @ vh[0], a[0, :, : n - 1], dtype, 10 * n)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_jacobi_values_as_accurate_as_lapacks(xp, dtype):
    """A 160 x 160 matrix (a round at a time over the GPU): eigenvalues and singular values
    within 5e-7 of the largest, as LAPACK's float32 ones (within 4e-8 here), though the
    rotations leave the vectors' norms some 2e-5 off one; the vectors come back of unit norm."""
    a = _mat(dtype, (160, 160), seed=4)
    a = (a + _h(a)) / 2
    exact = np.linalg.eigvalsh(a.astype(np.complex128 if dtype == "complex64" else np.float64))
    scale = np.abs(exact).max()
    w, v = (np.asarray(t).astype(np.complex128) for t in xp.linalg.eigh(xp.asarray(a)))
    assert np.abs(w.real - exact).max() <= 5e-7 * scale
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, atol=2e-6)
    s = np.asarray(xp.linalg.svdvals(xp.asarray(a)))
    assert np.abs(s - np.sort(np.abs(exact))[::-1]).max() <= 5e-7 * scale
    vh = np.asarray(xp.linalg.svd(xp.asarray(a)).Vh).astype(np.complex128)
    np.testing.assert_allclose(np.linalg.norm(vh, axis=1), 1, atol=2e-6)


@needs("float64")
def test_eigh_of_repeated_eigenvalues(xp):
    a = np.diag([2.0, 2.0, 2.0, -1.0])
    rot = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))[0]
    a = rot @ a @ rot.T
    w, v = (np.asarray(t) for t in xp.linalg.eigh(xp.asarray(a)))
    np.testing.assert_allclose(w, [-1.0, 2.0, 2.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, a, atol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "shape", [(3, 3), (6, 4), (4, 6), (2, 9, 5), (2, 11, 4), (4, 11), (1, 4), (3, 0)], ids=str
)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(xp, dtype, shape, full_matrices):
    a = _mat(dtype, shape)
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=full_matrices))
    want = np.linalg.svd(a, full_matrices=full_matrices)
    assert u.shape == want.U.shape and s.shape == want.S.shape and vh.shape == want.Vh.shape
    _close(s, want.S, dtype, 10)
    _factors_an_svd(u, s, vh, a, dtype)
    _close(xp.linalg.svdvals(xp.asarray(a)), want.S, dtype, 10)


def test_batches_beyond_a_grid_dimension(xp, monkeypatch):
    """A device limited to 2 workgroups per grid dimension: the blocked LU's updates, the solve,
    eigh by blocks and batched matmul take a batch of 5 matrices in shares of 2."""
    from ruda_wgpu import _decompositions
    from ruda_wgpu._engine import GpuDevice, default_device

    monkeypatch.setattr(_decompositions, "LU_BLOCKED_MIN", 8)
    monkeypatch.setattr(_decompositions, "LU_PANEL", 4)
    monkeypatch.setattr(_decompositions, "JACOBI_BLOCKS_MIN", 8)
    dev = GpuDevice(9, default_device().adapter)
    dev.max_groups = 2
    assert list(dev.batch_chunks(5)) == [(0, 2), (2, 2), (4, 1)]
    a, spd, b = (
        _mat("float32", (5, 12, 12), 14),
        _spd("float32", (5, 12, 12), 15),
        _mat("float32", (5, 12, 3), 16),
    )
    on = lambda h: xp.asarray(h, device=dev)  # noqa: E731
    _close(xp.linalg.solve(on(spd), on(b)), np.linalg.solve(spd, b), "float32", 100)
    w, v = (np.asarray(t) for t in xp.linalg.eigh(on(spd)))
    _close(w, np.linalg.eigvalsh(spd), "float32", np.abs(w).max())
    _close(spd @ v, v * w[..., None, :], "float32", np.abs(w).max())
    _close(xp.matmul(on(a), on(b)), a @ b, "float32", 10)


@pytest.mark.parametrize("dtype", FLOATS)
def test_svd_of_tall_and_wide_matrices_starts_with_qr(xp, dtype, monkeypatch):
    """From SVD_QR_RATIO times more rows than columns (or columns than rows) the SVD is that of
    R, after A = Q R: the same singular values as without, U and V orthonormal, also for a matrix
    with a zero column (U completed by a second QR) and with complete U; svdvals forms no Q."""
    from ruda_wgpu import _decompositions

    calls = []
    qr = _decompositions._qr
    monkeypatch.setattr(
        _decompositions, "_qr", lambda a, mode, want_q: calls.append((mode, want_q)) or qr(a, mode, want_q)
    )
    tall = _mat(dtype, (2, 20, 6), seed=17)
    tall[1, :, 3] = 0
    for a, full in ((tall, False), (tall, True), (_h(tall), False)):
        calls.clear()
        u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=full))
        assert calls[0] == ("reduced", True) and len(calls) == 2, calls  # R, then U's completion
        _close(s, np.linalg.svd(a, compute_uv=False), dtype, 10)
        _factors_an_svd(u, s, vh, a, dtype)
    calls.clear()
    _close(xp.linalg.svdvals(xp.asarray(tall)), np.linalg.svd(tall, compute_uv=False), dtype, 10)
    assert calls == [("reduced", False)]  # R alone
    monkeypatch.setattr(_decompositions, "SVD_QR_RATIO", 10)
    calls.clear()
    _close(xp.linalg.svdvals(xp.asarray(tall)), np.linalg.svd(tall, compute_uv=False), dtype, 10)
    assert not calls


def test_svd_completes_u_by_qr_only_where_it_must(xp, monkeypatch):
    """U's columns are A's rotated columns over their norms; a QR fills in only the columns of
    zero singular values and the rest of a complete U of a tall matrix, so the SVD of a matrix
    of full rank runs no QR for it (these matrices are not tall enough for a QR first)."""
    from ruda_wgpu import _decompositions

    modes = []
    qr = _decompositions.qr
    monkeypatch.setattr(_decompositions, "qr", lambda *args, mode: modes.append(mode) or qr(*args, mode=mode))
    square, tall = _mat("float32", (2, 6, 6), seed=12), _mat("float32", (7, 4), seed=13)
    zero_column = square[0].copy()
    zero_column[:, 2] = 0
    cases = [(square, True, []), (tall, False, []), (tall.T, False, []), (tall, True, ["complete"])]
    for a, full, want in [*cases, (zero_column, False, ["reduced"])]:
        modes.clear()
        u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=full))
        assert modes == want, (a.shape, full)
        k = s.shape[-1]
        _close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, "float32", 10)
        _orthonormal(u, "float32")


@needs("complex128")
def test_svd_that_stops_at_the_sweep_cap_still_has_an_orthonormal_u(xp, monkeypatch):
    """Singular values spread over 1e15 at n = 128: the block sweeps stop at the cap, and U's
    columns of the tiny values had lost their orthogonality (2.6e-4); they are made orthonormal
    after."""
    from ruda_wgpu import _decompositions

    flags = _decompositions._flags
    sweeps = []
    monkeypatch.setattr(_decompositions, "_flags", lambda *args: sweeps.append(1) or flags(*args))
    rng = np.random.default_rng(0)
    n = 128
    q1, q2 = (
        np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))[0] for _ in range(2)
    )
    a = (q1 * np.logspace(0, -15, n)) @ q2.conj().T
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a)))
    _orthonormal(u, "complex128")
    _orthonormal(_h(vh), "complex128")
    _close((u * s) @ vh, a, "complex128", 10)
    _close(s, np.linalg.svd(a, compute_uv=False), "complex128", 10)
    assert len(sweeps) == _decompositions.MAX_SWEEPS  # (the case this is about)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rank_deficient_pinv_and_rank(xp, dtype):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((3, 7, 2)) @ rng.standard_normal((3, 2, 5))).astype(dtype)  # rank 2
    assert_matches_numpy(xp.linalg.matrix_rank(xp.asarray(a)), np.linalg.matrix_rank(a), check_dtype=False)
    cutoff = max(a.shape[-2:]) * np.finfo(dtype).eps  # the standard's default rtol (NumPy's is 1e-15)
    _close(xp.linalg.pinv(xp.asarray(a)), np.linalg.pinv(a, rcond=cutoff), dtype, 100)
    u = np.asarray(xp.linalg.svd(xp.asarray(a)).U)
    _orthonormal(u, dtype)  # completed where the singular values are zero
    assert_matches_numpy(
        xp.linalg.matrix_rank(xp.asarray(a), rtol=0.5), np.linalg.matrix_rank(a, rtol=0.5), check_dtype=False
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_pinv_and_rank_do_not_hide_nan_or_inf(xp, bad):
    """A matrix holding NaN or inf has NaN singular values: pinv's result is NaN and the rank
    counts them (NumPy raises, its SVD not converging; pinv had returned zeros and the rank 0)."""
    batch = xp.asarray(np.array([[[1.0, bad], [2.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]], np.float32))
    inverse = np.asarray(xp.linalg.pinv(batch))
    assert np.isnan(inverse[0]).all()
    np.testing.assert_allclose(inverse[1], np.linalg.pinv(np.array([[1.0, 2.0], [2.0, 4.0]])), rtol=1e-5)
    assert np.asarray(xp.linalg.matrix_rank(batch)).tolist() == [2, 1]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [3, 40])
def test_values_of_huge_and_tiny_matrices(xp, dtype, n):
    """Matrices far from norm one are scaled by a power of two first, as LAPACK does: the Jacobi
    rotations square and multiply entries, and past 2^64 or below 2^-64 in float32 those had
    overflowed or underflowed, the rotations stopped, and singular values came back off by half
    (eigvals did not converge). A power of two is exact, so the values divided by it compare with
    the unscaled matrices' at the usual tolerance."""
    k = np.finfo(dtype).maxexp // 2  # (float32: 64; float64: 512)
    scales = np.ldexp(1.0, [0, k, -k, k + k // 2])
    base = _mat(dtype, (4, n, n), seed=n)
    symmetric = (base + _h(base)) / 2
    a = (base * scales[:, None, None]).astype(dtype)
    want = np.linalg.svd(base, compute_uv=False)
    _close(np.asarray(xp.linalg.svdvals(xp.asarray(a))) / scales[:, None], want, dtype)
    u, s, vh = (np.asarray(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=False))
    _close(s / scales[:, None], want, dtype)
    _close((u * (s / scales[:, None])[..., None, :]) @ vh, base, dtype, 10)
    values = xp.linalg.eigvalsh(xp.asarray((symmetric * scales[:, None, None]).astype(dtype)))
    _close(np.asarray(values) / scales[:, None], np.linalg.eigvalsh(symmetric), dtype, n)
    if n <= 12:  # (the QR iterations' loops: see test_eig_and_eigvals_of_general_matrices)
        got = np.asarray(xp.linalg.eigvals(xp.asarray(a))) / scales[:, None]
        _same_multiset(got, np.linalg.eigvals(base), 100 * RTOL[dtype] * n)


@pytest.mark.parametrize("dtype", [d for d in FLOATS if d.startswith("complex")])
def test_complex_lu_of_subnormal_pivots(xp, dtype):
    """A complex LU divides by pivots near the subnormals scaled up first: Smith's division took
    1 / the subnormal pivot, inf, and the multiplier came out NaN (inf * 0), so did det."""
    skip_if_float32_subnormals_flush(dtype)
    tiny, big = (2.0**-140, 2.0**100) if dtype == "complex64" else (2.0**-1060, 2.0**1000)
    a = np.array([[tiny, tiny], [tiny / 2 * (1 + 1j), big]], dtype=dtype)
    want = tiny * big - tiny * tiny / 2 * (1 + 1j)  # (about 2^-40 or 2^-60: no subnormal)
    np.testing.assert_allclose(complex(np.asarray(xp.linalg.det(xp.asarray(a)))), want, rtol=RTOL[dtype])


def test_lu_functions_of_matrices_near_the_largest_float32(xp):
    """solve, inv and slogdet factorise matrices near the largest float scaled down by a power
    of two, and det multiplies its pivots in float64 where the device has it, as NumPy computes
    (in float64): the elimination had overflowed (solve of these gave [-0.5, 0], slogdet inf)
    and so had the product of pivots 9.35e21 and 2.85e19 of a determinant of 1.585e28. The
    right-hand sides take a power of two of their own: scaled by the matrices', inv's identity
    had become subnormal, and NVIDIA, which flushes those, gave inverses 15% off or zero."""
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((5, 3, 3)) * 1e38).astype(np.float32)
    a[0, :2, :2], a[0, 2], a[0, :, 2] = [[1e38, 3e38], [-2e38, 1e38]], 0, 0
    a[0, 2, 2] = 1.0
    b = (rng.standard_normal((5, 3, 2)) * 1e38).astype(np.float32)
    wide = a.astype(np.float64)
    with np.errstate(over="ignore"):  # (a solution past the largest float32 is inf in both)
        want_x = np.linalg.solve(wide, b).astype(np.float32)
    _close(xp.linalg.solve(xp.asarray(a), xp.asarray(b)), want_x, "float32")
    inverse, want_inverse = np.asarray(xp.linalg.inv(xp.asarray(a))), np.linalg.inv(wide)
    if not keeps_float32_subnormals():  # (inverse entries near 1e-39 are subnormal: flushed)
        normal = np.abs(want_inverse) >= np.finfo(np.float32).smallest_normal
        inverse, want_inverse = np.where(normal, inverse, 0), np.where(normal, want_inverse, 0)
    _close(inverse * 1e38, want_inverse * 1e38, "float32")
    sign, logabsdet = xp.linalg.slogdet(xp.asarray(a))
    want = np.linalg.slogdet(wide)
    assert np.array_equal(np.asarray(sign), want.sign)
    _close(logabsdet, want.logabsdet, "float32")
    if "float64" in xp.__array_namespace_info__().dtypes():
        c = np.array([[-9.35e21, 0, 5.64e-8], [9.86e15, 0, 0], [7.14e18, 2.85e19, 8.37e13]], np.float32)
        _close(
            np.asarray(xp.linalg.det(xp.asarray(c))) / 1e28,
            np.linalg.det(c.astype(np.float64)) / 1e28,
            "float32",
        )


@needs("float64")  # (without it the pivots' product is complex64's, whose own inf * 0 is NaN)
@pytest.mark.parametrize("dtype", [d for d in FLOATS if d.startswith("complex")])
def test_a_complex_determinant_past_the_largest_float_is_infinite_not_nan(xp, dtype):
    """The pivots' sign is taken by negation: as a product with -1 + 0j it had made the imaginary
    part of an infinite determinant NaN (inf * 0), where NumPy's is 0."""
    big = float(np.finfo(dtype).max) ** 0.5 * 4
    a = np.array([[[big, 1], [1, big]], [[1, big], [big, 1]], [[1, 2], [3, 4]]], dtype)
    got = np.asarray(xp.linalg.det(xp.asarray(a)))
    with np.errstate(over="ignore", invalid="ignore"):
        want = np.linalg.det(a)
    np.testing.assert_array_equal(got[:2], want[:2])  # (inf + 0j and -inf + 0j)
    np.testing.assert_allclose(got[2], want[2], rtol=RTOL[dtype])


def test_integer_input_becomes_the_default_float(xp):
    a = xp.asarray([[2, 1], [1, 3]], dtype=xp.int32)
    got = xp.linalg.inv(a)
    assert got.dtype == xp.__array_namespace_info__().default_dtypes()["real floating"]
    _close(got, np.linalg.inv([[2.0, 1.0], [1.0, 3.0]]), "float32")
    with pytest.raises(TypeError, match="float32, float64 or complex"):
        xp.linalg.inv(xp.ones((2, 2), dtype=xp.float16))


def _same_multiset(got: np.ndarray, want: np.ndarray, tol: float) -> None:
    """Each row of ``got`` is a permutation of ``want``'s within ``tol`` (eigenvalues have no order)."""
    for g, w in zip(got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1]), strict=True):
        left = list(w)
        for value in g:
            k = int(np.argmin(np.abs(np.asarray(left) - value)))
            assert abs(left[k] - value) <= tol, (value, left)
            left.pop(k)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 5, 5), (12, 12), (2, 30, 30), (0, 3, 3)], ids=str)
def test_eig_and_eigvals_of_general_matrices(xp, dtype, shape):
    a = _mat(dtype, shape)
    w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(a)))
    complex_dtype = {"float32": "complex64", "float64": "complex128"}.get(dtype, dtype)
    assert w.dtype == complex_dtype and v.dtype == complex_dtype
    assert w.shape == shape[:-1] and v.shape == shape
    if not a.size:
        return
    n = shape[-1]
    scale = np.abs(a).max() * n
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=RTOL[dtype] * scale)  # A V = V diag(w)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=RTOL[dtype])
    largest = np.take_along_axis(v, np.abs(v).argmax(axis=-2)[..., None, :], axis=-2)
    np.testing.assert_allclose(largest.imag, 0.0, atol=RTOL[dtype])  # LAPACK's normalisation
    _same_multiset(w, np.linalg.eigvals(a), RTOL[dtype] * scale)
    np.testing.assert_array_equal(np.asarray(xp.linalg.eigvals(xp.asarray(a))), w)


@pytest.mark.parametrize("dtype", ["float32", pytest.param("float64", marks=needs("float64"))])
def test_eig_of_a_real_matrix_gives_exact_conjugate_pairs_and_exact_reals(xp, dtype):
    # as LAPACK's dgeev: SciPy's poly() tests the pairs for equality to return real coefficients
    rng = np.random.default_rng(3)
    stacks = [rng.standard_normal((4, n, n)).astype(dtype) for n in (2, 3, 5, 8, 20)]
    stacks.append(np.array([[[-2.0, -3.0], [1.0, 0.0]], [[0.0, -1.0], [1.0, 0.0]]], dtype))
    for a in stacks:
        w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(a)))
        for values, vectors, matrix in zip(w, v, a, strict=True):
            above, below = values.imag > 0, values.imag < 0
            pairs = np.sort_complex(values[above]), np.sort_complex(values[below].conj())
            np.testing.assert_array_equal(*pairs)
            # the partner's vector is the conjugate of the other's
            for k in np.flatnonzero(below):
                partners = np.flatnonzero(values == values[k].conj())
                assert any(np.array_equal(vectors[:, k], vectors[:, j].conj()) for j in partners)
            assert (values.imag == 0).sum() == (np.linalg.eigvals(matrix).imag == 0).sum()
            assert not vectors[:, values.imag == 0].imag.any()
            scale = np.abs(matrix).max() * matrix.shape[0]
            np.testing.assert_allclose(matrix @ vectors, vectors * values, atol=RTOL[dtype] * scale)
            np.testing.assert_allclose(np.linalg.norm(vectors, axis=0), 1.0, rtol=RTOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_eig_of_badly_scaled_matrices_is_balanced(xp, dtype):
    """D A D^-1 with D's powers spread over 2^+-20 has A's eigenvalues; eig balances it first
    (as LAPACK's geev), so that its deflation tests do not take a small element a large one
    multiplies for negligible: [[4, 1e8], [2e-8, 3]] had given 3 and 4 for 2 and 5. And it
    permutes a triangular matrix back to triangular."""
    rng = np.random.default_rng(11)
    a = _mat(dtype, (3, 6, 6), seed=4)
    d = np.ldexp(1.0, rng.integers(-20, 21, (3, 6)))
    scaled = (d[:, :, None] * a / d[:, None, :]).astype(dtype)
    w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(scaled)))
    _same_multiset(w, np.linalg.eigvals(a), RTOL[dtype] * 6 * 20)
    # A V = V diag(w) column by column, relative to each vector's own rows' scale
    residual = np.abs(scaled.astype(complex) @ v - v * w[:, None, :]) / (
        np.abs(scaled).sum(-1)[..., None] + 1
    )
    assert residual.max() < RTOL[dtype] * 100
    two = np.array([[4, 1e8], [2e-8, 3]], dtype)
    _same_multiset(np.asarray(xp.linalg.eigvals(xp.asarray(two)))[None], np.array([[2, 5]]), RTOL[dtype] * 10)
    # triangular matrices, their rows and columns shuffled: the balancing's permutations make them
    # triangular again, and the eigenvalues are their diagonals exactly (a 16 x 16 lower
    # triangular float32 matrix's had been complex and off by 2e-3)
    for triangle in (np.tril, np.triu):
        t = triangle(_mat(dtype, (16, 16), seed=5))
        order = rng.permutation(16)
        shuffled = t[order][:, order]
        got = np.sort_complex(np.asarray(xp.linalg.eigvals(xp.asarray(shuffled))))
        np.testing.assert_array_equal(got, np.sort_complex(np.diagonal(t).astype(got.dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_eig_of_jordan_blocks_and_unpaired_real_eigenvalues(xp, dtype):
    """A Jordan block's back substitution divides by a tiny pivot at every step: its vectors are
    rescaled and stay finite (an 8 x 8 float32 block's had 16 NaNs); and every eigenvalue of a real
    matrix without a conjugate partner is real, as LAPACK's (1 in 200 random 6 x 6 float64 ones
    had been left at 1e-15 from the axis, this seed's first)."""
    n = 30 if dtype in ("float64", "complex128") else 8  # (where each had overflowed)
    block = (2 * np.eye(n) + np.eye(n, k=1)).astype(dtype)
    w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(block)))
    assert np.isfinite(v).all()
    np.testing.assert_allclose(w, 2, atol=RTOL[dtype])
    np.testing.assert_allclose(np.abs(v[0]), 1, rtol=RTOL[dtype])  # (all along e_0)
    if np.dtype(dtype).kind == "f":
        a = np.random.default_rng(77).standard_normal((5, 5)).astype(dtype)
        values = np.asarray(xp.linalg.eigvals(xp.asarray(a)))
        assert (values.imag == 0).sum() == (np.linalg.eigvals(a).imag == 0).sum()


@needs("float64")
def test_eig_of_defective_rotation_and_diagonal_matrices(xp):
    cases = {
        "rotation": (np.array([[0.0, 1.0], [-1.0, 0.0]]), [1j, -1j]),
        "jordan": (np.array([[1.0, 1.0], [0.0, 1.0]]), [1.0, 1.0]),
        "zeros": (np.zeros((3, 3)), [0.0, 0.0, 0.0]),
        "anti-diagonal": (
            np.array([[0.0, 0.0, 1.0], [0.0, 2.0, 0.0], [3.0, 0.0, 0.0]]),
            [3**0.5, -(3**0.5), 2],
        ),
    }
    for name, (a, values) in cases.items():
        w, v = (np.asarray(t) for t in xp.linalg.eig(xp.asarray(a)))
        _same_multiset(w, np.asarray(values, complex), 1e-7)
        np.testing.assert_allclose(a @ v, v * w, atol=1e-12, err_msg=name)
