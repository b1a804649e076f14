"""``Block.apply(fn)`` as MXNet 1.9.1's: ``fn`` on every block, children first (recursively), then the block
itself; returns the block.  GluonCV's ActionRecVGG16 sets its dropout rates with it in ``__init__``."""

import pytest

pytestmark = pytest.mark.oracle

BUILD = """
net = nn.HybridSequential()
inner = nn.HybridSequential()
inner.add(nn.Dense(3), nn.Dropout(0.5))
net.add(nn.Conv2D(2, 1), inner, nn.Dropout(0.5), nn.Dense(2))
seen = []
def visit(block):
    seen.append(type(block).__name__)
    if isinstance(block, nn.Dropout):
        block._rate = 0.25
returned = net.apply(visit)
"""


def test_apply_visits_children_first_then_the_block(oracle):
    ref = oracle.run("from mxnet.gluon import nn\n" + BUILD + """
meta['seen'] = seen
meta['same'] = returned is net
meta['rates'] = [b._rate for b in (inner[1], net[2])]
""")["meta"]
    from ast_hybrid.gluon import nn
    scope = {"nn": nn}
    exec(BUILD, scope)
    assert scope["seen"] == ref["seen"] == ["Conv2D", "Dense", "Dropout", "HybridSequential", "Dropout", "Dense",
                                            "HybridSequential"]
    assert scope["returned"] is scope["net"] and ref["same"]
    assert [b._rate for b in (scope["inner"][1], scope["net"][2])] == ref["rates"] == [0.25, 0.25]
