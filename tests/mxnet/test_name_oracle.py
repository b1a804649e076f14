"""``mx.name``: MXNet's ``NameManager`` and ``Prefix`` name the ``mx.sym`` nodes made inside them, nested and
one after another, as MXNet 1.9.1 names them.  One script, run by MXNet and under ``ast-hybrid run``."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import mxnet as mx

with mx.name.NameManager():
    a = mx.sym.relu(mx.sym.var("x"))
    b = mx.sym.relu(a)
    print(a.name, b.name)
with mx.name.Prefix("net_"):
    c = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3)
    print(c.name, c.list_arguments())
    with mx.name.NameManager():
        print(mx.sym.relu(c).name, mx.sym.relu(c, name="named").name)
with mx.name.NameManager():
    print(mx.sym.relu(mx.sym.var("y")).name)
print(mx.name.Prefix("p_").get(None, "conv"), mx.name.NameManager().get("given", "conv"))
'''


def test_name_managers_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert ours[0] == "relu0 relu1"
