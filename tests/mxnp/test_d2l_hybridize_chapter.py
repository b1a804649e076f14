"""The hybridization chapter of *Dive into Deep Learning* (MXNet edition, np style: ``from mxnet import np,
npx; npx.set_np()``), as a program of our own written to the chapter's shapes, run unmodified by MXNet 1.9.1
and under ``ast-hybrid run``: the same printed lines (values to 5 digits, classes, which lines a hybridized
``hybrid_forward`` prints, the files ``export`` writes).  Weights and inputs are deterministic (the chapter's
``np.random.normal`` and default initializer draw from each side's own generator)."""

from __future__ import annotations

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

CHAPTER = """
import os
import time
from mxnet import init, np, npx
from mxnet.gluon import nn
npx.set_np()


def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize(init.Constant(0.01))
    return net


x = np.linspace(0, 1, 512).reshape(1, 512)
net = get_net()
y = net(x)
print(type(y).__name__, y.shape, y.dtype, y)
net.hybridize()
print(net(x))


class benchmark:
    def __init__(self, description='Done in %.4f sec'):
        self.description = description

    def __enter__(self):
        self.start = time.time()
        return self

    def __exit__(self, *args):
        elapsed = time.time() - self.start
        print(self.description.split(':')[0], elapsed > 0)


net = get_net()
with benchmark('Without hybridization: %.4f sec'):
    for i in range(100): net(x)
    npx.waitall()
net.hybridize()
with benchmark('With    hybridization: %.4f sec'):
    for i in range(100): net(x)
    npx.waitall()

net.export('my_mlp')
print(sorted(f for f in os.listdir('.') if f.startswith('my_mlp') and f.endswith(('.json', '.params'))))


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        self.hidden = nn.Dense(4)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print('value  x: ', x)
        x = F.npx.relu(self.hidden(x))
        print('result  : ', x)
        return self.output(x)


net = HybridNet()
net.initialize(init.Constant(0.5))
x = np.array([[0.1, -0.2, 0.3]])
print(net(x))
net.hybridize()
print(net(x))
print(net(x))
print(type(net.hidden.weight.data()).__name__, npx.is_np_array())
"""


def test_the_hybridize_chapter_prints_what_mxnet_prints(tmp_path):
    ours, theirs = run_both(CHAPTER, tmp_path)
    # the symbolic pass prints MXNet's Symbols once (under import mxnet ours too): the input's name is MXNet's,
    # an intermediate's is MXNet's last op's there, the block's ``output`` here; every other line is MXNet's
    symbolic = [i for i, line in enumerate(theirs) if "_Symbol" in line]
    assert len(symbolic) == 2 and len(ours) == len(theirs)
    assert [line for i, line in enumerate(ours) if i not in symbolic] == \
           [line for i, line in enumerate(theirs) if i not in symbolic]
    assert [ours[i] for i in symbolic] == ["value  x:  <_Symbol data>", "result  :  <_Symbol hybridnet0_output>"]
    assert theirs[symbolic[0]] == "value  x:  <_Symbol data>"
