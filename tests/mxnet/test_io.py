"""``mx.io.NDArrayIter`` against MXNet 1.9.1: two or three epochs of every batch (data, label, pad), with
each ``last_batch_handle``, shuffling (numpy's generator seeded on both sides), lists and dicts of sources,
and ``provide_data``/``provide_label``."""

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

X = np.arange(7 * 3, dtype="float32").reshape(7, 3)
Y = np.arange(7, dtype="int32") * 10
Z = np.linspace(0, 1, 7 * 2 * 2).reshape(7, 2, 2)

ITERATE = """
np.random.seed(4)
it = mx.io.NDArrayIter({args})
for d in it.provide_data + it.provide_label:
    meta.setdefault('provide', []).append([d.name, list(d.shape), np.dtype(d.dtype).name, d.layout])
for epoch in range({epochs}):
    for i, batch in enumerate(it):
        for j, a in enumerate(batch.data):
            out['e%d_b%d_d%d' % (epoch, i, j)] = a
        for j, a in enumerate(batch.label or []):
            out['e%d_b%d_l%d' % (epoch, i, j)] = a
        meta.setdefault('pads', []).append([epoch, i, batch.pad, type(batch).__name__])
    it.reset()
"""

CASES = [
    "inp['x'], inp['y'], batch_size=3",
    "inp['x'], inp['y'], batch_size=3, last_batch_handle='discard'",
    "inp['x'], inp['y'], batch_size=3, last_batch_handle='roll_over'",
    "inp['x'], inp['y'], batch_size=2, last_batch_handle='roll_over', shuffle=True",
    "inp['x'], inp['y'], batch_size=3, shuffle=True",
    "inp['x'], batch_size=16",                                   # the pad repeats the data
    "inp['x'], batch_size=7",
    "[inp['x'], inp['z']], [inp['y']], batch_size=4",
    "{'b': inp['x'], 'a': nd.array(inp['z'])}, {'lab': inp['y']}, batch_size=5, data_name='ignored'",
    "nd.array(inp['x']), nd.array(inp['y']), 4, False, 'pad', 'img', 'lbl', 'NCHW'",
]


@pytest.mark.parametrize("args", CASES)
def test_batches_and_pads_match_mxnet(both, args):
    ours, _ = both(ITERATE.format(args=args, epochs=3), x=X, y=Y, z=Z)
    assert ours["meta"]["pads"]


def test_iter_next_getdata_and_hard_reset_match_mxnet(both):
    both("""
it = mx.io.NDArrayIter(inp['x'], inp['y'], batch_size=3, last_batch_handle='roll_over')
n = 0
while it.iter_next():
    out['d%d' % n] = it.getdata()[0]
    meta.setdefault('pads', []).append(it.getpad())
    n += 1
it.reset()
b = it.next()
out['rolled'] = b.data[0]
it.hard_reset()
out['hard'] = it.next().data[0]
meta['batch_size'] = it.batch_size
meta['num_data'] = it.num_data
meta['str'] = str(b)
""", x=X, y=Y)


def test_data_desc_and_batch_match_mxnet(both):
    both("""
d = mx.io.DataDesc('data', (4, 3, 2, 2), layout='NHWC')
meta['desc'] = [d.name, list(d.shape), np.dtype(d.dtype).name, d.layout, repr(d), tuple(d) == ('data', (4, 3, 2, 2))]
meta['axis'] = [mx.io.DataDesc.get_batch_axis('TNC'), mx.io.DataDesc.get_batch_axis(None)]
meta['list'] = [repr(x) for x in mx.io.DataDesc.get_list([('a', (1, 2))], [('a', np.int32)])]
b = mx.io.DataBatch([nd.ones((2, 3))], [nd.zeros((2,))], pad=1)
meta['batch'] = [str(b), b.pad, b.index, b.bucket_key]
meta['isiter'] = isinstance(mx.io.NDArrayIter(np.ones((2, 2))), mx.io.DataIter)
""")


def test_training_loop_over_ndarrayiter_runs_unchanged(both):
    """The MXNet-tutorial loop: batches from NDArrayIter into a Gluon net and trainer."""
    both("""
from mxnet import autograd
net = gluon.nn.Dense(2, in_units=3)
net.initialize()
net.weight.set_data(nd.array(np.linspace(-1, 1, 6).reshape(2, 3)))
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01})
it = mx.io.NDArrayIter(inp['x'], inp['y'] % 2, batch_size=2, last_batch_handle='discard')
lossfn = gluon.loss.SoftmaxCrossEntropyLoss()
for epoch in range(2):
    it.reset()
    for batch in it:
        with autograd.record():
            l = lossfn(net(batch.data[0]), batch.label[0])
        l.backward()
        trainer.step(batch.data[0].shape[0])
out['w'] = net.weight.data()
""", rtol=1e-5, x=X, y=Y)
