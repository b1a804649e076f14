"""Values MXNet writes where ast-hybrid silently did not (issue 30, "silent wrong values"), each run as a user
runs it, by MXNet 1.9.1 and under ``ast-hybrid run``, printing the same lines: ``nd.ones/zeros/full(...,
out=o)`` fill ``o``; ``autograd.mark_variables([x], [dx])`` then ``backward()`` writes the gradient into
``dx``; ``load_parameters(..., cast_dtype=True, dtype_source='saved')`` gives the parameters the file's
dtype (``'current'``: the block's); ``x[:]`` of a 0-d array reads and writes all of it."""

from __future__ import annotations

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = """
from mxnet import nd, autograd
from mxnet.gluon import nn
o = nd.zeros((2, 2)) + 5
nd.ones((2, 2), out=o); print("ones out", o.asnumpy().tolist())
nd.zeros((2, 2), out=o); print("zeros out", o.asnumpy().tolist())
r = nd.full((2, 2), 3, out=o); print("full out", o.asnumpy().tolist(), r.asnumpy().tolist())
x = nd.array([1., 2., 3.]); dx = nd.zeros((3,))
autograd.mark_variables([x], [dx])
with autograd.record():
    y = (x * x).sum()
y.backward(); print("mark_variables dx", dx.asnumpy().tolist(), x.grad.asnumpy().tolist())
with autograd.record():
    y = (x * 3).sum()
y.backward(); print("again", dx.asnumpy().tolist())
net = nn.Dense(2, in_units=3); net.initialize(); net.cast('float16'); net.save_parameters('h.params')
net2 = nn.Dense(2, in_units=3); net2.load_parameters('h.params', cast_dtype=True, dtype_source='saved')
print("saved", net2.weight.dtype, net2.weight.data().dtype)
net3 = nn.Dense(2, in_units=3); net3.load_parameters('h.params', cast_dtype=True, dtype_source='current')
print("current", net3.weight.data().dtype)
import mxnet as mx
with mx.util.np_shape(True):            # a 0-d array's x[:]: all of it, read and written
    z = nd.array(3.0).reshape(())
    print("0-d read", z[:].shape, float(z[:].asnumpy()))
    z[:] = 5
    print("0-d written", z.shape, float(z.asnumpy()))
"""


def test_values_written_where_mxnet_writes_them(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs


def test_out_of_another_dtype_is_refused_as_mxnet_refuses_it():
    """MXNet: ``Type inconsistent, Provided = int32, inferred type = float32``; here an error saying so."""
    from ast_hybrid import nd

    i = nd.zeros((2,), dtype="int32")
    with pytest.raises(ValueError, match="out= is int32, the result float32"):
        nd.ones((2,), out=i)
    assert i.asnumpy().tolist() == [0, 0]


DOOR = """
import mxnet as mx
ns = {}
exec("from mxnet.autograd import *", ns)
print([k for k in ("record", "backward", "Function", "NDArray", "array") if k in ns])
print(ns["array"].__module__, ns["NDArray"] is mx.nd.NDArray, mx.cpu(1), mx.cpu(1) == mx.cpu(1), mx.cpu(3) == mx.cpu(0))
print(mx.nd.ones((2,), ctx=mx.cpu(1)).asnumpy().tolist())
with mx.cpu(2):
    print(mx.current_context(), mx.nd.zeros((1,)).asnumpy().tolist())
"""


def test_what_mxnet_accepts_at_its_door(tmp_path):
    """``from mxnet.autograd import *`` gives the array names MXNet's gives; ``mx.cpu(i)`` for any ``i`` is
    a CPU context (MXNet accepts any index: all CPU contexts share the host's memory).  Where ours differs:
    an array made on ``cpu(1)`` says ``cpu(0)``, the device it is on (an array's context is its device's)."""
    ours, theirs = run_both(DOOR, tmp_path)
    assert ours == theirs


CONTEXTS = """
import mxnet as mx
from mxnet import gluon, autograd, nd
from mxnet.gluon import nn
x = gluon.Parameter('x', shape=(4,))
x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0, 'momentum': 0.5})
for step in range(2):
    with autograd.record():
        for k, w in enumerate(x.list_data()):
            y = (w + 1) * (k + 1)
            y.backward()
    print("grads", [g.asnumpy().tolist() for g in x.list_grad()], x.grad(mx.cpu(1)).asnumpy().tolist())
    trainer.step(1)
    print("data", [d.asnumpy().tolist() for d in x.list_data()], len(x.list_ctx()))
net = nn.Dense(3, in_units=4)
net.initialize(mx.init.Constant(0.1), ctx=[mx.cpu(0), mx.cpu(1)])
net.hybridize()
tr = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.1})
data = nd.arange(16).reshape((4, 4)) / 10
for step in range(2):
    with autograd.record():
        losses = [net(d).sum() for d in gluon.utils.split_and_load(data, [mx.cpu(0), mx.cpu(1)])]
    for l in losses:
        l.backward()
    tr.step(4)
print("dense", [round(v, 5) for v in net.weight.data(mx.cpu(1)).asnumpy().ravel().tolist()])
"""


def test_several_cpu_contexts_on_one_cpu(tmp_path):
    """``ctx=[mx.cpu(0), mx.cpu(1)]`` on a machine with one CPU device, as MXNet's own tests and multi-context
    scripts write it: one value per context, each context's backward its own gradient, ``Trainer.step`` their
    sum; a hybridized network trained on ``split_and_load``'s slices gets MXNet's weights."""
    ours, theirs = run_both(CONTEXTS, tmp_path)
    assert ours == theirs


BOOLEANS = """
import numpy as np
from mxnet import gluon, np as mnp, npx
npx.set_np()

class Divide(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b):
        return F.np.true_divide(a, b)

a = mnp.array(np.array([[False, False], [True, False], [False, False]]))
b = mnp.array(np.array([[False], [False], [True]]))
net = Divide()
print("plain", net(a, b).asnumpy().tolist())
net.hybridize()
print("compiled", net(a, b).asnumpy().tolist())
"""


def test_boolean_true_division_compiled_as_mxnet(tmp_path):
    """``F.np.true_divide`` of two bool arrays inside a hybridized block: 0 / 0 is nan, as MXNet gives (XLA
    rewrote ``float(bool) / y`` into ``select(bool, 1 / y, 0)``, 0 there)."""
    ours, theirs = run_both(BOOLEANS, tmp_path)
    assert ours == theirs
