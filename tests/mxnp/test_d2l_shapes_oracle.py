"""What the d2l notebooks (issue 30 item 2; ``python -m ast_hybrid.conformance.d2l``) found, as small programs
of our own written to the notebooks' shapes, run by MXNet 1.9.1 and under ``ast-hybrid run``: the same lines.

- writes into ``param.data()`` reach the parameter (conv-layer's ``conv2d.weight.data()[:] -= lr * grad``,
  parameters' ``net[0].weight.data()[0, 0] = 42``), nd and np alike;
- ``mx.np`` basic indexing is a view (``a[0]``, ``a[1:]``) and a column is a copy, as nd's; a value with
  leading 1s more than its target drops them (sequence's ``multistep_preds[i] = net(...)``);
- a custom ``Initializer`` fills an ``mx.np`` array under ``npx.set_np()`` (``data *= np.abs(data) >= 5``);
- a parameter not yet shaped prints ``-1`` for the unknown dimension in np mode (deferred-init);
- ``np.maximum(X, 0)`` differentiates (mlp-scratch's relu), float index arrays index (``y_hat[[0, 1], y]``),
  ``HybridBlock.export`` returns None (hybridize), and ``np.genfromtxt`` reads the optimization chapter's data."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import os, tempfile
import mxnet as mx
from mxnet import autograd, init, nd, np, npx
from mxnet.gluon import nn

def r(a):
    return [round(v, 4) for v in a.asnumpy().ravel().tolist()]

for mode in ("nd", "np"):
    if mode == "np":
        npx.set_np()
    lib = np if mode == "np" else nd
    conv = nn.Conv2D(1, kernel_size=(1, 2), use_bias=False)
    conv.initialize(init.Constant(0.5))
    X = lib.ones((1, 1, 2, 3))
    for step in range(2):
        with autograd.record():
            l = ((conv(X) - 1) ** 2).sum()
        l.backward()
        conv.weight.data()[:] -= 0.1 * conv.weight.grad()
        print(mode, step, r(conv.weight.data()))
    w = conv.weight.data()
    w[0, 0, 0, 1] = 42
    print(mode, "set", r(conv.weight.data()), r(conv(X)))

a = np.zeros((2, 3))
b = a[0]; b[:] = 1
c = a[:, 1]; c[:] = 7
d = a[1:]; d += 2
print("views", r(a))
m = np.zeros(4)
m[1] = np.ones((1, 1)) * 3                 # sequence's multistep_preds[i] = net(...): a (1, 1) into one element
m[2:4] = np.ones((1, 2)) * 5
print("setitem", r(m))

class MyInit(init.Initializer):
    def _init_weight(self, name, data):
        print("init", name, data.shape, type(data).__name__)
        data[:] = np.arange(data.size).reshape(data.shape) - 3
        data *= np.abs(data) >= 2

net = nn.Sequential()
net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
print(net)
print(net.collect_params())
net.initialize(MyInit())
net(np.ones((1, 3)))
print(r(net[0].weight.data()))

x = np.array([-1.0, 0.0, 2.0])
x.attach_grad()
with autograd.record():
    y = (np.maximum(x, 0) * np.array([1.0, 2.0, 3.0])).sum()
y.backward()
print("maximum grad", r(x.grad))
y_hat = np.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
print("float index", r(y_hat[[0, 1], np.array([0.0, 2.0])]), r(y_hat[np.array([1.0])]))

net2 = nn.HybridSequential()
net2.add(nn.Dense(2))
net2.initialize()
net2.hybridize()
net2(np.ones((1, 3)))
print("export", net2.export(os.path.join(tempfile.mkdtemp(), "m")))
path = os.path.join(tempfile.mkdtemp(), "airfoil.dat")
with open(path, "w") as f:
    f.write("1\t2.5\t3\n4\t5\t6.25\n")
data = np.genfromtxt(path, dtype=np.float32, delimiter="\t")       # d2l's get_data_ch11
print("genfromtxt", type(data).__name__, data.dtype, r(data))
'''


def test_the_notebooks_shapes_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert "np set" in "\n".join(ours) and "export None" in ours


GRAD_WRITES = r'''
import math
from mxnet import autograd, nd, np, npx, gluon
from mxnet.gluon import nn
for mode in ("nd", "np"):
    if mode == "np":
        npx.set_np()
    lib = np if mode == "np" else nd
    w = lib.array([3.0, 4.0]); w.attach_grad()
    with autograd.record():
        l = (w * w).sum()
    l.backward()
    norm = math.sqrt((w.grad ** 2).sum().asnumpy().item())
    w.grad[:] *= 1.0 / norm
    print(mode, w.grad)
    net = nn.Dense(2, in_units=2); net.initialize()
    with autograd.record():
        l = net(lib.ones((1, 2))).sum()
    l.backward()
    for p in net.collect_params().values():
        p.grad()[:] = 0.5
    print(mode, [p.grad() for p in net.collect_params().values()])
    ps = [p.data() for p in net.collect_params().values()]
    for p in ps:
        p.grad[:] *= 2
    print(mode, [p.grad() for p in net.collect_params().values()])
'''


def test_writes_into_gradients_reach_them_as_mxnet(tmp_path):
    """d2l's ``grad_clipping`` (``param.grad[:] *= theta / norm`` on attached arrays and on ``p.data()``) and
    ``p.grad()[:] = 0.5``: the gradient changes, nd and np alike (it was a copy: the RNN notebooks' clipping did
    nothing and their training diverged)."""
    ours, theirs = run_both(GRAD_WRITES, tmp_path)
    assert ours == theirs and "np [0.6 0.8]" in ours


LOAD_ARRAY = r'''
import numpy as onp
import mxnet as mx
from mxnet import gluon, nd, np, npx
def show(loader):
    for b in loader:
        if isinstance(b, list):
            print([(type(x).__name__, x.dtype, x.shape, x.asnumpy().ravel()[:4].tolist()) for x in b])
        else:
            print(type(b).__name__, b.dtype, b.shape, b.asnumpy().ravel()[:4].tolist())
X = nd.arange(24).reshape((6, 4)); y = nd.arange(6); z = onp.arange(12, dtype='int32').reshape(6, 2)
onp.random.seed(0)
show(gluon.data.DataLoader(gluon.data.ArrayDataset(X, y), batch_size=4, shuffle=True))
show(gluon.data.DataLoader(gluon.data.ArrayDataset(X, y, z), batch_size=4, last_batch='discard'))
show(gluon.data.DataLoader(gluon.data.ArrayDataset(X), batch_size=5))
show(gluon.data.DataLoader(gluon.data.ArrayDataset(onp.ones(5, 'float32')), batch_size=5))
npx.set_np()
Xn = np.arange(24).reshape(6, 4); yn = np.arange(6)
show(gluon.data.DataLoader(gluon.data.ArrayDataset(Xn, yn), batch_size=4, shuffle=True))
'''


def test_an_array_datasets_batches_as_mxnet(tmp_path):
    """d2l's ``load_array`` (``DataLoader(ArrayDataset(*arrays), batch_size, shuffle)``): the batches, now
    gathered in one indexing per field instead of sample by sample (the Kaggle notebook 9x MXNet's time), are
    MXNet's: values in the shuffled order, dtypes, classes, the short last batch, nd and np."""
    ours, theirs = run_both(LOAD_ARRAY, tmp_path)
    assert ours == theirs and len(ours) == 8
