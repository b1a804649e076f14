"""Autograd's bookkeeping as MXNet 1.9.1 keeps it (its ``test_autograd.py`` checks each): a gradient array
given to ``mark_variables`` is the gradient (``dx[:] = 0`` resets what ``grad_req='add'`` adds to), a second
backward through a graph freed by the first is an error, the identity Dropout of predict mode is on the tape,
``_fresh_grad`` says whether a backward wrote the gradient since the Trainer's last update, a Trainer step
on a stale gradient is MXNet's error, an in-place write while recording is MXNet's error where MXNet's
``RecordOp`` refuses it, relu's gradient passes a NaN on, and gradients recorded with ``create_graph=True``
differentiate again.  Scripts run by MXNet and under ``ast-hybrid run``: the same lines."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import mxnet as mx
from mxnet import autograd, gluon, nd

x = nd.ones((2, 2))
dx = nd.zeros((2, 2))
autograd.mark_variables([x], [dx], grad_reqs="add")
with autograd.record():
    y = x * 3 + 1
y.backward(retain_graph=False)
print("add", dx.asnumpy().tolist())
dx[:] = 0
with autograd.record():
    y = x * 3 + 1
y.backward(retain_graph=True)
y.backward(retain_graph=False)
print("reset then twice", dx.asnumpy().tolist(), x.grad.asnumpy().tolist())
try:
    y.backward()
    print("third backward: no error")
except Exception as exc:        # MXNet's MXNetError, ours RuntimeError: both say why
    print("third backward:", "computational graph" in str(exc))

a = nd.array([[1., -2.], [3., 4.]])
a.attach_grad()
for train in (True, False):
    with autograd.record(train_mode=train):
        y = nd.Dropout(a * 2, p=0.5) if not train else nd.Dropout(a * 2, p=0.0)
    y.backward()
    print("dropout train" if train else "dropout predict", a.grad.asnumpy().tolist())

w = nd.ones((2,))
dw = nd.zeros((2,))
v = nd.ones((2,))
autograd.mark_variables([w, v], [dw, nd.zeros((2,))])
print("fresh before", w._fresh_grad, v._fresh_grad)
with autograd.record():
    z = (w * 2).detach() + v
z.backward()
print("fresh after", w._fresh_grad, v._fresh_grad, dw.asnumpy().tolist())

def inplace(label, fn):
    try:
        fn()
        print(label, "allowed")
    except mx.base.MXNetError as exc:
        print(label, "Inplace operations" in str(exc), "already in a computational graph" in str(exc))


leaf = nd.ones((2,))
leaf.attach_grad()
plain, free = nd.zeros((2,)), nd.zeros((2,))
with autograd.record():
    inplace("+= on a variable", lambda: leaf.__iadd__(1))
    inplace("[:]= of a recorded value", lambda: plain.__setitem__(slice(None), leaf * 2))
    inplace("[:]= of a constant", lambda: free.__setitem__(slice(None), 3))
print("after", plain.asnumpy().tolist(), free.asnumpy().tolist())

n = nd.array([float("nan"), -1., 2.])
n.attach_grad()
with autograd.record():
    r = nd.relu(n)
r.backward()
print("relu at nan", n.grad.asnumpy().tolist())
idx = nd.arange(24).reshape((2, 3, 4))
print("tuple in index", idx[[0, 1], (1, 2), 1:3].asnumpy().tolist())

net = gluon.nn.Dense(2, in_units=3)
net.initialize(mx.init.One())
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
with autograd.record():
    loss = net(nd.ones((4, 3))).sum()
loss.backward()
print("param fresh", net.weight.data()._fresh_grad, [p._fresh_grad for p in net.weight.list_grad()] == [False])
trainer.step(4)
print("weight", net.weight.data().asnumpy().tolist())
try:
    trainer.step(4)
    print("stale step: no error")
except UserWarning as exc:
    print("stale step:", "has not been updated by backward since last" in str(exc))
trainer.step(4, ignore_stale_grad=True)
print("weight after ignored", net.weight.data().asnumpy().tolist())
'''


def test_autograd_bookkeeping_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert "stale step: True" in ours and "third backward: True" in ours


HIGHER_ORDER = r'''
import mxnet as mx
x = mx.nd.array([1.0, 0.5])
x.attach_grad()
with mx.autograd.record():
    z = mx.nd.elemwise_add(mx.nd.exp(x), x)
dx, = mx.autograd.grad(z, [x], create_graph=True)
print([round(v, 5) for v in dx.asnumpy().tolist()])
dx.backward()
print([round(v, 5) for v in x.grad.asnumpy().tolist()])
y = mx.nd.array([2.0, -1.0]); y.attach_grad()
with mx.autograd.record():
    w = mx.nd.sin(y)
    g, = mx.autograd.grad(w, [y], create_graph=True, retain_graph=True)
    h = mx.nd.elemwise_mul(g, g)
h.backward()
print([round(v, 5) for v in g.asnumpy().tolist()], [round(v, 5) for v in y.grad.asnumpy().tolist()])
'''


def test_gradients_of_gradients_as_mxnet(tmp_path):
    """``autograd.grad(..., create_graph=True)`` puts the gradients on the tape: a backward through them gives
    second derivatives (MXNet's test_autograd.py::test_gradient)."""
    ours, theirs = run_both(HIGHER_ORDER, tmp_path)
    assert ours == theirs and len(ours) == 3


NP_SETITEM = r'''
import mxnet as mx
from mxnet import np, npx
npx.set_np()
for index in [slice(None), (slice(None), 1), ()]:
    x = np.ones((2, 3))
    out_shape = x[index].shape
    y = np.array(np.random.uniform(size=out_shape))
    y.attach_grad()
    try:
        with mx.autograd.record():
            x[index] = y
            x.backward()
        print(index, "grad", y.grad.asnumpy().tolist())
    except mx.base.MXNetError as err:
        print(index, "error", "Inplace" in str(err))
'''


def test_np_setitem_while_recording_as_mxnet(tmp_path):
    """``mx.np`` arrays: ``x[:] = y`` while recording is a recorded copy (the gradient reaches ``y``); a partial
    write of a recorded value is MXNet's in-place error."""
    ours, theirs = run_both(NP_SETITEM, tmp_path)
    assert ours == theirs and "error True" in ours[1]


SCRATCH_SGD = r'''
import mxnet as mx
from mxnet import autograd, nd, np, npx

def train(make, dot, steps=3):
    w, b = make([[0.5], [-1.0]]), make([0.1])
    params = [w, b]
    for p in params:
        p.attach_grad()
    X, y = make([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]), make([[1.0], [2.0], [0.0]])
    for step in range(steps):
        with autograd.record():
            l = ((dot(X, w) + b - y) ** 2 / 2).sum() + 0 * (w ** 2).sum()
        l.backward()
        for p in params:                   # d2l's sgd: a write into each variable, outside the record
            p[:] = p - 0.1 * p.grad / 3
        print(step, round(float(l.asnumpy().sum()), 5), [round(v, 5) for v in w.asnumpy().ravel().tolist()],
              b.grad is not None)
    w -= 0.01 * w.grad                     # the in-place form keeps the variable too
    with autograd.record():
        l = (w * w).sum()
    l.backward()
    print("after -=", [round(v, 5) for v in w.grad.asnumpy().ravel().tolist()])

train(nd.array, nd.dot)
npx.set_np()
train(np.array, np.dot)
'''


def test_writes_into_a_variable_outside_record_keep_it_a_variable(tmp_path):
    """d2l's from-scratch SGD (``param[:] = param - lr * param.grad / batch_size``) and ``w -= ...``: an
    unrecorded write keeps the array attached, so the next step's backward reaches it (it raised "not in a
    computational graph" on the second step, nd and np alike)."""
    ours, theirs = run_both(SCRATCH_SGD, tmp_path)
    assert ours == theirs and len(ours) == 8


FREED_GRAPH = r'''
from mxnet import autograd, np, npx, nd
npx.set_np()
W = np.ones((3, 3)) * 0.1; W.attach_grad()
H = np.zeros((1, 3))
for step in range(4):
    with autograd.record():
        for t in range(3):
            H = np.tanh(np.dot(H, W) + 1)
        l = H.sum()
    l.backward()
    H.detach()          # d2l ignores detach()'s result: H stays the last step's value, a constant now
    print(step, round(float(l), 5), [round(v, 5) for v in W.grad.reshape(-1).tolist()[:3]])
z = np.ones(2); z.attach_grad()
with autograd.record():
    y = z * 2
    a = y.sum()
a.backward()
with autograd.record():
    b = (y * 3).sum()
try:
    b.backward()
    print("after free:", z.grad)
except Exception as e:
    print("after free: error", "computational graph" in str(e))
'''


def test_a_freed_graphs_arrays_are_constants_after_it(tmp_path):
    """A backward without ``retain_graph`` frees its graph, as MXNet's: the RNN notebooks' hidden state carried
    into the next step (``H.detach()`` with its result ignored) is a constant there, so the gradients are each
    step's own and the tape does not grow with every earlier step (d2l's GRU from scratch ran 13 minutes and
    more, MXNet 89 s); an array of the freed graph is no longer in one."""
    ours, theirs = run_both(FREED_GRAPH, tmp_path)
    assert ours == theirs and "after free: error True" in ours
