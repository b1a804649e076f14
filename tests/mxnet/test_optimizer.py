"""``mx.optimizer`` against MXNet 1.9.1: optimizer objects in ``gluon.Trainer`` (three recorded steps, the
parameters and learning rates compared), the same objects driven through ``get_updater`` as MXNet's
kvstore/Module loops do, ``create``/``register`` and the learning-rate attributes."""

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

OPTIMIZERS = [
    "mx.optimizer.SGD(learning_rate=0.1)",
    "mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, multi_precision=True)",
    "mx.optimizer.SGD(learning_rate=0.5, clip_gradient=0.05, rescale_grad=2.0)",
    "mx.optimizer.NAG(learning_rate=0.1, momentum=0.8)",
    "mx.optimizer.Adam(beta1=0.8, wd=0.1)",
    "mx.optimizer.Adam(learning_rate=0.01, clip_gradient=0.1)",
    "mx.optimizer.RMSProp(learning_rate=0.01)",
    "mx.optimizer.RMSProp(learning_rate=0.01, centered=True, clip_weights=0.45)",
    "mx.optimizer.AdaGrad(learning_rate=0.1, eps=1e-3, wd=0.01)",
    "mx.optimizer.create('sgd', learning_rate=0.05, momentum=0.5)",
    "mx.optimizer.create('Adam', learning_rate=0.02, epsilon=1e-4)",
    "mx.optimizer.SGD(momentum=0.9, lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2))",
    "mx.optimizer.SGD(learning_rate=0.3, lr_scheduler=mx.lr_scheduler.FactorScheduler(step=2, factor=0.5))",
]

# the rules added after the first five (read from MXNet 1.9.1's optimizer_op-inl.h and optimizer.py)
MORE = [
    "mx.optimizer.Signum(learning_rate=0.05)",
    "mx.optimizer.Signum(learning_rate=0.05, momentum=0.0, wd=0.1)",
    "mx.optimizer.Signum(learning_rate=0.05, wd_lh=0.01, wd=0.05, clip_gradient=0.3)",
    "mx.optimizer.FTML(learning_rate=0.05, wd=0.1, clip_gradient=0.5)",
    "mx.optimizer.LAMB(learning_rate=0.05, wd=0.01)",
    "mx.optimizer.LAMB(learning_rate=0.05, lower_bound=0.5, upper_bound=2.0, bias_correction=False)",
    "mx.optimizer.Adamax(wd=0.1, clip_gradient=0.3)",
    "mx.optimizer.AdaDelta(wd=0.05)",
    "mx.optimizer.Ftrl(wd=0.05, lamda1=0.05)",
    "mx.optimizer.DCASGD(learning_rate=0.1, wd=0.01)",
]
# MXNet's Python-only updates: through get_updater (DCASGD's momentum-free state holds a None, left out there)
PYTHON_ONLY = ["mx.optimizer.Nadam(learning_rate=0.05, wd=0.02, clip_gradient=0.5)", "mx.optimizer.ccSGD(momentum=0.5)"]

X = np.random.default_rng(0).standard_normal((6, 4)).astype("float32")
Y = np.random.default_rng(1).integers(0, 3, (6,)).astype("float32")

TRAIN = """
from mxnet import autograd
from mxnet.gluon import nn, loss
net = nn.HybridSequential()
net.add(nn.Dense(6, activation='relu', in_units=4), nn.Dense(3, in_units=6, use_bias=False))
net.initialize()
for seed, p in enumerate(net.collect_params().values()):       # the same start on both sides
    p.set_data(nd.array(np.cos(np.arange(p.data().size) + seed).reshape(p.shape) * 0.5))
{hybridize}
opt = {ctor}
trainer = gluon.Trainer(net.collect_params(), opt)
lossfn = loss.SoftmaxCrossEntropyLoss()
rates = []
for _ in range(3):
    with autograd.record():
        l = lossfn(net(nd.array(inp['x'])), nd.array(inp['y']))
    l.backward()
    trainer.step(6)
    rates.append(trainer.learning_rate)
    rates.append(opt.learning_rate)
out['rates'] = np.array(rates)
for i, p in enumerate(net.collect_params().values()):
    out['param%d' % i] = p.data()
"""


@pytest.mark.parametrize("ctor", OPTIMIZERS + MORE)
@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybridized"])
def test_trainer_with_an_optimizer_object_matches_mxnet(both, ctor, hybridize):
    both(TRAIN.format(ctor=ctor, hybridize="net.hybridize()" if hybridize else ""), rtol=1e-4, atol=1e-6,
         x=X, y=Y)


UPDATER = """
opt = {ctor}
updater = mx.optimizer.get_updater(opt)
rng = np.random.RandomState(3)
weights = [nd.array(rng.uniform(-1, 1, s).astype('float32')) for s in [(3, 4), (5,)]]
for step in range(4):
    for i, w in enumerate(weights):
        updater(i, nd.array(rng.uniform(-2, 2, w.shape).astype('float32')), w)
for i, w in enumerate(weights):
    out['w%d' % i] = w
    st = updater.states[i]
    meta['state%d' % i] = type(st).__name__ if not isinstance(st, tuple) else 'tuple%d' % len(st)
    for j, s in enumerate(st if isinstance(st, tuple) else [st] if st is not None else []):
        out['s%d_%d' % (i, j)] = s
meta['num_update'] = opt.num_update
"""


# MXNet's NAG updates in place (nag_mom_update(..., out=weight)), so its weight decay reads the new weight
NAG_WD = "mx.optimizer.NAG(learning_rate=0.1, momentum=0.8, wd=0.05)"


@pytest.mark.parametrize("ctor", OPTIMIZERS + [NAG_WD] + MORE[:-1] + PYTHON_ONLY)
def test_updater_calls_match_mxnet(both, ctor):
    # FTML's state z = beta1 z + ... - (d_t - beta1 d) w cancels: its small entries differ by 7e-5 relative
    # between the two float32 runs, the weights by 1e-6 (each within 1e-6 of MXNet's float64 run: ours 9.1e-7,
    # MXNet's 3.7e-7), so FTML's states are compared to 1e-5 of their scale (~8)
    atol = 1e-4 if "FTML" in ctor else 1e-6
    both(UPDATER.format(ctor=ctor), rtol=1e-5, atol=atol)


def test_create_register_and_learning_rate_attributes_match_mxnet(both):
    both("""
@mx.optimizer.register
class MySGD(mx.optimizer.SGD):
    pass
o = mx.optimizer.create('mysgd', learning_rate=0.3)
meta['type'] = type(o).__name__
meta['lr'] = o.learning_rate
o.set_learning_rate(0.7)
meta['after'] = [o.lr, o.learning_rate]
meta['defaults'] = [mx.optimizer.create(n).learning_rate for n in ['sgd', 'nag', 'adam', 'rmsprop', 'adagrad']]
a = mx.optimizer.Adam()
meta['adam'] = [a.beta1, a.beta2, a.epsilon, a.wd, a.rescale_grad, a.clip_gradient, a.multi_precision]
meta['isinstance'] = isinstance(a, mx.optimizer.Optimizer)
try:
    mx.optimizer.create('nope')
except ValueError as e:
    meta['unknown'] = str(e)
s = mx.optimizer.SGD(lr_scheduler=mx.lr_scheduler.FactorScheduler(step=5, base_lr=0.4))
meta['sched_lr'] = s.learning_rate
try:
    s.set_learning_rate(0.1)
except UserWarning as e:
    meta['refused'] = str(e)[:40]
""")


def test_trainer_and_optimizer_share_the_learning_rate(both):
    both("""
net = gluon.nn.Dense(2, in_units=3)
net.initialize()
opt = mx.optimizer.SGD(learning_rate=0.1)
trainer = gluon.Trainer(net.collect_params(), opt)
trainer.set_learning_rate(0.25)
meta['seen'] = [opt.learning_rate, opt.lr, trainer.learning_rate]
opt.set_learning_rate(0.5)
meta['back'] = [opt.learning_rate, trainer.learning_rate]
try:
    gluon.Trainer(net.collect_params(), mx.optimizer.SGD(), {'learning_rate': 0.1})
except AssertionError as e:
    meta['both'] = str(e)
""")


def test_a_user_defined_update_is_refused_by_the_trainer_by_name(mx):
    from ast_hybrid.mxnet._missing import NotSupported

    class Mine(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight - self.learning_rate * grad

    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(NotSupported, match="Mine in gluon.Trainer is not available"):
        mx.gluon.Trainer(net.collect_params(), Mine())
    w = mx.nd.ones((2,))
    mx.optimizer.get_updater(Mine(learning_rate=0.5))(0, mx.nd.ones((2,)), w)   # its own update, as MXNet's
    np.testing.assert_allclose(w.asnumpy(), [0.5, 0.5])


def test_optimizers_ast_hybrid_lacks_name_the_api(mx):
    from ast_hybrid.mxnet._missing import NotAvailable

    with pytest.raises(NotAvailable, match="mxnet.optimizer.LARS is not available in ast-hybrid"):
        mx.optimizer.LARS


UPDATE_OPS = [
    ("sgd_update", 0, dict(lr=0.1, wd=0.01, rescale_grad=0.5)),
    ("sgd_update", 0, dict(lr=0.1, clip_gradient=0.2)),
    ("sgd_mom_update", 1, dict(lr=0.1, momentum=0.9, wd=0.01, clip_gradient=0.3)),
    ("sgd_mom_update", 1, dict(lr=0.1, momentum=0.0, wd=0.05)),
    ("nag_mom_update", 1, dict(lr=0.1, momentum=0.9, wd=0.05)),
    ("adam_update", 2, dict(lr=0.01, wd=0.1, clip_gradient=0.5, epsilon=1e-4)),
    ("rmsprop_update", 1, dict(lr=0.01, gamma1=0.9, clip_weights=0.6)),
    ("rmspropalex_update", 3, dict(lr=0.01, wd=0.01, clip_gradient=0.4)),
    ("signsgd_update", 0, dict(lr=0.1, wd=0.1, clip_gradient=1e-3)),
    ("signum_update", 1, dict(lr=0.1, momentum=0.8, wd=0.05, wd_lh=0.01, clip_gradient=0.3)),
    ("ftml_update", 3, dict(lr=0.05, t=3, wd=0.01, clip_grad=0.5)),
    ("ftrl_update", 2, dict(lr=0.1, lamda1=0.05, wd=0.01)),
    ("lamb_update_phase1", 2, dict(t=2, wd=0.01, clip_gradient=0.5)),
]

UPDATE_OP = """
rng = np.random.RandomState(5)
name, nstates, kw = {case!r}
weight = nd.array(rng.uniform(-1, 1, (3, 4)))
grad = nd.array(rng.uniform(-2, 2, (3, 4)))
states = [nd.array(rng.uniform(0.1, 1, (3, 4))) for _ in range(nstates)]
op = getattr(mx.nd, name)
for step in range(3):
    res = op(weight, grad, *states, out=weight, **kw)
    meta['same%d' % step] = res is weight
out['weight'] = weight
for i, s in enumerate(states):
    out['state%d' % i] = s
out['fresh'] = op(weight, grad, *[s.copy() for s in states], **kw)
out['phase2'] = mx.nd.lamb_update_phase2(weight, grad, weight.norm(), grad.norm(), lr=0.1, lower_bound=0.5)
"""


@pytest.mark.parametrize("case", UPDATE_OPS, ids=[f"{c[0]}-{i}" for i, c in enumerate(UPDATE_OPS)])
def test_update_operators_match_mxnet(both, case):
    """``mx.nd.*_update`` as optimizers written against MXNet call them: ``out=weight``, the states written in
    place, three steps; and a call without ``out`` returning a new array."""
    both(UPDATE_OP.format(case=case), rtol=1e-5, atol=1e-6)


MIXED = """
rng = np.random.RandomState(7)
opt = {ctor}
updater = mx.optimizer.get_updater(opt)
w = nd.array(rng.uniform(-1, 1, (3, 4)), dtype='float16')
copy = w.copyto(mx.cpu())          # a new array (MXNet's copyto of a context always copies)
copy += 1
meta['copy_is_new'] = bool((copy - w).asnumpy().min() > 0.5)
for step in range(3):
    updater(0, nd.array(rng.uniform(-2, 2, (3, 4)), dtype='float16'), w)
out['w'] = w
st = updater.states[0]
meta['state'] = [type(s).__name__ if not isinstance(s, tuple) else 'tuple%d' % len(s) for s in st]
flat = [x for s in st for x in (s if isinstance(s, tuple) else [s]) if x is not None]
for j, s in enumerate(flat):
    out['s%d' % j] = s
meta['dtypes'] = [str(s.dtype) for s in flat]
"""

MIXED_OPTIMIZERS = ["mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)",
                    "mx.optimizer.SGD(learning_rate=0.1, multi_precision=True)",
                    "mx.optimizer.NAG(learning_rate=0.1, momentum=0.8, multi_precision=True)",
                    "mx.optimizer.Adam(learning_rate=0.01, multi_precision=True)",
                    "mx.optimizer.LAMB(learning_rate=0.01, multi_precision=True)",
                    "mx.optimizer.RMSProp(learning_rate=0.01, multi_precision=True)"]


@pytest.mark.parametrize("ctor", MIXED_OPTIMIZERS)
def test_float16_weights_with_multi_precision_match_mxnet(both, ctor):
    """MXNet's mixed precision: a float32 master copy of a float16 weight (SGD and NAG: after the state,
    the others: before it), updated in float32 and cast back."""
    both(MIXED.format(ctor=ctor), rtol=1e-3, atol=1e-3)
