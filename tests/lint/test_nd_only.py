"""HY013 and HY014 (target mxnet): an ``F.<name>`` that MXNet 1.9.1's ``mx.sym`` lacks, and an
``autograd.Function`` made in a ``hybrid_forward``.  The list of names is MXNet's own (the oracle); the
cases below were run on MXNet 1.9.1 (``test_hybridize_fails_in_mxnet``)."""

import pytest

from ast_hybrid.testing.oracle import OracleError

from ast_hybrid.linter.checks_calls import ND_ONLY_INSTEAD
from ast_hybrid.linter.nd_only import ND_ONLY
from lint_helpers import check, codes, model
from nd_only_oracle import from_oracle

FUNCTION = """
import mxnet as mx
from mxnet import autograd
from mxnet.autograd import Function

class GradReverse(mx.autograd.Function):
    def forward(self, x):
        return x * 1
    def backward(self, dy):
        return -dy

class Ste(autograd.Function):
    def forward(self, x):
        return x
    def backward(self, dy):
        return dy

class Scaled(GradReverse):
    pass

class Plain(Function):
    pass

class NotAFunction(object):
    def __call__(self, x):
        return x
"""


@pytest.mark.oracle
def test_table_is_mxnets(oracle):
    assert from_oracle(oracle) == ND_ONLY


@pytest.mark.oracle
def test_hints_name_ops_mxnet_sym_has(oracle):
    """Every ``F.op`` the help suggests exists in MXNet 1.9.1's ``mx.sym``."""
    import re

    names = sorted({m for text in ND_ONLY_INSTEAD.values() for m in re.findall(r"`F\.(\w+)", text)}
                   | {m for text in ND_ONLY_INSTEAD.values() for m in re.findall(r"`(broadcast_\w+)`", text)})
    assert len(names) > 10
    missing = oracle.run(f"meta['missing'] = [n for n in {names!r} if not hasattr(mx.sym, n)]")["meta"]["missing"]
    assert missing == []
    assert set(ND_ONLY_INSTEAD) <= set(ND_ONLY)


@pytest.mark.oracle
def test_hybridize_fails_in_mxnet(oracle):
    """What the rules report breaks in MXNet at hybridize() and works imperatively: F.array, F.add,
    F.contrib.isnan and F.NDArray raise AttributeError; a gradient-reversal Function gives the forward's
    gradient, its backward silently dropped, when the first hybridized call is not recorded (the block not
    hybridized gives the reversed one), and fails when it is."""
    code = FUNCTION + """
from mxnet import gluon
cases = {
    'array': lambda F, x: x + F.array([1.0, 2.0]),
    'add': lambda F, x: F.add(x, x),
    'contrib.isnan': lambda F, x: F.contrib.isnan(x),
    'NDArray': lambda F, x: x * 2 if isinstance(x, F.NDArray) else x,
    'function': lambda F, x: GradReverse()(x) * 2,
}
for name, fn in cases.items():
    class B(gluon.HybridBlock):
        def hybrid_forward(self, F, x, fn=fn):
            return fn(F, x)
    b = B()
    b.initialize()
    for hybridize in (False, True):
        if hybridize:
            b.hybridize()
            if name == 'function':
                b(nd.array([1.0, 2.0]))     # a first call not recorded (predict), then training
        x = nd.array([1.0, 2.0])
        x.attach_grad()
        try:
            with mx.autograd.record():
                y = b(x)
            y.backward()
            meta[name + str(hybridize)] = x.grad.asnumpy().tolist()
        except Exception as exc:
            meta[name + str(hybridize)] = type(exc).__name__ + ': ' + str(exc).splitlines()[0]
"""
    got = oracle.run(code)["meta"]
    for name in ("array", "add", "contrib.isnan", "NDArray"):
        assert isinstance(got[name + "False"], list), got[name + "False"]
        hybrid = got[name + "True"]
        assert hybrid.startswith("AttributeError") and repr(name.split(".")[-1]) in hybrid, hybrid
    assert got["functionFalse"] == [-2.0, -2.0] and got["functionTrue"] == [2.0, 2.0]
    code = FUNCTION + """
from mxnet import gluon
class B(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return GradReverse()(x) * 2
b = B()
b.hybridize()
x = nd.array([1.0, 2.0])
x.attach_grad()
with mx.autograd.record():
    y = b(x)
"""
    with pytest.raises(OracleError):      # the first hybridized call recorded: MXNet fails
        oracle.run(code)


def test_table_holds_the_known_cases():
    assert {"array", "add", "concatenate", "greater", "contrib.isnan", "NDArray"} <= set(ND_ONLY)
    assert not {"zeros", "concat", "broadcast_add", "contrib.box_nms", "relu"} & set(ND_ONLY)


# -- HY013 -----------------------------------------------------------------

def test_hy013_reports_nd_only_names_through_f():
    src = model("""
        a = x + F.array([1.0, 2.0])
        b = F.add(a, y)
        c = F.contrib.isnan(b)
        fn = F.concatenate
        return fn([a, b]) if isinstance(x, F.NDArray) else c
    """)
    found = [(d.code, d.message.split("`")[1]) for d in check(src, "mxnet") if d.code == "HY013"]
    assert found == [("HY013", "F.array"), ("HY013", "F.add"), ("HY013", "F.contrib.isnan"),
                     ("HY013", "F.concatenate"), ("HY013", "F.NDArray")]
    helps = [d.help for d in check(src, "mxnet") if d.code == "HY013"]
    assert "get_constant" in helps[0] and "broadcast_add" in helps[1] and "x != x" in helps[2]


def test_hy013_in_a_helper_given_f():
    src = model("return helper(F, x)", params="x", header="def helper(F, x):\n    return F.greater(x, 0)\n")
    assert codes(src, "mxnet") == ["HY013"]


def test_hy013_silent_where_it_works():
    # ops mx.sym has; nd-only names outside F (mx.nd.array is a host array); under `if F is nd:`;
    # an attribute of something that is not F; target jax (F is nd in both modes there)
    src = model("""
        a = F.broadcast_add(x, F.zeros((2,)))
        b = F.concat(a, y, dim=0) + F.contrib.box_nms(a)
        c = nd.array([1.0])
        if F is nd:
            b = F.array([1.0]) + F.add(b, b)
        d = self.array + self.add(x)
        e = y.add
        return a + b + c + d
    """)
    assert "HY013" not in codes(src, "mxnet")
    assert "HY013" not in codes(model("return F.array([1.0]) + F.add(x, y)"), "jax")


def test_hy013_not_in_mxnet2_forward():
    """MXNet 2 style ``forward`` has no F."""
    src = ("from mxnet import gluon, np\nclass Net(gluon.HybridBlock):\n"
           "    def forward(self, x):\n        return x + np.array([1.0])\n")
    assert "HY013" not in codes(src, "mxnet")


# -- HY014 -----------------------------------------------------------------

def test_hy014_reports_functions_made_in_hybrid_forward():
    src = model("""
        a = GradReverse()(x)
        b = Ste()(y)
        f = Scaled()
        return a + b + f(x) + Plain()(x)
    """, header=FUNCTION)
    found = [(d.code, d.message.split("`")[1]) for d in check(src, "mxnet")]
    assert found == [("HY014", "GradReverse"), ("HY014", "Ste"), ("HY014", "Scaled"), ("HY014", "Plain")]


def test_hy014_in_a_helper_given_f():
    src = model("return reverse(F, x)", params="x",
                header=FUNCTION + "\ndef reverse(F, x):\n    return GradReverse()(F.relu(x))\n")
    assert codes(src, "mxnet") == ["HY014"]


def test_hy014_silent_where_it_works():
    # a callable class that is not a Function; under `if F is nd:`; outside a forward; target jax;
    # a local class shadowing nothing; a Function of another library (`import autograd`: HIPS autograd)
    src = model("""
        a = NotAFunction()(x)
        if F is nd:
            a = GradReverse()(a)
        return a
    """, header=FUNCTION + "\ndef outside(x):\n    return GradReverse()(x)\n")
    assert codes(src, "mxnet") == []
    assert codes(model("return GradReverse()(x)", header=FUNCTION), "jax") == []
    other = model("return Other()(x)", header="import autograd\nclass Other(autograd.Function):\n    pass\n")
    assert codes(other, "mxnet") == []


def test_hy014_relative_import_inside_mxnet():
    src = model("return Rev()(x)", params="x",
                header="from ... import autograd\nclass Rev(autograd.Function):\n    pass\n")
    assert codes(src, "mxnet") == ["HY014"]
