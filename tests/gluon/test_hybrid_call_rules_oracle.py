"""What a HybridBlock's call accepts, as MXNet 1.9.1's ``HybridBlock.forward`` and ``_call_cached_op`` rule it
(MXNet's own ``test_gluon.py`` checks each): None arguments, the argument structure a hybridized block keeps
from its first call (trailing Nones may come and go), no call without an array, no NDArrays mixed with Symbols,
no plain numbers once hybridized, and a subclass that defines ``forward`` itself runs it as written.  One
script, run by MXNet and under ``ast-hybrid run``: the same lines."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import mxnet as mx
from mxnet import gluon


def outcome(fn):
    try:
        out = fn()
    except (ValueError, TypeError, NotImplementedError) as exc:
        return type(exc).__name__
    return out.asnumpy().tolist() if hasattr(out, "asnumpy") else repr(out)


class Foo(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b=None):
        if a is None and b is not None:
            return b * 2
        if b is None and a is not None:
            return a + 1
        if a is not None and b is not None:
            return a + b
        raise NotImplementedError


class Nested(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.f1 = Foo()
            self.f2 = Foo()

    def hybrid_forward(self, F, a, b):
        return self.f2(self.f1(a, b), b)


x = mx.nd.array([1., 2.])
for hybrid in (False, True):
    for args in ((None, x), (x, x), (x, None), (None, None)):
        net = Nested()
        if hybrid:
            net.hybridize()
        print(hybrid, [a is None for a in args], outcome(lambda: net(*args)), outcome(lambda: net(*args)))

net = Nested()
net.hybridize()
print("first (None, x)", outcome(lambda: net(None, x)), "then (x, x)", outcome(lambda: net(x, x)))
net = Foo()
net.hybridize()
print("defaults", outcome(lambda: net(x)), outcome(lambda: net(x, None)), outcome(lambda: net(x)))
print("then both", outcome(lambda: net(x, x)))
for hybrid in (False, True):
    net = Foo()
    if hybrid:
        net.hybridize()
    print("mixed", hybrid, outcome(lambda: net(x, mx.sym.var("a"))), outcome(lambda: net(mx.sym.var("a"), x)))
    print("number", hybrid, outcome(lambda: net(x, 1)))

loss = gluon.loss.L1Loss()      # not hybridized (run compiled here): any argument structure, call after call
out, label, weight = mx.nd.array([1., 2., 3.]), mx.nd.array([1., 3., 5.]), mx.nd.array([0.5, 1., 0.5])
print("loss", outcome(lambda: loss(out, label)), outcome(lambda: loss(out, label, weight)),
      outcome(lambda: loss(out, label)))


class OwnForward(gluon.HybridBlock):
    def __init__(self, inplace, **kw):
        super().__init__(**kw)
        self.inplace = inplace
        with self.name_scope():
            self.dense = gluon.nn.Dense(2)

    def forward(self, x):
        y = self.dense(x.squeeze(inplace=self.inplace))
        return y, int(x.shape[0])       # a plain int out: only an imperative forward can give it


for inplace in (True, False):
    block = OwnForward(inplace)
    block.initialize(mx.init.One())
    block.hybridize()
    y, n = block(mx.nd.ones((3, 4, 1)))
    print("own forward", inplace, y.asnumpy().tolist(), n)
'''


def test_hybrid_block_call_rules_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert any(line.startswith("own forward True") for line in ours)
