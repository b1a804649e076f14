"""Inputs MXNet 1.9.1 refuses with its own error, and ast-hybrid refused with a raw internal one (issue 30):
``nd.moveaxis`` with an axis named twice (``ValueError: repeated axis``) and a hybridized block given a plain
int (MXNet's ValueError naming the argument); and what MXNet accepts, next to them (negative and several
axes, ``ToTensor`` on a batch, an int argument op by op).  Run by MXNet and under ``ast-hybrid run``: the
same lines."""

from __future__ import annotations

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = """
from mxnet import nd
from mxnet.gluon import nn
from mxnet.gluon.data.vision import transforms


def show(label, f):
    try:
        r = f()
        print(label, "->", r.shape if hasattr(r, 'shape') else r)
    except Exception as e:
        print(label, "!!", type(e).__name__, str(e).split('\\n')[0][:150])


x = nd.ones((2, 3, 4))
show("moveaxis negative", lambda: nd.moveaxis(x, -1, 0))
show("moveaxis several", lambda: nd.moveaxis(x, (0, 1), (2, 0)))
show("moveaxis repeated", lambda: nd.moveaxis(x, (0, 0), (1, 2)))
show("moveaxis repeated destination", lambda: nd.moveaxis(x, (0, 1), (2, -1)))
show("ToTensor on a batch", lambda: transforms.ToTensor()(nd.ones((2, 4, 5, 3), dtype='uint8')))


class Scale(nn.HybridBlock):
    def hybrid_forward(self, F, x, k):
        return x * k


b = Scale()
b.initialize()
show("int argument", lambda: b(nd.ones((2,)), 3))
b.hybridize()
show("int argument hybridized", lambda: b(nd.ones((2,)), 3))
show("array argument hybridized", lambda: b(nd.ones((2,)), nd.ones((2,))))
"""


def test_refused_as_mxnet_refuses_it(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
