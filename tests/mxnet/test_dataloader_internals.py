"""MXNet's DataLoader internals that GluonCV and GluonNLP import and subclass (``_MultiWorkerIter``,
``_thread_worker_fn``, ``_worker_fn``, ``_as_in_context``, ``ForkingPickler``), against MXNet 1.9.1."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

INPUTS = {"x": np.arange(40, dtype=np.float32).reshape(10, 4), "y": np.arange(10, dtype=np.float32)}


@pytest.mark.oracle
def test_multi_worker_iter_over_a_thread_pool_gives_mxnets_batches(both):
    both("from multiprocessing.pool import ThreadPool\n"
         "from mxnet.gluon.data.dataloader import _MultiWorkerIter, _thread_worker_fn, default_batchify_fn\n"
         "from mxnet.gluon.data.dataloader import _as_in_context\n"
         "ds = gluon.data.ArrayDataset(nd.array(inp['x']), nd.array(inp['y']))\n"
         "bs = gluon.data.BatchSampler(gluon.data.RandomSampler(len(ds)), 3, 'keep')\n"
         "np.random.seed(2)\npool = ThreadPool(2)\n"
         "it = _MultiWorkerIter(pool, default_batchify_fn, bs, worker_fn=_thread_worker_fn, prefetch=2, dataset=ds)\n"
         "meta['len'] = len(it)\n"
         "for i, (a, b) in enumerate(it):\n    out['a%d' % i], out['b%d' % i] = a, b\n"
         "pool.close()\n"
         "c = _as_in_context([nd.ones(2), (nd.zeros(1), 3)], mx.cpu())\n"
         "meta['c'] = [type(c).__name__, type(c[1]).__name__, type(c[1][0]).__name__, c[1][1]]\n", **INPUTS)


def test_forking_pickler_and_worker_fn_round_trip_a_batch(mx):
    from mxnet.gluon.data import dataloader

    ds = mx.gluon.data.ArrayDataset(mx.nd.array(INPUTS["x"]), mx.nd.array(INPUTS["y"]))
    dataloader._worker_initializer(ds)
    try:
        a, b = pickle.loads(dataloader._worker_fn([3, 1, 4], dataloader.default_mp_batchify_fn))
    finally:
        dataloader._worker_initializer(None)
    np.testing.assert_array_equal(a.asnumpy(), INPUTS["x"][[3, 1, 4]])
    np.testing.assert_array_equal(b.asnumpy(), INPUTS["y"][[3, 1, 4]])
    buf = io.BytesIO()
    dataloader.ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump([mx.nd.ones((2, 2))])
    assert pickle.loads(buf.getvalue())[0].asnumpy().tolist() == [[1, 1], [1, 1]]
