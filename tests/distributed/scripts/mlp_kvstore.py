"""An MXNet script: each worker trains on its slice of every global batch, ``trainer.step(global batch)``.

    python mlp_kvstore.py OUT KVSTORE [DEVICES [DIE_AT]]

Runs unchanged under MXNet 1.9.1 (``KVSTORE=local``, one device) and under ``ast-hybrid launch -n N``
(``dist_sync``).  Writes ``OUT.<rank>.json``: the worker's summed loss per step and, from worker 0, the final
parameters; ``OUT.<rank>.params`` (``save_parameters``).  ``DEVICES``: contexts per worker (``mx.cpu(0..DEVICES-1)``); ``DIE_AT``: the last worker exits
with status 3 at that step (a crashed worker).
"""

import json
import os
import sys

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon, nd

out, kind = sys.argv[1], sys.argv[2]
devices = int(sys.argv[3]) if len(sys.argv) > 3 else 1
die_at = int(sys.argv[4]) if len(sys.argv) > 4 else -1

kv = mx.kv.create(kind)
rank, workers = kv.rank, kv.num_workers
ctx = [mx.cpu(i) for i in range(devices)]
BATCH, STEPS = 16, 20
rs = np.random.RandomState(0)
X = rs.randn(BATCH * STEPS, 10).astype("float32")
Y = rs.randint(0, 3, BATCH * STEPS).astype("float32")

net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(16, activation="relu", in_units=10), gluon.nn.Dense(3, in_units=16))
net.initialize(ctx=ctx)
for p in net.collect_params().values():
    p.set_data(nd.array(rs.randn(*p.shape) * 0.3))
net.hybridize()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3},
                        kvstore=kv)
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

per = BATCH // workers
losses = []
for step in range(STEPS):
    if step == die_at and rank == workers - 1:
        os._exit(3)
    lo = step * BATCH + rank * per
    x, y = nd.array(X[lo:lo + per]), nd.array(Y[lo:lo + per])
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(BATCH)
    losses.append(float(loss.sum().asscalar()))
    if rank == 0:
        print(f"step {step} loss {losses[-1]:.6f}")
net.save_parameters(f"{out}.{rank}.params")      # under ast-hybrid launch only process 0 writes
if workers > 1:          # MXNet 1.9.1's 'local' store has only _barrier
    kv.barrier()
result = {"rank": rank, "workers": workers, "losses": losses}
if rank == 0:
    result["params"] = [p.data().asnumpy().tolist() for p in net.collect_params().values()]
with open(f"{out}.{rank}.json", "w") as f:
    json.dump(result, f)
