"""200 training steps on fixed synthetic data, ours against real MXNet 1.9.1: the loss curve step by step.

The same source runs on both sides (``NETS``, ``TRAIN``): the chapter's MLP (512 -> 256 -> 128 -> 2) and a
small CNN with BatchNorm (two Conv2D + BatchNorm + ReLU, max pooling, Dense), MXNet-initialised parameters
loaded by both, ``SoftmaxCrossEntropyLoss``, ``Trainer`` with SGD + momentum and with Adam, 200 steps over
the same batches (a fixed pool cycled in a fixed order).  MXNet runs op by op; ours op by op and hybridized.
Compared: the mean loss of every step within ``RTOL`` of the curve's largest loss; and, as a check for gross
errors only (a wrong ``wd``, update rule or statistic), every parameter after the last step (running
statistics included) within ``PARAM_RTOL`` of its largest magnitude.  Two float32 implementations drift
apart over 200 steps: the difference of the losses grows about tenfold per step while the loss falls
fastest (steps 7 to 9 of the MLP with SGD: 1e-6 to 1.4e-4), then shrinks again (1e-7 by step 110), and the
weights end up a few percent apart along directions that leave the loss unchanged.  Measured worst (ours,
both modes): curves 7.9e-4 (MLP, SGD), parameters 4.5e-2 (a first-layer bias of the MLP, SGD).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_training_oracle import once_per_name

pytestmark = [pytest.mark.oracle]

STEPS = 200
RTOL = 2e-3         # of the curve's largest loss
PARAM_RTOL = 0.1    # of each parameter's largest magnitude (the module doc: a check for gross errors)

NETS = {
    "mlp": ("""
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
""", (32, 512), 2),
    "cnn_bn": ("""
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'), nn.MaxPool2D(2, 2),
            nn.Conv2D(16, 3, padding=1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'),
            nn.MaxPool2D(2, 2),
            nn.Dense(10))
""", (16, 1, 12, 12), 10),
}
OPTIMIZERS = {"sgd": ("sgd", {"learning_rate": 0.01, "momentum": 0.9}),
              "adam": ("adam", {"learning_rate": 0.0005})}

TRAIN = """
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), {opt!r}, {opt_params!r})
xs, ys = inp['x'], inp['y']
batch = {batch}
losses = []
for i in range({steps}):
    j = (i * 7) % (len(xs) // batch)
    x, y = nd.array(xs[j * batch:(j + 1) * batch]), nd.array(ys[j * batch:(j + 1) * batch])
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch)
    losses.append(loss.mean().asscalar())
res = {{'loss': np.array(losses, dtype='float32')}}
for k, p in net._collect_params_with_prefix().items():
    res['param/' + k] = p.data().asnumpy()
"""


def _train_code(net, opt):
    name, params = OPTIMIZERS[opt]
    return TRAIN.format(opt=name, opt_params=params, batch=NETS[net][1][0], steps=STEPS)


def _data(net):
    shape, classes = NETS[net][1], NETS[net][2]
    rs = np.random.RandomState(3)
    pool = (shape[0] * 8,) + shape[1:]
    y = rs.randint(0, classes, pool[0])
    # class-dependent means, so that the loss falls, and a third of the labels random, so that it stays away
    # from 0 (where the gradients are rounding, and Adam, dividing by their size, moves by noise)
    centers = 0.3 * rs.standard_normal((classes,) + shape[1:]).astype("float32")
    x = centers[y] + rs.standard_normal(pool).astype("float32")
    noisy = rs.uniform(size=pool[0]) < 1 / 3
    y = np.where(noisy, rs.randint(0, classes, pool[0]), y)
    return x.astype("float32"), y.astype("float32")


MX_CODE = """
from mxnet import autograd
from mxnet.gluon import nn
mx.random.seed(0)
{net}
net.initialize(mx.init.Xavier())
net(nd.array(inp['x'][:2]))
net.save_parameters({path!r})
for opt, code in (('sgd', {sgd!r}), ('adam', {adam!r})):
    net.load_parameters({path!r})
    exec(code)
    for k, v in res.items():
        out[opt + '/' + k] = v
"""


@pytest.fixture(scope="module")
def mxnet_runs(oracle, tmp_path_factory):
    def run(net, path):
        code = MX_CODE.format(net=NETS[net][0], path=path, sgd=_train_code(net, "sgd"), adam=_train_code(net, "adam"))
        x, y = _data(net)
        return code, {"x": x, "y": y}
    return once_per_name(oracle, tmp_path_factory.mktemp("curves"), run)


@pytest.mark.parametrize("mode", ["imperative", "hybridized"])
@pytest.mark.parametrize("opt", list(OPTIMIZERS))
@pytest.mark.parametrize("net", list(NETS))
def test_loss_curve_matches_mxnet(mxnet_runs, net, opt, mode):
    from ast_hybrid import autograd, gluon, nd
    from ast_hybrid.gluon import nn

    ref = mxnet_runs(net)
    x, y = _data(net)
    env = {"nd": nd, "gluon": gluon, "nn": nn, "autograd": autograd, "np": np, "inp": {"x": x, "y": y}}
    exec(NETS[net][0], env)
    env["net"].load_parameters(ref["path"])
    if mode == "hybridized":
        env["net"].hybridize()
    exec(_train_code(net, opt), env)
    got = env["res"]
    want = {k[len(opt) + 1:]: v for k, v in ref.items() if k.startswith(opt + "/")}
    assert sorted(got) == sorted(want)
    curve = np.abs(got["loss"] - want["loss"]) / np.abs(want["loss"]).max()
    assert want["loss"][-20:].mean() < 0.5 * want["loss"][:5].mean(), "MXNet's loss should fall (the data)"
    errors = {k: float(np.abs(got[k] - want[k]).max() / (np.abs(want[k]).max() or 1.0)) for k in got if k != "loss"}
    worst = sorted(errors.items(), key=lambda kv: -kv[1])[:3]
    print(f"{net} {opt} {mode}: curve worst {curve.max():.1e} at step {curve.argmax()}; params worst {worst}")
    assert curve.max() <= RTOL, f"loss differs at step {curve.argmax()}: ours {got['loss'][curve.argmax()]}, " \
                                f"MXNet {want['loss'][curve.argmax()]}"
    assert max(errors.values()) <= PARAM_RTOL, worst
