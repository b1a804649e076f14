"""``Trainer.load_states`` reads the ``.states`` file MXNet 1.9.1's ``Trainer.save_states`` wrote.

MXNet trains a small net three steps, saves ``.params`` and ``.states``, and goes on four more steps; we
build the same net, load both files into a trainer made with other settings (the file's optimizer replaces
them, as in MXNet) and take the same four steps.  The parameters must equal MXNet's to 1e-5 of their scale
after each of the four steps: the momentum, Adam's moments and its update count (bias correction), the
RMSProp/AdaGrad histories and a FactorScheduler's state all come from the file, and none of them is zero or
at its initial value after three steps, so a state read wrong, or put on the wrong parameter, shows.  The
parameters' names sort in another order than the net adds them, as MXNet's Trainer indexes them.
MXNet's own fresh trainer loading the same file is checked against its continuing one too (the reference).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

SETTINGS = {
    "sgd_momentum": "'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}",
    "nag": "'nag', {'learning_rate': 0.1, 'momentum': 0.8}",
    "adam": "'adam', {'learning_rate': 0.05, 'wd': 0.001}",
    "adam_factor_schedule": "'adam', {'learning_rate': 0.05, "
                            "'lr_scheduler': mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)}",
    "rmsprop_centered": "'rmsprop', {'learning_rate': 0.01, 'centered': True}",
    "adagrad": "'adagrad', {'learning_rate': 0.1}",
}
X = np.random.default_rng(0).standard_normal((6, 4)).astype("float32")
Y = np.random.default_rng(1).integers(0, 3, (6,)).astype("float32")

NET = """
import mxnet as mx
from mxnet import autograd, nd
from mxnet.gluon import Trainer, loss, nn
net = nn.HybridSequential(prefix='t_')
with net.name_scope():
    net.add(nn.Dense(5, activation='tanh', in_units=4, prefix='z_'), nn.Dense(3, in_units=5, prefix='a_'))
net.initialize()
lossfn = loss.SoftmaxCrossEntropyLoss()
def train(trainer, steps):
    seen = []
    for _ in range(steps):
        with autograd.record():
            l = lossfn(net(nd.array(inp['x'])), nd.array(inp['y']))
        l.backward()
        trainer.step(6)
        seen.append({k: p.data().asnumpy() for k, p in net.collect_params().items()})
    return seen
"""

MXNET = NET + """
for i, p in enumerate(net.collect_params().values()):
    p.set_data(nd.array(np.linspace(-0.5, 0.5, int(np.prod(p.shape))).reshape(p.shape) * (1 + 0.1 * i)))
trainer = Trainer(net.collect_params(), SETTING)
train(trainer, 3)
net.save_parameters(PARAMS)
trainer.save_states(STATES)
for s, seen in enumerate(train(trainer, 4)):
    for k, v in seen.items():
        out[f'{s}/{k}'] = v
net.load_parameters(PARAMS)
again = Trainer(net.collect_params(), SETTING)
again.load_states(STATES)
for k, v in train(again, 4)[-1].items():
    out[f'reloaded/{k}'] = v
"""


@pytest.mark.parametrize("setting", SETTINGS)
def test_mxnet_states_continue_as_mxnet(oracle, tmp_path, setting):
    params, states = str(tmp_path / "net.params"), str(tmp_path / "net.states")
    code = MXNET.replace("SETTING", SETTINGS[setting]).replace("PARAMS", repr(params))
    theirs = oracle.run(code.replace("STATES", repr(states)), x=X, y=Y)
    scope = {"inp": {"x": X, "y": Y}, "np": np}
    exec(NET.replace("import mxnet as mx", "import ast_hybrid.mxnet as mx")
         .replace("from mxnet", "from ast_hybrid.mxnet"), scope)
    net, trainer_cls = scope["net"], scope["Trainer"]
    net.load_parameters(params)
    trainer = trainer_cls(net.collect_params(), "sgd", {"learning_rate": 1.0})    # the file's settings win
    trainer.load_states(states)
    ours = scope["train"](trainer, 4)
    for s, seen in enumerate(ours):
        for k, v in seen.items():
            want = theirs[f"{s}/{k}"]
            np.testing.assert_allclose(v, want, rtol=0, atol=1e-5 * np.abs(want).max(), err_msg=f"step {s}, {k}")
            np.testing.assert_allclose(theirs[f"reloaded/{k}"], theirs[f"3/{k}"], rtol=1e-6, atol=1e-7)


def test_a_file_of_neither_format_is_a_clear_error(tmp_path):
    from ast_hybrid.gluon import Trainer, nn

    net = nn.Dense(2, in_units=3)
    net.initialize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    garbage, other = tmp_path / "garbage.states", tmp_path / "other.states"
    garbage.write_bytes(b"\x00\x01 not a pickle")
    other.write_bytes(pickle.dumps([1, 2, 3]))
    for path in (garbage, other):
        with pytest.raises(ValueError, match="not a trainer states file"):
            trainer.load_states(str(path))


def test_a_pickled_class_is_never_run(tmp_path):
    """A states file naming a class outside MXNet's optimizers, schedulers and NDArray gets a placeholder:
    unpickling it runs nothing (here ``os.system`` would)."""
    import os

    from ast_hybrid.gluon import states_io

    class Evil:
        def __reduce__(self):
            return os.system, ("touch " + str(tmp_path / "ran"),)

    path = tmp_path / "evil.states"
    path.write_bytes(pickle.dumps({"t": 0, "states": {"w": Evil()}}))
    kind, saved = states_io.read(str(path))
    assert not (tmp_path / "ran").exists()
    assert isinstance(saved["states"]["w"], states_io.Unread)


SCHEDULE = '''
class Halving:
    """A schedule of a class outside mx.lr_scheduler (as GluonCV's LRSequential): half the rate every 2."""

    def __init__(self, base_lr):
        self.base_lr = base_lr

    def __call__(self, num_update):
        return self.base_lr * 0.5 ** (num_update // 2)
'''


def test_a_schedule_of_another_class_is_the_trainers_own(oracle, tmp_path):
    """GluonCV's scripts pass their own ``lr_scheduler`` (gluoncv.utils.LRSequential), pickled into the file by
    its class name; that class is not loaded, the trainer's own schedule (the script made the same one) is
    kept and follows the file's update count.  A trainer without one is warned."""
    (tmp_path / "halving.py").write_text(SCHEDULE)
    params, states = str(tmp_path / "net.params"), str(tmp_path / "net.states")
    setting = "'adam', {'learning_rate': 0.05, 'lr_scheduler': halving.Halving(0.05)}"
    code = f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport halving\n" + MXNET
    theirs = oracle.run(code.replace("SETTING", setting).replace("PARAMS", repr(params))
                        .replace("STATES", repr(states)), x=X, y=Y)
    scope = {"inp": {"x": X, "y": Y}, "np": np}
    exec(NET.replace("import mxnet as mx", "import ast_hybrid.mxnet as mx")
         .replace("from mxnet", "from ast_hybrid.mxnet"), scope)
    exec(SCHEDULE, scope)
    net, trainer_cls = scope["net"], scope["Trainer"]
    net.load_parameters(params)
    # the script's own setting (without learning_rate, Adam's default 0.001 would become the schedule's
    # base_lr, as in MXNet: tests/mxnet/test_trainer_optimizer_object.py)
    trainer = trainer_cls(net.collect_params(), "adam",
                          {"learning_rate": 0.05, "lr_scheduler": scope["Halving"](0.05)})
    trainer.load_states(states)
    assert trainer._t == 3
    for k, v in scope["train"](trainer, 4)[-1].items():
        want = theirs[f"3/{k}"]
        np.testing.assert_allclose(v, want, rtol=0, atol=1e-5 * np.abs(want).max(), err_msg=k)
    bare = trainer_cls(net.collect_params(), "adam", {"learning_rate": 0.05})
    with pytest.warns(UserWarning, match="halving.Halving, which is not loaded"):
        bare.load_states(states)


def test_an_optimizer_we_lack_leaves_its_states_read_with_a_warning(oracle, tmp_path):
    """MXNet's Signum (not one of ours) pickled in the file: not loaded; its momentum, one array per parameter
    as SGD's, is read into the trainer's own SGD with a warning naming the class."""
    params, states = str(tmp_path / "net.params"), str(tmp_path / "net.states")
    code = MXNET.replace("SETTING", "'signum', {'learning_rate': 0.01, 'momentum': 0.9}")
    oracle.run(code.replace("PARAMS", repr(params)).replace("STATES", repr(states)), x=X, y=Y)
    from ast_hybrid.gluon import Trainer, nn

    net = nn.HybridSequential(prefix="t_")
    with net.name_scope():
        net.add(nn.Dense(5, activation="tanh", in_units=4, prefix="z_"), nn.Dense(3, in_units=5, prefix="a_"))
    net.initialize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    with pytest.warns(UserWarning, match="mxnet.optimizer.optimizer.Signum.*only the states are read"):
        trainer.load_states(states)
    assert trainer._t == 0 and trainer._lr == 0.1
    assert sorted(p.name for p in trainer._states) == ["t_a_bias", "t_a_weight", "t_z_bias", "t_z_weight"]
    assert all(np.abs(np.asarray(s[0])).max() > 0 for s in trainer._states.values())
