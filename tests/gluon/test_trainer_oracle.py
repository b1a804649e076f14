"""``gluon.Trainer`` against MXNet 1.9.1: the same net, parameters and data, three recorded steps with each
optimizer setting, then the parameters compared (imperative and hybridized)."""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import Trainer, loss, nn

pytestmark = pytest.mark.oracle

SETTINGS = [
    ("sgd", {"learning_rate": 0.1}), ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("sgd", {"learning_rate": 0.5, "clip_gradient": 0.05}), ("nag", {"learning_rate": 0.1, "momentum": 0.8}),
    ("adam", {"learning_rate": 0.01}), ("adam", {"learning_rate": 0.01, "wd": 0.1, "beta1": 0.8}),
    ("rmsprop", {"learning_rate": 0.01}), ("rmsprop", {"learning_rate": 0.01, "centered": True}),
    ("adagrad", {"learning_rate": 0.1}),
]
X = np.random.default_rng(0).standard_normal((6, 4)).astype("float32")
Y = np.random.default_rng(1).integers(0, 3, (6,)).astype("float32")

BODY = """
net = nn.HybridSequential(prefix='t_')
with net.name_scope():
    net.add(nn.Dense(5, activation='tanh', in_units=4), nn.Dense(3, in_units=5))
net.initialize()
for i, p in enumerate(net.collect_params().values()):
    p.set_data(nd.array(np.linspace(-0.5, 0.5, int(np.prod(p.shape))).reshape(p.shape) * (1 + 0.1 * i)))
{hybridize}
trainer = Trainer(net.collect_params(), {name!r}, {opts!r})
lossfn = loss.SoftmaxCrossEntropyLoss()
for _ in range(3):
    with autograd.record():
        l = lossfn(net(nd.array(inp['x'])), nd.array(inp['y']))
    l.backward()
    trainer.step(6)
result = {{k: p.data().asnumpy() for k, p in net.collect_params().items()}}
"""


@pytest.fixture(scope="module")
def ref(oracle):
    code = "from mxnet import autograd\nfrom mxnet.gluon import Trainer, loss, nn\nrefs = {}\n"
    for i, (name, opts) in enumerate(SETTINGS):
        code += BODY.format(hybridize="net.hybridize()", name=name, opts=opts)
        code += f"for k, v in result.items():\n    out['{i}/' + k] = v\n"
    return oracle.run(code, x=X, y=Y)


@pytest.mark.parametrize("i", range(len(SETTINGS)), ids=[f"{n}{o}" for n, o in SETTINGS])
@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
def test_three_steps_match_mxnet(ref, i, hybridize):
    name, opts = SETTINGS[i]
    env = {"nn": nn, "nd": nd, "np": np, "autograd": autograd, "loss": loss, "Trainer": Trainer,
           "inp": {"x": X, "y": Y}}
    exec(BODY.format(hybridize="net.hybridize()" if hybridize else "", name=name, opts=opts), env)
    for k, v in env["result"].items():
        np.testing.assert_allclose(v, ref[f"{i}/{k}"], rtol=1e-4, atol=1e-6, err_msg=f"{name} {opts}: {k}")


SCHEDULED = """
net = nn.Dense(3, in_units=4, prefix='s_')
net.initialize()
for p in net.collect_params().values():
    p.set_data(nd.array(np.linspace(-0.5, 0.5, int(np.prod(p.shape))).reshape(p.shape)))
opts = {{'momentum': 0.5, 'lr_scheduler': FactorScheduler(step=2, factor=0.5, base_lr=1.0)}}
{lr}
trainer = Trainer(net.collect_params(), 'sgd', opts)
lrs = []
for _ in range(5):
    with autograd.record():
        l = loss.SoftmaxCrossEntropyLoss()(net(nd.array(inp['x'])), nd.array(inp['y']))
    l.backward()
    trainer.step(6)
    lrs.append(trainer.learning_rate)
result = {{'lrs': np.array(lrs), 'weight': net.weight.data().asnumpy()}}
"""


@pytest.mark.parametrize("lr", ["", "opts['learning_rate'] = 0.2"], ids=["scheduler's base_lr", "learning_rate wins"])
def test_lr_scheduler_in_trainer_matches_mxnet(oracle, lr):
    import warnings

    from ast_hybrid.mxnet.lr_scheduler import FactorScheduler

    code = ("from mxnet import autograd\nfrom mxnet.gluon import Trainer, loss, nn\n"
            "from mxnet.lr_scheduler import FactorScheduler\n" + SCHEDULED.format(lr=lr)
            + "out.update(result)\n")
    ref = oracle.run(code, x=X, y=Y)
    env = {"nn": nn, "nd": nd, "np": np, "autograd": autograd, "loss": loss, "Trainer": Trainer,
           "FactorScheduler": FactorScheduler, "inp": {"x": X, "y": Y}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(SCHEDULED.format(lr=lr), env)
    assert any("overwritten" in str(w.message) for w in caught) == bool(lr)
    for k, v in env["result"].items():
        np.testing.assert_allclose(v, ref[k], rtol=1e-4, atol=1e-6, err_msg=k)


class _Counting(nn.HybridBlock):
    traces = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        type(self).traces += 1
        return self.dense(x)


def test_training_steps_reuse_the_compiled_program():
    net = _Counting()
    net.initialize()
    net.hybridize()
    trainer = Trainer(net.collect_params(), "adam", {"learning_rate": 0.1})
    x, y = nd.array(X), nd.array(Y)
    losses = []
    for _ in range(5):
        with autograd.record():
            step_loss = loss.SoftmaxCELoss()(net(x), y).mean()
        step_loss.backward()
        trainer.step(6)
        losses.append(step_loss.asscalar())
    assert _Counting.traces == 1 and losses[-1] < losses[0]
