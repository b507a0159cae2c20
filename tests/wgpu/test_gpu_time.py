"""gpu_time(): the GPU's own time for a block's work, from timestamps written around each pass."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
from ruda.testing import parametrize_backends

pytestmark = parametrize_backends("wgpu")


def _device(xp):
    return xp.__array_namespace_info__().default_device()


@pytest.fixture
def timed(xp):
    if "timestamp-query" not in _device(xp).features:
        pytest.skip("the adapter offers no timestamp queries")
    return xp


def test_the_block_s_work_takes_gpu_time_within_its_wall_time(timed):
    xp = timed
    x = xp.asarray(np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32))
    xp.synchronize()
    start = time.perf_counter()
    with xp.gpu_time() as t:
        ys = [xp.exp(x) for _ in range(3)]
    wall = time.perf_counter() - start
    assert t.passes >= 1
    assert 0 < t.seconds <= wall  # the block waits for its work: the GPU cannot have taken longer
    np.testing.assert_allclose(np.asarray(ys[2]), np.exp(np.asarray(x)), rtol=1e-6)


def test_work_recorded_before_the_block_is_not_counted(timed):
    xp = timed
    x = xp.ones((1 << 20,))
    pending = xp.sin(x) * 2.0  # recorded, not run: the block's entry runs it, outside the timer
    with xp.gpu_time() as t:
        pass
    assert (t.passes, t.seconds) == (0, 0.0)
    assert float(pending[0]) == pytest.approx(2 * np.sin(1.0), rel=1e-6)


def test_pending_work_of_the_block_is_run_and_counted(timed):
    xp = timed
    x = xp.ones((1 << 16,))
    with xp.gpu_time() as t:
        y = xp.sqrt(x + 3.0)  # still pending when the block ends
    assert t.passes == 1 and t.seconds > 0
    assert float(y[-1]) == 2.0


def test_more_batches_than_a_query_set_holds(timed):
    """Each read submits a batch of one pass; past half the query set the timer reads its pairs
    back within the block and starts over, losing none."""
    from ruda_wgpu._gpu_time import COLLECT_AT

    xp = timed
    x = xp.ones((1000,))
    batches = COLLECT_AT // 16 + 20  # (each batch's pairs start at a 256-byte aligned place)
    with xp.gpu_time() as t:
        total = sum(float(xp.sum(x * k)) for k in range(batches))
    assert total == 1000 * sum(range(batches))
    assert t.passes == batches


def test_blocks_do_not_nest_and_a_failed_block_detaches(timed):
    xp = timed
    with pytest.raises(RuntimeError, match="do not nest"), xp.gpu_time(), xp.gpu_time():
        pass
    x = xp.ones((10,))
    with xp.gpu_time() as t:  # the failed outer block let go of the device
        y = x + 1.0
    assert t.passes == 1 and float(y[0]) == 2.0


def test_an_adapter_without_timestamp_queries_is_refused_by_name(xp):
    from ruda_wgpu._gpu_time import GpuTimer

    fake = SimpleNamespace(features=frozenset(), name="wgpu:9", description="Some GPU (Vulkan)")
    with pytest.raises(RuntimeError, match=r"wgpu:9 \(Some GPU \(Vulkan\)\).*'timestamp-query'"):
        GpuTimer(fake)  # type: ignore[arg-type]
