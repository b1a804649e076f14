"""Per-parameter ``lr_mult`` / ``wd_mult`` in training, against real MXNet 1.9.1.

GluonCV's training scripts turn weight decay off for biases and BatchNorm with
``net.collect_params('.*beta|.*gamma|.*bias').setattr('wd_mult', 0.0)``; fine-tuning scripts scale or freeze
layers with ``lr_mult``.  MXNet's ``gluon.Trainer`` hands its optimizer ``param_dict = {index: Parameter}``,
and ``Optimizer._get_lrs``/``_get_wds`` multiply by the Parameter's current ``lr_mult``/``wd_mult`` at every
update.  The same source runs on both sides (``import mxnet`` is ``ast_hybrid.mxnet`` on ours, the ``mxnet_source``
fixture):

- ``TRAIN``: a small Conv2D + BatchNorm + Dense network with set parameters, GluonCV's ``wd_mult`` line, one
  layer at ``lr_mult`` 0.5, one frozen by ``lr_mult`` 0 and one at 2, three steps of SGD, SGD with momentum,
  NAG, Adam and RMSProp (by name and as an ``mx.optimizer`` object, whose own ``set_lr_mult`` MXNet's Trainer
  overrides by its ``param_dict``), then the multipliers changed and two more steps; the parameters are
  compared after the third and the fifth step (imperative and hybridized), and the trainer's update program
  is not compiled again for the changed multipliers;
- ``DIRECT``: the optimizer objects called as MXNet's ``Updater`` does, with ``param_idx2name`` (a name not
  ending in ``_weight``/``_gamma`` gets ``wd_mult`` 0 by default), ``set_lr_mult``/``set_wd_mult`` by name
  and by index, and a ``param_dict`` of Parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.oracle]

TOLERANCE = 1e-4   # of each array's largest magnitude (measured worst: 2.1e-5, NAG after five steps)
X = np.random.RandomState(0).standard_normal((4, 2, 6, 6)).astype("float32")
Y = np.random.RandomState(1).randint(0, 3, 4).astype("float32")

NET = """
from mxnet import autograd
from mxnet.gluon import nn
net = nn.HybridSequential(prefix='m_')
with net.name_scope():
    net.add(nn.Conv2D(4, 3, in_channels=2, use_bias=False), nn.BatchNorm(in_channels=4), nn.Activation('relu'),
            nn.Conv2D(4, 3, in_channels=4), nn.Dense(3, in_units=16))
net.initialize()
for i, (k, p) in enumerate(sorted(net.collect_params().items())):
    v = np.linspace(-0.5, 0.5, int(np.prod(p.shape))).reshape(p.shape) * (1 + 0.1 * i)
    p.set_data(nd.array(np.abs(v) + 0.5 if k.endswith(('gamma', 'running_var')) else v))
"""

# name, optimizer_params (or an mx.optimizer expression with 'object')
SETTINGS = [
    ("sgd", {"learning_rate": 0.1, "wd": 0.05}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.05}),
    ("nag", {"learning_rate": 0.1, "momentum": 0.8, "wd": 0.05}),
    ("adam", {"learning_rate": 0.01, "wd": 0.05}),
    ("rmsprop", {"learning_rate": 0.01, "wd": 0.05}),
    ("object", "mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.05)"),
    ("object", "mx.optimizer.Adam(learning_rate=0.01, wd=0.05)"),
]

TRAIN = NET + """
{hybridize}
net.collect_params('.*beta|.*gamma|.*bias').setattr('wd_mult', 0.0)
net[0].weight.lr_mult = 0.5
net[3].weight.lr_mult = 0.0
net[4].weight.lr_mult = 2.0
if {name!r} == 'object':
    opt = eval({opts!r})
    opt.set_lr_mult({{0: 100.0}})        # MXNet's Trainer replaces it by its param_dict
    trainer = gluon.Trainer(net.collect_params(), opt)
else:
    trainer = gluon.Trainer(net.collect_params(), {name!r}, {opts!r})
lossfn = gluon.loss.SoftmaxCrossEntropyLoss()
x, y = nd.array(inp['x']), nd.array(inp['y'])
result = {{}}
def steps(n):
    for _ in range(n):
        with autograd.record():
            l = lossfn(net(x), y)
        l.backward()
        trainer.step(4)
steps(3)
for k, p in net.collect_params().items():
    result['3/' + k] = p.data().asnumpy()
# -- changed --
net[0].weight.lr_mult = 1.0         # changed between steps: MXNet reads them at every update
net[3].weight.lr_mult = 0.25
net[4].weight.wd_mult = 4.0
net[1].gamma.wd_mult = 1.0
steps(2)
for k, p in net.collect_params().items():
    result['5/' + k] = p.data().asnumpy()
"""


def _our_env(mx):
    return {"mx": mx, "nd": mx.nd, "gluon": mx.gluon, "np": np, "inp": {"x": X, "y": Y}}


@pytest.fixture(scope="module")
def train_ref(oracle):
    code = ""
    for i, (name, opts) in enumerate(SETTINGS):
        code += TRAIN.format(hybridize="", name=name, opts=opts)
        code += f"for k, v in result.items():\n    out['{i}/' + k] = v\n"
    return oracle.run(code, x=X, y=Y)


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("i", range(len(SETTINGS)), ids=[f"{n}{o}" for n, o in SETTINGS])
def test_lr_and_wd_mults_in_training_match_mxnet(mxnet_source, train_ref, i, hybridize):
    from ast_hybrid.gluon import trainer as trainer_module

    name, opts = SETTINGS[i]
    env = _our_env(mxnet_source)
    first, then = TRAIN.format(hybridize="net.hybridize()" if hybridize else "", name=name, opts=opts).split(
        "# -- changed --")
    exec(first, env)
    update = trainer_module._compiled_update(env["trainer"]._name, env["trainer"]._options)
    programs = update.signatures
    exec(then, env)
    # the multipliers reach the one compiled update as values: changing them compiled nothing new
    assert update.signatures == programs
    got = env["result"]
    want = {k[len(f"{i}/"):]: v for k, v in train_ref.items() if k.startswith(f"{i}/")}
    assert sorted(got) == sorted(want)
    moved = 0
    errors = {k: float(np.abs(got[k] - want[k]).max() / (np.abs(want[k]).max() or 1.0)) for k in got}
    worst = sorted(errors.items(), key=lambda kv: -kv[1])[:3]
    print(f"{name} {opts} hybridized={hybridize}: worst {worst}")
    for k in got:
        # float32 noise of the gradients (BatchNorm's over 64 values): up to 5e-6 of an array's scale; a
        # multiplier not applied moves a parameter by lr * wd * w = 4e-3 of it at the first step
        assert errors[k] <= TOLERANCE, f"{name} {opts}: {k}: {errors[k]:.1e}; worst {worst}"
        moved += k.startswith("5/") and not np.array_equal(want[k], want["3/" + k[2:]])
    assert moved, "MXNet's last two steps changed some parameters"
    # the frozen layer did not move in the first three steps (lr_mult 0), in both
    frozen = "3/m_conv1_weight"
    assert np.array_equal(want[frozen], got[frozen])


DIRECT = """
rs = np.random.RandomState(5)
names = {{0: 'fc_weight', 1: 'fc_bias', 2: 'bn_gamma', 3: 'bn_beta', 4: 'conv_weight'}}
shapes = [(3, 4), (3,), (4,), (4,), (2, 3)]
ws0 = [rs.uniform(-1, 1, s).astype('float32') for s in shapes]
gs = [[rs.uniform(-1, 1, s).astype('float32') for s in shapes] for _ in range(3)]
for case in ('idx2name', 'param_dict'):
    if case == 'idx2name':
        opt = {make}(param_idx2name=names, wd=0.1)
        opt.set_lr_mult({{'fc_weight': 0.5, 1: 2.0}})
        opt.set_wd_mult({{'conv_weight': 3.0, 3: 1.5}})
    else:
        pd = {{i: gluon.Parameter('p%d' % i, lr_mult=0.5 * i, wd_mult=1.0 + i) for i in range(5)}}
        opt = {make}(param_dict=pd, wd=0.1)
        opt.set_lr_mult({{0: 9.0}})      # param_dict comes first
    updater = mx.optimizer.get_updater(opt)
    ws = [nd.array(w) for w in ws0]
    for step in gs:
        for i in range(5):
            updater(i, nd.array(step[i]), ws[i])
    result[case + '/lrs'] = np.array([opt._get_lr(i) for i in range(5)])
    result[case + '/wds'] = np.array([opt._get_wd(i) for i in range(5)])
    for i in range(5):
        result[case + '/w%d' % i] = ws[i].asnumpy()
"""
MAKERS = ["mx.optimizer.SGD", "functools.partial(mx.optimizer.SGD, momentum=0.9)", "mx.optimizer.NAG",
          "mx.optimizer.Adam", "mx.optimizer.RMSProp", "mx.optimizer.AdaGrad"]


@pytest.fixture(scope="module")
def direct_ref(oracle):
    code = "import functools\nresult = {}\n"
    for i, make in enumerate(MAKERS):
        code += DIRECT.format(make=make) + f"for k, v in result.items():\n    out['{i}/' + k] = v\n"
    return oracle.run(code)


@pytest.mark.parametrize("i", range(len(MAKERS)), ids=MAKERS)
def test_optimizer_mults_by_name_index_and_param_dict_match_mxnet(mxnet_source, direct_ref, i):
    import functools

    env = dict(_our_env(mxnet_source), functools=functools, result={})
    exec(DIRECT.format(make=MAKERS[i]), env)
    got = env["result"]
    want = {k[len(f"{i}/"):]: v for k, v in direct_ref.items() if k.startswith(f"{i}/")}
    assert sorted(got) == sorted(want)
    for k in got:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=f"{MAKERS[i]}: {k}")
    # what MXNet's defaults give here: no weight decay on names not ending in _weight/_gamma
    assert want["idx2name/wds"][1] == 0.0 and want["idx2name/wds"][2] > 0
