"""Values MXNet writes where ast-hybrid silently did not (issue 30, "silent wrong values"), each run as a user
runs it, by MXNet 1.9.1 and under ``ast-hybrid run``, printing the same lines: ``nd.ones/zeros/full(...,
out=o)`` fill ``o``; ``autograd.mark_variables([x], [dx])`` then ``backward()`` writes the gradient into
``dx``; ``load_parameters(..., cast_dtype=True, dtype_source='saved')`` gives the parameters the file's
dtype (``'current'``: the block's)."""

from __future__ import annotations

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = """
from mxnet import nd, autograd
from mxnet.gluon import nn
o = nd.zeros((2, 2)) + 5
nd.ones((2, 2), out=o); print("ones out", o.asnumpy().tolist())
nd.zeros((2, 2), out=o); print("zeros out", o.asnumpy().tolist())
r = nd.full((2, 2), 3, out=o); print("full out", o.asnumpy().tolist(), r.asnumpy().tolist())
x = nd.array([1., 2., 3.]); dx = nd.zeros((3,))
autograd.mark_variables([x], [dx])
with autograd.record():
    y = (x * x).sum()
y.backward(); print("mark_variables dx", dx.asnumpy().tolist(), x.grad.asnumpy().tolist())
with autograd.record():
    y = (x * 3).sum()
y.backward(); print("again", dx.asnumpy().tolist())
net = nn.Dense(2, in_units=3); net.initialize(); net.cast('float16'); net.save_parameters('h.params')
net2 = nn.Dense(2, in_units=3); net2.load_parameters('h.params', cast_dtype=True, dtype_source='saved')
print("saved", net2.weight.dtype, net2.weight.data().dtype)
net3 = nn.Dense(2, in_units=3); net3.load_parameters('h.params', cast_dtype=True, dtype_source='current')
print("current", net3.weight.data().dtype)
"""


def test_values_written_where_mxnet_writes_them(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs


def test_out_of_another_dtype_is_refused_as_mxnet_refuses_it():
    """MXNet: ``Type inconsistent, Provided = int32, inferred type = float32``; here an error saying so."""
    from ast_hybrid import nd

    i = nd.zeros((2,), dtype="int32")
    with pytest.raises(ValueError, match="out= is int32, the result float32"):
        nd.ones((2,), out=i)
    assert i.asnumpy().tolist() == [0, 0]


DOOR = """
import mxnet as mx
ns = {}
exec("from mxnet.autograd import *", ns)
print([k for k in ("record", "backward", "Function", "NDArray", "array") if k in ns])
print(ns["array"].__module__, ns["NDArray"] is mx.nd.NDArray, mx.cpu(1), mx.cpu(1) == mx.cpu(1), mx.cpu(3) == mx.cpu(0))
print(mx.nd.ones((2,), ctx=mx.cpu(1)).asnumpy().tolist())
with mx.cpu(2):
    print(mx.current_context(), mx.nd.zeros((1,)).asnumpy().tolist())
"""


def test_what_mxnet_accepts_at_its_door(tmp_path):
    """``from mxnet.autograd import *`` gives the array names MXNet's gives; ``mx.cpu(i)`` for any ``i`` is
    a CPU context (MXNet accepts any index: all CPU contexts share the host's memory).  Where ours differs:
    an array made on ``cpu(1)`` says ``cpu(0)``, the device it is on (an array's context is its device's)."""
    ours, theirs = run_both(DOOR, tmp_path)
    assert ours == theirs
