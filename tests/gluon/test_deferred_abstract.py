"""The deferred-shape pass before a hybridized block's first compile runs on shapes only
(``gluon.deferred.first_pass``): the parameters it initialises are bit for bit those of the pass that runs the
forward op by op on the arrays (``concrete_pass``, what the first call did before) and of a non-hybridized
first call, for the same seed; a forward it cannot run abstractly falls back to the concrete pass; errors for
parameters it cannot infer are the concrete pass's."""

import runpy

import numpy as np
import pytest

from ast_hybrid.gluon import HybridBlock, deferred
from ast_hybrid.gluon.parameter import DeferredInitializationError
from ast_hybrid.ops import rng

USER = """
from ast_hybrid.gluon import HybridBlock, nn
from ast_hybrid import init as mx_init


class Custom(HybridBlock):
    # stand-ins (gluon.deferred) for every parameter, a random op between two of them, a nested block
    def __init__(self, **kw):
        super().__init__(**kw)
        self.w = self.params.get('w', shape=(6, 0), allow_deferred_init=True)
        self.b = self.params.get('b', shape=(6,), allow_deferred_init=True)
        self.k = self.params.get('k', shape=(4, 0, 3, 3), allow_deferred_init=True)
        self.g = self.params.get('g', shape=(0,), init='ones', allow_deferred_init=True)
        self.beta = self.params.get('beta', shape=(0,), init='zeros', allow_deferred_init=True)
        self.mean = self.params.get('mean', shape=(0,), init='zeros', allow_deferred_init=True)
        self.var = self.params.get('var', shape=(0,), init='ones', allow_deferred_init=True)
        self.e = self.params.get('e', shape=(0, 0), init=mx_init.Normal(0.5), allow_deferred_init=True)
        with self.name_scope():
            self.head = nn.HybridSequential()
            self.head.add(nn.Dense(5, activation='relu'), nn.Dense(3))

    def hybrid_forward(self, F, img, tok, w, b, k, g, beta, mean, var, e):
        y = F.Convolution(img, k, no_bias=True, kernel=(3, 3), num_filter=4, pad=(1, 1))
        y = F.BatchNorm(y, g, beta, mean, var, fix_gamma=False)
        y = y + F.random.uniform(shape=(1,)) * 0
        y = F.FullyConnected(y, w, b, num_hidden=6)
        t = F.Embedding(tok, e, input_dim=10, output_dim=6)
        return self.head(F.broadcast_add(y.expand_dims(1), t))
"""

IMG = np.random.default_rng(1).standard_normal((2, 3, 5, 5)).astype("float32")
TOK = np.array([[1, 7, 3], [0, 9, 2]], "float32")


@pytest.fixture
def user_block(tmp_path):
    module = tmp_path / "user_block.py"       # a file: hybridize converts the forward from its source
    module.write_text(USER)
    return runpy.run_path(str(module))["Custom"]


@pytest.fixture
def no_fallback(monkeypatch):
    """The concrete pass must not run (the abstract one did the work)."""
    def refuse(block, args):
        raise AssertionError("the abstract pass fell back to the concrete one")
    monkeypatch.setattr(deferred, "concrete_pass", refuse)


def _values(net):
    return {k: np.asarray(p.data()._arr) for k, p in net._collect_params_with_prefix().items()}


def _assert_identical(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert a[k].tobytes() == b[k].tobytes(), f"{k} differs"


def _first_call(make, how, *inputs, seed=7, monkeypatch=None):
    """A fresh block's first call with the eager stream seeded: ``how`` is 'abstract' (hybridized, the
    default pass), 'concrete' (hybridized, the op-by-op pass) or 'plain' (not hybridized)."""
    rng.seed(seed)
    net = make()
    net.initialize()
    if how != "plain":
        net.hybridize()
    if how == "concrete":
        monkeypatch.setattr(deferred, "_abstract_pass", _refuse_abstract)
    try:
        out = net(*inputs)
    finally:
        if how == "concrete":
            monkeypatch.undo()
    return net, np.asarray(out._arr if hasattr(out, "_arr") else out)


def _refuse_abstract(block, args):
    raise RuntimeError("forced: run the concrete pass")


def test_a_users_block_gets_the_same_values_abstractly(user_block, monkeypatch):
    make = lambda: user_block(prefix="c_")      # noqa: E731
    ref, ref_out = _first_call(make, "concrete", IMG, TOK, monkeypatch=monkeypatch)
    plain, plain_out = _first_call(make, "plain", IMG, TOK)
    deferred_concrete = deferred.concrete_pass

    def refuse(block, args):
        raise AssertionError("the abstract pass fell back to the concrete one")
    monkeypatch.setattr(deferred, "concrete_pass", refuse)
    net, out = _first_call(make, "abstract", IMG, TOK)
    monkeypatch.setattr(deferred, "concrete_pass", deferred_concrete)
    got = _values(net)
    assert {k: v.shape for k, v in got.items()}["w"] == (6, 100)
    assert np.abs(got["e"]).max() > 0           # drawn, not zeros: the initializer ran with a key
    _assert_identical(got, _values(ref))
    _assert_identical(got, _values(plain))
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_allclose(out, plain_out, rtol=1e-5, atol=1e-5)


@pytest.mark.slow     # model-zoo networks built twice
def test_a_model_zoo_net_gets_the_same_values_abstractly(no_fallback):
    from ast_hybrid import nd
    from ast_hybrid.gluon.model_zoo import vision

    x = nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 3, 32, 32)).astype("float32"))
    plain, plain_out = _first_call(lambda: vision.resnet18_v1(classes=10), "plain", x)
    net, out = _first_call(lambda: vision.resnet18_v1(classes=10), "abstract", x)
    _assert_identical(_values(net), _values(plain))
    np.testing.assert_allclose(out, plain_out, rtol=1e-4, atol=1e-4)
    # the nested blocks ran inside the one trace: none built a program of its own
    assert [b for b in _blocks(net) if b is not net and b._compiled is not None] == []


def _blocks(block):
    yield block
    for child in block._children.values():
        yield from _blocks(child)


def test_a_forward_that_reads_a_value_falls_back_to_the_concrete_pass(tmp_path, monkeypatch):
    module = tmp_path / "reads.py"
    module.write_text("""
from ast_hybrid.gluon import HybridBlock, nn


class Reads(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.a = nn.Dense(4)
            self.b = nn.Dense(2)

    def hybrid_forward(self, F, x):
        y = self.a(x)
        self.seen = y.sum().asscalar()      # a read on the host: not possible on shapes only
        return self.b(y)
""")
    cls = runpy.run_path(str(module))["Reads"]
    x = np.random.default_rng(2).standard_normal((3, 5)).astype("float32")
    calls = []
    real = deferred.concrete_pass
    monkeypatch.setattr(deferred, "concrete_pass", lambda b, a: calls.append(b) or real(b, a))
    plain, _ = _first_call(lambda: cls(prefix="r_"), "plain", x)
    rng.seed(7)
    net = cls(prefix="r_")
    net.initialize()
    net.hybridize()
    deferred.first_pass(net, [x])
    assert calls == [net]
    _assert_identical(_values(net), _values(plain))


class _Uses(HybridBlock):
    """A parameter of unknown shape that the forward (``body(F, x, w)``) may fail to infer."""

    def __init__(self, body, **kw):
        super().__init__(**kw)
        self.body = body
        self.w = self.params.get("w", shape=(3, 0), allow_deferred_init=True)

    def hybrid_forward(self, F, x, w):
        return self.body(F, x, w)


@pytest.mark.parametrize("body, match", [
    (lambda F, x, w: w * 2, "'u_w'.*used \\(.__mul__\\)"),
    (lambda F, x, w: x, "did not pass 'u_w'"),
    (lambda F, x, w: F.dot(x, w), "'u_w'.*reaches `dot`.*cannot infer it"),
])
def test_errors_for_parameters_never_inferred_are_the_concrete_passs(monkeypatch, body, match):
    messages = []
    for how in ("concrete", "abstract"):
        net = _Uses(body, prefix="u_")
        net.initialize()
        net.hybridize()
        if how == "concrete":
            monkeypatch.setattr(deferred, "_abstract_pass", _refuse_abstract)
        with pytest.raises(DeferredInitializationError, match=match) as info:
            net(np.ones((2, 4), "float32"))
        monkeypatch.undo()
        messages.append(str(info.value))
        assert net.w._data is None
    assert messages[0] == messages[1]


def test_an_uninitialized_block_is_the_same_error():
    from ast_hybrid.gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Dense(3))
    net.hybridize()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        net(np.ones((2, 4), "float32"))
