"""``mxnet.gluon.data`` against MXNet 1.9.1: samplers, dataset views, ``DataLoader``, RecordIO files.

Each test runs one piece of MXNet code in MXNet and under ``import mxnet`` on ast-hybrid (the ``both``
fixture) and compares every output.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.oracle


def _batches(expr):
    """Code that records the batches of index lists ``expr`` gives, flattened, with their lengths."""
    return (f"bs = [list(map(int, b)) for b in {expr}]\n"
            "meta['batches'] = bs\n")


@pytest.mark.parametrize("last_batch", ["keep", "discard", "rollover"])
def test_batch_sampler(both, last_batch):
    both(f"s = gluon.data.BatchSampler(gluon.data.SequentialSampler(10, 3), 4, {last_batch!r})\n"
         "meta['lens'] = [len(s)]\n"
         "meta['epochs'] = [[list(map(int, b)) for b in s] for _ in range(3)]\n"
         "meta['lens'].append(len(s))\n")


def test_batch_sampler_refuses_an_unknown_last_batch(both):
    both("s = gluon.data.BatchSampler(gluon.data.SequentialSampler(5), 2, 'pad')\n"
         "try:\n    list(s)\nexcept ValueError as e:\n    meta['iter'] = str(e)\n"
         "try:\n    len(s)\nexcept ValueError as e:\n    meta['len'] = str(e)\n")


def test_random_sampler_draws_numpy_s_generator(both):
    both("np.random.seed(7)\n"
         "s = gluon.data.RandomSampler(12)\n"
         "meta['perm'] = [[int(i) for i in s] for _ in range(2)] + [len(s)]\n")


def test_filter_sampler(both):
    both("s = gluon.data.FilterSampler(lambda x: x % 3 != 1, list(range(11)))\n"
         "meta['idx'] = [list(s), len(s)]\n")


VIEWS = [
    "d.transform(lambda x, y: (x * 2, y + 1))",
    "d.transform(lambda x, y: (x * 2, y + 1), lazy=False)",
    "d.transform_first(lambda x: x - 1)",
    "d.transform_first(lambda x: x - 1, lazy=False)",
    "d.filter(lambda s: s[1] % 2 == 0)",
    "d.shard(3, 0)", "d.shard(3, 1)", "d.shard(3, 2)", "d.shard(4, 3)",
    "d.take(4)", "d.take(None)", "d.take(50)",
    "d.sample(gluon.data.SequentialSampler(3, 2))",
    "d.transform_first(lambda x: x * 10).filter(lambda s: s[1] > 3).take(2)",
]


@pytest.mark.parametrize("view", VIEWS)
def test_dataset_views(both, view):
    both("d = gluon.data.ArrayDataset(inp['x'], inp['y'])\n"
         f"v = {view}\n"
         "meta['n'] = len(v)\n"
         "out['x'] = np.stack([np.asarray(v[i][0]) for i in range(len(v))])\n"
         "out['y'] = np.array([v[i][1] for i in range(len(v))], dtype=np.int64)\n",  # numpy 1 vs 2 scalar rules
         x=np.arange(22, dtype=np.float32).reshape(11, 2), y=np.arange(11, dtype=np.int32))


def test_array_dataset_keeps_a_1d_ndarray_as_numpy(both):
    both("d = gluon.data.ArrayDataset(nd.array(inp['x']), nd.array(inp['y']), [5, 6, 7])\n"
         "x, y, z = d[1]\n"
         "meta['types'] = [type(x).__name__, type(y).__name__, type(z).__name__, str(y.dtype), len(d)]\n"
         "out['x'] = x.asnumpy()\n"
         "one = gluon.data.ArrayDataset(inp['y'])\n"
         "meta['one'] = [float(one[2]), len(one)]\n"
         "s = gluon.data.SimpleDataset([3, 1, 2])\n"
         "meta['simple'] = [s[1], len(s)]\n",
         x=np.arange(6, dtype=np.float32).reshape(3, 2), y=np.array([0.5, 1.5, 2.5], dtype=np.float32))


LOADERS = [
    "gluon.data.DataLoader(ds, batch_size=4)",
    "gluon.data.DataLoader(ds, batch_size=4, last_batch='keep')",
    "gluon.data.DataLoader(ds, batch_size=4, last_batch='discard')",
    "gluon.data.DataLoader(ds, batch_size=4, last_batch='rollover')",
    "gluon.data.DataLoader(ds, batch_size=3, shuffle=True)",
    "gluon.data.DataLoader(ds, batch_size=3, shuffle=True, last_batch='rollover')",
    "gluon.data.DataLoader(ds, batch_size=4, num_workers=2)",
    "gluon.data.DataLoader(ds, batch_size=2, sampler=gluon.data.SequentialSampler(5, 4))",
    "gluon.data.DataLoader(ds, batch_sampler=gluon.data.BatchSampler(gluon.data.RandomSampler(10), 3, 'discard'))",
    "gluon.data.DataLoader(ds, batch_size=4, batchify_fn=lambda s: nd.array(np.stack([x.asnumpy().sum(0) for x, "
    "y in s])))",
]


@pytest.mark.parametrize("loader", LOADERS)
def test_dataloader_batches(both, loader):
    """Two epochs of NDArray data with numpy labels (stacked; numpy's dtype kept), shuffles seeded alike."""
    both("np.random.seed(3)\n"
         "ds = gluon.data.ArrayDataset(nd.array(inp['x']), inp['y'])\n"
         f"dl = {loader}\n"
         "meta['len'] = len(dl)\n"
         "k = 0\n"
         "for epoch in range(2):\n"
         "    for b in dl:\n"
         "        parts = b if isinstance(b, list) else [b]\n"
         "        for j, p in enumerate(parts):\n"
         "            out[f'{k}_{j}'] = p.asnumpy()\n"
         "            meta[f'{k}_{j}'] = [type(p).__name__, str(p.dtype)]\n"
         "        k += 1\n",
         x=np.arange(30, dtype=np.float32).reshape(10, 3), y=np.arange(10, dtype=np.int32) * 2)


@pytest.mark.parametrize("sample", ["(nd.array(inp['x'][i]), (float(i), i))", "(inp['x'][i], i, float(i))",
                                    "[float(i), float(i) + 1]", "np.float32(i)",
                                    "nd.array(inp['x'][i]).reshape((1, 3))"])
def test_default_batchify(both, sample):
    """Python numbers become float64/int64 arrays in MXNet, jax's default dtypes here (x64=False)."""
    both(f"data = [{sample} for i in range(4)]\n"
         "b = gluon.data.dataloader.default_batchify_fn(data)\n"
         "def flat(b, key):\n"
         "    if isinstance(b, list) and not isinstance(b[0], (int, float)):\n"
         "        meta[key] = 'list'\n"
         "        for j, p in enumerate(b):\n"
         "            flat(p, f'{key}_{j}')\n"
         "    else:\n"
         "        meta[key] = type(b).__name__\n"
         "        out[key] = b.asnumpy()\n"
         "flat(b, 'b')\n", x64=False,
         x=np.arange(12, dtype=np.float32).reshape(4, 3))


@pytest.mark.parametrize("args", ["batch_size=2, shuffle=True, sampler=gluon.data.SequentialSampler(4)",
                                  "batch_sampler=gluon.data.BatchSampler(gluon.data.SequentialSampler(4), 2), "
                                  "batch_size=2", "shuffle=True"])
def test_dataloader_refuses_what_mxnet_refuses(both, args):
    both(f"try:\n    gluon.data.DataLoader(list(range(4)), {args})\n"
         "except ValueError as e:\n    meta['error'] = str(e)\n")


def test_record_file_dataset_reads_mxnet_s_records(oracle, mx, tmp_path):
    """Records written by MXNet's ``MXIndexedRecordIO`` (one holding the magic number, so split in parts)."""
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    payloads = [b"", b"abc", b"x" * 13, b"pre" + (0xced7230a).to_bytes(4, "little") + b"post", bytes(range(256))]
    oracle.run(f"w = mx.recordio.MXIndexedRecordIO({idx!r}, {rec!r}, 'w')\n"
               f"for i, p in enumerate({payloads!r}):\n    w.write_idx(i * 2, p)\n"
               "w.close()\n")
    theirs = oracle.run(f"d = gluon.data.RecordFileDataset({rec!r})\n"
                        "meta['r'] = [len(d)] + [list(d[i]) for i in range(len(d))]\n")["meta"]["r"]
    d = mx.gluon.data.RecordFileDataset(rec)
    assert [len(d)] + [list(d[i]) for i in range(len(d))] == theirs
