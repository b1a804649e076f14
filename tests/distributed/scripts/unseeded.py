"""An MXNet script that seeds nothing: each worker's initializer draws its own values, and MXNet's Trainer
makes them process 0's at its first step (kvstore broadcast).  Writes this worker's final weights to
ARGV[1].RANK.npy."""

import sys

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn

kv = mx.kv.create("dist_sync")
x = nd.array(np.random.RandomState(kv.rank).rand(8, 5).astype("float32"))
net = nn.Dense(3, in_units=5)
net.initialize(mx.init.Xavier())
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore=kv)
first = net.weight.data().asnumpy()
for _ in range(3):
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    trainer.step(16)
kvk = nd.zeros((2,))
kv.init("k", nd.array([kv.rank + 1.0, 7.0]))
kv.pull("k", out=kvk)
np.save(f"{sys.argv[1]}.{kv.rank}.npy", np.concatenate([first.ravel(), net.weight.data().asnumpy().ravel(),
                                                       kvk.asnumpy()]))
