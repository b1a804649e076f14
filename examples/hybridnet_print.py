"""The chapter's HybridNet: ``print`` inside ``hybrid_forward``.

In MXNet the prints show symbols once and then vanish after ``hybridize()``.
In ast-hybrid's own front (this file imports ``ast_hybrid``) the transpiler
turns them into run-time prints, so every call of the compiled program prints
the real values.  The same code under ``import mxnet`` (``ast-hybrid run``)
prints as MXNet does.

    python examples/hybridnet_print.py
"""

from ast_hybrid import nd  # was: from mxnet import nd
from ast_hybrid.gluon import nn  # was: from mxnet.gluon import nn


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        self.hidden = nn.Dense(10)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print('F: ', F)
        print('x: ', x)
        x = F.relu(self.hidden(x))
        print('hidden: ', x)
        return self.output(x)


net = HybridNet()
net.initialize()
x = nd.random.normal(shape=(1, 4))
print('--- imperative call')
net(x)
net.hybridize()
print('--- first hybridized call')
net(x)
print('--- second hybridized call (MXNet prints nothing here)')
net(x)
nd.waitall()
