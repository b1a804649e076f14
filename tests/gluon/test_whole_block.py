"""gluon/whole.py: ``hybridize()`` on a plain ``nn.Block`` runs its forward as one program (issue 31), with the
same outputs and gradients as op by op; a forward that does not convert runs op by op after one warning."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import Block, Trainer, nn
from ast_hybrid.gluon.whole import HybridizeFallbackWarning


class FancyMLP(Block):
    """d2l's FancyMLP (chapter "Custom Layers" / "Blocks"), its loops on tensor values as Python code."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rand_weight = self.params.get_constant("rand_weight", nd.random.uniform(shape=(20, 20)))
        self.dense = nn.Dense(20, activation="relu")

    def forward(self, x):
        x = self.dense(x)
        x = nd.relu(nd.dot(x, self.rand_weight.data()) + 1)
        x = self.dense(x)
        while x.norm() > 1:
            x = x / 2
        if x.norm() < 0.8:
            x = x * 10
        return x.sum()


class Gated(Block):
    """Branches on tensor values and a Python loop over children (differentiable: lax.cond)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.layers = nn.Sequential()       # a Block too
        for _ in range(3):
            self.layers.add(nn.Dense(6, activation="tanh"))
        self.out = nn.Dense(2)

    def forward(self, x):
        for layer in self.layers:
            y = layer(x)
            if y.mean() > 0:
                x = y + x
            else:
                x = y
        return self.out(x)


class ReadsHost(Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = nn.Dense(3)

    def forward(self, x):
        scale = float(x.asnumpy().sum())
        return self.dense(x) * scale


class InPlace(Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = nn.Dense(3)

    def forward(self, x):
        x = self.dense(x)
        x /= 2
        return x


def _built(cls, x):
    net = cls()
    net.initialize()
    net(x)      # op by op: the deferred shapes
    return net


def _grads(net, x):
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    return [p.grad().asnumpy().copy() for p in net.collect_params().values() if p.grad_req != "null"]


def _x(*shape, seed=0):
    return nd.array(np.random.RandomState(seed).randn(*shape).astype("float32"))


@pytest.mark.parametrize("cls, shape", [(FancyMLP, (2, 20)), (Gated, (4, 6))])
def test_a_hybridized_block_gives_the_op_by_op_outputs_as_one_program(cls, shape):
    x = _x(*shape)
    net = _built(cls, x)
    want = net(x).asnumpy()
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error", HybridizeFallbackWarning)
        got = net(x).asnumpy()
    assert net._whole.compiled is not None and net._whole.fallback is None
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    other = _x(*shape, seed=1)      # another value: the branches taken at run time, not baked in
    net.hybridize(False)
    want = net(other).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(other).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_gradients_and_training_steps_match_op_by_op():
    x = _x(4, 6)
    nets = []
    for hybrid in (False, True):
        net = _built(Gated, x)
        for i, p in enumerate(net.collect_params().values()):       # the same starting point
            p.set_data(nd.array(np.random.RandomState(i).randn(*p.shape).astype("float32") * 0.5))
        if hybrid:
            net.hybridize()
        nets.append(net)
    grads = [_grads(n, x) for n in nets]
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    losses = []
    for net in nets:
        trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        seen = []
        for _ in range(3):
            with autograd.record():
                loss = (net(x) ** 2).sum()
            loss.backward()
            trainer.step(4)
            seen.append(loss.asscalar())
        losses.append(seen)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    assert nets[1]._whole.compiled is not None       # parameters updated under it: the same program, new leaves


def test_a_block_inside_a_hybridized_block_has_its_forward_converted_too():
    x = _x(2, 20)
    net = nn.Sequential()       # d2l's "chimera": plain Blocks nested in a plain Block
    net.add(nn.Dense(20), FancyMLP())
    net.initialize()
    want = net(x).asnumpy()
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter("error", HybridizeFallbackWarning)
        got = net(x).asnumpy()
    assert net._whole.compiled is not None      # FancyMLP's while on tensor values inside the one program
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls, reason", [(ReadsHost, "HY004"), (InPlace, "InPlaceInProgram")])
def test_a_forward_that_does_not_convert_runs_op_by_op_after_one_warning(cls, reason):
    x = _x(2, 4)
    net = _built(cls, x)
    want = net(x).asnumpy()
    net.hybridize()
    with pytest.warns(HybridizeFallbackWarning) as caught:
        got = net(x).asnumpy()
    (w,) = caught
    text = str(w.message)
    assert net.name in text and reason in text and "test_whole_block.py:" in text      # the block, why, where
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", HybridizeFallbackWarning)
        np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)      # said once


def test_a_traced_while_with_no_backward_is_recorded_op_by_op_and_predicts_compiled():
    x = _x(2, 20)
    net = _built(FancyMLP, x)
    want = _grads(net, x)
    net.hybridize()
    with pytest.warns(HybridizeFallbackWarning, match="when recorded"):
        got = _grads(net, x)
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert net._whole.untaped is not None and net._whole.fallback is None
    net(x)
    assert net._whole.compiled is not None


SCRIPT = '''
import mxnet as mx
from mxnet import nd
from mxnet.gluon import nn

class Net(nn.Block):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)
        self.body = nn.Sequential()
        self.body.add(nn.Dense(8, activation="relu"), nn.Dense(4))

    def forward(self, x):
        y = self.body(x)
        if y.sum() > 0:
            y = y * 2
        return y

mx.random.seed(0)
net = Net()
net.initialize()
x = nd.arange(12).reshape((3, 4)) / 10
print(" ".join("%.6f" % v for v in net(x).asnumpy().ravel()))
print(" ".join("%.6f" % v for v in net(x * -1).asnumpy().ravel()))
print("compiled", net.__dict__.get("_whole") is not None)
'''


def test_ast_hybrid_run_hybridize_compiles_the_blocks_a_script_calls(tmp_path):
    script = tmp_path / "net.py"
    script.write_text(SCRIPT)
    outs = []
    for flags in ([], ["--hybridize"]):
        out = subprocess.run([sys.executable, "-m", "ast_hybrid", "run", *flags, str(script)], capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout.splitlines())
    plain, hybrid = outs
    assert plain[-1] == "compiled False" and hybrid[-1] == "compiled True"
    for a, b in zip(plain[:2], hybrid[:2]):
        np.testing.assert_allclose(np.array(b.split(), float), np.array(a.split(), float), rtol=1e-5, atol=1e-6)


class Convolving(Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv = nn.Conv2D(4, 3, in_channels=3)

    def forward(self, x):
        y = self.conv(x)
        return y * 2 if y.mean() > 0 else y


def test_finish_tuning_reaches_a_hybridized_blocks_program():
    from ast_hybrid.gluon import finish_tuning
    from ast_hybrid.xla import tuning

    x = _x(1, 3, 12, 12)
    net = _built(Convolving, x)
    want = net(x).asnumpy()
    net.hybridize()
    net(x)
    finish_tuning(net)
    (program,) = net._whole.compiled.predict.table.values()
    assert isinstance(program, tuning.Tuning) and not program.pending
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_a_block_hybridized_by_the_flag_whose_input_shape_keeps_changing_runs_op_by_op(monkeypatch):
    """``--hybridize`` on GluonCV's ImageNet script hybridized its per-image transforms (a ``Compose`` called on
    images of every size): a program per image, first epoch 5 s -> 150 s.  Such a block goes back to op by op
    at its ``AUTO_SHAPES``-th shape, with one warning; one with steady shapes stays compiled."""
    from ast_hybrid.gluon import whole
    from ast_hybrid.gluon.data.vision import transforms

    monkeypatch.setenv("AST_HYBRID_HYBRIDIZE", "all")
    chain = transforms.Compose([transforms.Resize(8), transforms.ToTensor()])
    steady = nn.HybridSequential()
    steady.add(nn.Dense(3))
    steady.initialize()
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(whole.AUTO_SHAPES + 2):
            image = nd.array(rng.integers(0, 256, (10 + i, 12, 3)), dtype="uint8")
            assert chain(image).shape == (3, 8, 8)
            steady(nd.ones((2, 4)))
    said = [str(w.message) for w in caught if issubclass(w.category, HybridizeFallbackWarning)]
    assert len(said) == 1 and "compose" in said[0] and f"{whole.AUTO_SHAPES} shapes" in said[0], said
    assert chain.__dict__.get("_whole") is None and "_ah_shapes" not in chain.__dict__
    assert steady._active and steady._compiled is not None
