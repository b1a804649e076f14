"""An MXNet 1.x training script as users wrote them: run unchanged by real MXNet 1.9.1 and by
``ast-hybrid run`` (tests/mxnet/test_activation.py compares what the two print)."""

import argparse

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

rs = np.random.RandomState(0)
X = rs.uniform(-1, 1, (8, 5)).astype("float32")
Y = rs.randint(0, 3, (8,)).astype(np.int)          # an alias numpy 1.24 removed


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Dense(16, activation="relu"), nn.BatchNorm(), nn.Dense(3))

    def hybrid_forward(self, F, x):
        return self.body(x)


ctx = mx.cpu()
net = Net()
net.initialize(mx.init.Xavier(), ctx=ctx)
net(nd.array(X, ctx=ctx))
for name, p in net.collect_params().items():   # the same starting point in both frameworks
    low = 0.5 if name.endswith("running_var") else -0.5
    p.set_data(nd.array(rs.uniform(low, low + 1, p.shape)))
net.hybridize()

loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": args.lr, "momentum": 0.9, "wd": 1e-3})
for epoch in range(args.epochs):
    data = gluon.utils.split_and_load(X, [ctx])[0]
    label = nd.array(Y.astype(np.float), ctx=ctx)
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(data.shape[0])
    print("epoch %d loss %.6f" % (epoch, loss.mean().asscalar()))
print("predict " + " ".join("%.6f" % v for v in net(nd.array(X[:2])).asnumpy().ravel()))
print("mxnet %s nd-is-F %s" % (mx.__version__, isinstance(nd.zeros(1), mx.nd.NDArray)))
