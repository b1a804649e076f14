"""Block API that MXNet 1.9.1's own ``test_gluon.py`` checks and scripts rely on: forward hooks and pre-hooks
(``HookHandle.detach``, as a context manager), the warnings for Blocks kept in a list/dict attribute and for a
``Sequential`` of HybridBlocks being hybridized, and the ``TypeError`` for replacing a child Block (or a
Parameter) with a value of another type.  One script, run by MXNet and under ``ast-hybrid run``: the same lines."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import warnings
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import nn

calls = []
block = nn.Dense(10, prefix="d_")
block.initialize()
post = block.register_forward_hook(lambda b, x, y: calls.append(("post", b.name, len(x), y.shape)))
pre = block.register_forward_pre_hook(lambda b, x: calls.append(("pre", b.name, len(x), x[0].shape)))
block(mx.nd.ones((3, 5)))
post.detach()
block(mx.nd.ones((2, 5)))
pre.detach()
block(mx.nd.ones((3, 5)))
with block.register_forward_hook(lambda b, x, y: calls.append(("scoped", y.shape))):
    block(mx.nd.ones((4, 5)))
block(mx.nd.ones((4, 5)))
print("calls", calls)

seq = nn.Sequential()
inner = nn.Dense(3)
seq.add(inner)
seq.initialize()
seq.register_forward_pre_hook(lambda b, x: calls.append("seq-pre"))
inner.register_forward_hook(lambda b, x, y: calls.append(("inner", y.shape)))
seq(mx.nd.ones((2, 4)))
print("nested", calls[-2:])


class Listed(gluon.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.layers = [nn.Dense(i + 1) for i in range(3)]


class Dicted(gluon.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.layers = {"a": [nn.Dense(2)]}


class Registered(gluon.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.layers = nn.Sequential()
            self.layers.add(nn.Dense(2))
            self.data = {"a": "4", "b": 123}


for cls in (Listed, Dicted, Registered):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cls().collect_params()
    print(cls.__name__, sum("unregistered container" in str(x.message) for x in w))

for kind, build in (("all hybrid", lambda s: s.add(nn.Dense(2))), ("mixed", lambda s: s.add(nn.Dense(2), Listed()))):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = nn.Sequential()
        build(s)
        s.hybridize()
    print(kind, sum("HybridSequential" in str(x.message) for x in w))

b = gluon.Block()
b.child = gluon.Block()
for value in ((2,), None, nn.Dense(2)):
    try:
        b.child = value
        print("set", type(value).__name__)
    except TypeError as exc:
        print("TypeError", "Changing attribute type for child" in str(exc))
'''


def test_hooks_container_warnings_and_attribute_types_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert any(line.startswith("calls") and "scoped" in line for line in ours)


SUMMARY = r'''
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import nn
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Conv2D(4, 3, in_channels=3), nn.BatchNorm(), nn.Activation("relu"), nn.Dense(5))
net.initialize()
net.summary(mx.nd.ones((2, 3, 8, 8)))
net2 = nn.Sequential()
with net2.name_scope():
    net2.add(nn.Embedding(40, 30))
    net2.add(gluon.rnn.LSTM(30))
    net2.add(nn.Dense(40, flatten=False, params=net2[0].params))
net2.initialize()
net2.summary(mx.nd.ones((8, 4)))
net3 = gluon.rnn.LSTM(6)
net3.initialize()
net3.summary(mx.nd.ones((5, 4, 3)), net3.begin_state(4))
net.hybridize()
try:
    net.summary(mx.nd.ones((2, 3, 8, 8)))
except AssertionError as exc:
    print("AssertionError", exc)

class B(gluon.Block):
    def __init__(self, params=None):
        super().__init__(params=params)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(3, 3))


class C(gluon.Block):
    def __init__(self, b1, b2):
        super().__init__()
        self.b1, self.b2 = b1, b2


for dedup in (True, False):
    b1 = B()
    c = C(b1, B(b1.collect_params()))
    c.initialize(mx.init.Constant(0.5))
    c.save_parameters("shared.params", deduplicate=dedup)
    saved = mx.nd.load("shared.params")
    b1 = B()
    c = C(b1, B(b1.collect_params()))
    c.load_parameters("shared.params")
    print("deduplicate", dedup, sorted(saved), c.b2.weight.data().asnumpy().sum())
'''


def test_summary_and_shared_parameters_saved_once_as_mxnet(tmp_path):
    """``Block.summary`` (MXNet's table from forward hooks; refused on a hybridized block) and
    ``save_parameters(deduplicate=True)`` read back into blocks sharing the parameter."""
    ours, theirs = run_both(SUMMARY, tmp_path)
    assert ours == theirs
    assert any("Unique parameters in model" in line for line in ours)
