"""``mx.mod.Module`` (MXNet 1.x's symbolic training API) against MXNet 1.9.1, each script run by both as a user
runs it: ``bind``/``init_params`` with the operators' own initializers (PReLU's 0.25, BatchNorm's moving
statistics), ``fit`` with Adam and a Gluon loss made into a Symbol (MXNet's own ``test_loss`` style),
``score``, ``predict`` and a prediction-only bind of a ``SoftmaxOutput`` network, SGD with momentum and weight
decay (the optimizer's per-name ``wd_mult``: none on biases), a variable's ``lr_mult``, checkpoints; and the
regression outputs' gradients, which ignore the head gradient as MXNet's loss operators do."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

COMMON = """
import numpy as np, mxnet as mx
from mxnet import gluon

def r(x):
    return [float(v) for v in np.asarray(x.asnumpy() if hasattr(x, 'asnumpy') else x).ravel()]

def get_net(num_hidden, flatten=True):
    data = mx.symbol.Variable('data')
    fc1 = mx.symbol.FullyConnected(data, name='fc1', num_hidden=16, flatten=flatten)
    act1 = mx.symbol.Activation(fc1, name='relu1', act_type="relu")
    return mx.symbol.FullyConnected(act1, name='fc3', num_hidden=num_hidden, flatten=flatten)

rs = np.random.RandomState(0)
def start(nin, nout):
    return {'fc1_weight': mx.nd.array(rs.uniform(-.3, .3, (16, nin))), 'fc1_bias': mx.nd.array(rs.uniform(-.1, .1, (16,))),
            'fc3_weight': mx.nd.array(rs.uniform(-.3, .3, (nout, 16))), 'fc3_bias': mx.nd.array(rs.uniform(-.1, .1, (nout,)))}
"""

INIT = COMMON + """
data = mx.sym.Variable('data')
mod = mx.mod.Module(mx.sym.LeakyReLU(data=data, act_type='prelu'))
mod.bind(data_shapes=[('data', (10, 10))])
mod.init_params()
print("prelu", {k: r(v)[:3] for k, v in mod.get_params()[0].items()})
mod = mx.mod.Module(mx.sym.BatchNorm(data=data, name='bn'), label_names=None)
mod.bind(data_shapes=[('data', (10, 10, 3, 3))])
mod.init_params()
args, auxs = mod.get_params()
print("bn", sorted(args), {k: r(v)[:2] for k, v in sorted(auxs.items())}, r(args['bn_gamma'])[:2])
gamma = mx.sym.Variable('gamma', init=mx.init.One())
mod = mx.mod.Module(mx.sym.LeakyReLU(data=data, gamma=gamma, act_type='prelu'), label_names=None)
mod.bind(data_shapes=[('data', (10, 10))])
mod.init_params()
print("own init", r(mod.get_params()[0]['gamma'])[:3], mod.data_names, mod.output_names)
bias = mx.sym.Variable('fc1_bias', lr_mult=1.0)          # an op's lr_mult/wd_mult: its new variables' (MXNet's)
fc1 = mx.sym.FullyConnected(data=data, bias=bias, name='fc1', num_hidden=10, lr_mult=0)
fc2 = mx.sym.FullyConnected(data=fc1, name='fc2', num_hidden=10, wd_mult=0.5)
mod = mx.mod.Module(symbol=fc2, label_names=None)
mod.bind(data_shapes=[('data', (5, 10))])
mod.init_params(initializer=mx.init.Uniform(1.0))
mod.init_optimizer(optimizer_params={'learning_rate': 1.0})
print("mults", sorted(mod._optimizer.lr_mult.items()), sorted(mod._optimizer.wd_mult.items()))
x = mx.nd.array(rs.uniform(-1, 1, (4, 3)))
for op in (mx.nd.LinearRegressionOutput, mx.nd.MAERegressionOutput, mx.nd.LogisticRegressionOutput):
    for label in (mx.nd.array(rs.uniform(-1, 1, (4, 3))), mx.nd.array(rs.uniform(-1, 1, (4, 3))).reshape((4, 3, 1))):
        x.attach_grad()
        with mx.autograd.record():
            y = op(x, label, grad_scale=2.0)
            z = y * 3
        z.backward()          # the head gradient (3) is not read
        print(op.__name__, r(y)[:3], r(x.grad))
"""

FIT = COMMON + """
N, nclass = 20, 10
data = mx.nd.array(rs.uniform(-1, 1, (N, nclass)))
label = mx.nd.array(rs.randint(0, nclass, size=(N,)), dtype='int32')
it = mx.io.NDArrayIter(data, label, batch_size=10, label_name='label')
loss = mx.sym.make_loss(gluon.loss.SoftmaxCrossEntropyLoss()(get_net(nclass), mx.symbol.Variable('label')))
mod = mx.mod.Module(loss, data_names=('data',), label_names=('label',))
mod.fit(it, num_epoch=30, optimizer_params={'learning_rate': 0.01}, arg_params=start(nclass, nclass),
        eval_metric=mx.metric.Loss(), optimizer='adam')
print("adam loss", float(mod.score(it, eval_metric=mx.metric.Loss())[0][1]))
print("adam fc3_bias", r(mod.get_params()[0]['fc3_bias']))

x = rs.uniform(-1, 1, (12, 5)).astype('float32')
y = rs.randint(0, 3, (12,)).astype('float32')
it = mx.io.NDArrayIter(x, y, batch_size=4)
fc3 = get_net(3)
net = mx.sym.SoftmaxOutput(fc3, name='softmax')
mod = mx.mod.Module(net)
epochs = []
mod.fit(it, num_epoch=4, optimizer='sgd', arg_params=start(5, 3),
        optimizer_params={'learning_rate': 0.2, 'momentum': 0.9, 'wd': 0.1},
        eval_metric='acc', epoch_end_callback=lambda e, s, a, x: epochs.append(e))
args, _ = mod.get_params()
print("sgd", epochs, r(args['fc1_bias'])[:4], r(args['fc3_weight'])[:4])
print("score", [(k, float(v)) for k, v in mod.score(it, ['acc', 'ce'])])
pred = mod.predict(it)
print("predict", pred.shape, r(pred.asnumpy()[:2]))
mod.save_checkpoint('ck', 4)
sym, a, x_ = mx.model.load_checkpoint('ck', 4)
infer = mx.mod.Module(sym, context=mx.cpu())
infer.bind(for_training=False, data_shapes=[('data', (2, 5))])
infer.set_params(a, x_)
infer.forward(mx.io.DataBatch([mx.nd.array(x[:2])]))
print("loaded", r(infer.get_outputs()[0].asnumpy()))

data = mx.symbol.Variable('data')
w = mx.symbol.Variable('slow_weight', lr_mult=0.1)
out = mx.sym.LinearRegressionOutput(mx.symbol.FullyConnected(data, weight=w, name='fc', num_hidden=1), name='lro')
mod = mx.mod.Module(out, label_names=('lro_label',))
it = mx.io.NDArrayIter(x, y, batch_size=6, label_name='lro_label')
mod.fit(it, num_epoch=2, optimizer='sgd', optimizer_params={'learning_rate': 0.1},
        arg_params={'slow_weight': mx.nd.ones((1, 5)), 'fc_bias': mx.nd.zeros((1,))}, eval_metric='mse')
print("lr_mult", r(mod.get_params()[0]['slow_weight']), r(mod.get_params()[0]['fc_bias']))
"""


@pytest.mark.parametrize("script", [INIT, FIT], ids=["init", "fit"])
def test_module_matches_mxnet(tmp_path, script):
    """The same lines, their numbers within float32 rounding of MXNet's (1e-4 relative, 1e-5 absolute)."""
    ours, theirs = run_both(script, tmp_path)
    number = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
    assert [number.sub("#", line) for line in ours] == [number.sub("#", line) for line in theirs], (ours, theirs)
    got = np.array([float(v) for line in ours for v in number.findall(line)])
    want = np.array([float(v) for line in theirs for v in number.findall(line)])
    assert len(want) > 10
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg="\n".join(ours + theirs))
