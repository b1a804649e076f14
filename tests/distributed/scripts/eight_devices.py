"""One process, 8 simulated devices: Gluon training with kvstore='device' against one device.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python eight_devices.py OUTDIR

Prints a JSON report (``tests/distributed/test_one_process.py`` reads it) and saves each trained net's
parameters in OUTDIR.  ``NETS`` builds the nets (the test builds them again on one device to load them).
"""

import json
import sys
import warnings

import numpy as np

import ast_hybrid.mxnet as mx
from ast_hybrid.mxnet import autograd, gluon, nd
from ast_hybrid.mxnet.gluon.utils import split_and_load

BATCH, STEPS = 16, 20


def mlp():
    net = gluon.nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(gluon.nn.Dense(32, activation="relu", in_units=10), gluon.nn.Dense(3, in_units=32))
    return net


def cnn():
    net = gluon.nn.HybridSequential(prefix="cnn_")
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, in_channels=1), gluon.nn.BatchNorm(in_channels=4),
                gluon.nn.Activation("relu"), gluon.nn.MaxPool2D(2), gluon.nn.Flatten(),
                gluon.nn.Dense(3, in_units=4 * 3 * 3))
    return net


NETS = {"mlp": (mlp, (10,)), "cnn": (cnn, (1, 8, 8))}


def build(kind, ctx):
    """The net, its parameters drawn from a fixed seed, on ``ctx``."""
    rs = np.random.RandomState(0)
    net = NETS[kind][0]()
    net.initialize(ctx=ctx)
    for name, p in net.collect_params().items():
        value = rs.randn(*p.shape) * 0.3
        if name.endswith(("gamma", "running_var")):
            value = np.abs(value) + 0.5
        p.set_data(nd.array(value))
    net.hybridize()
    return net


def batches(kind, batch=BATCH, steps=STEPS):
    rs = np.random.RandomState(1)
    for _ in range(steps):
        yield nd.array(rs.randn(batch, *NETS[kind][1])), nd.array(rs.randint(0, 3, batch))


def train(kind, ctx, pattern="whole"):
    """Losses (summed per step) of ``STEPS`` sgd steps; 'whole': net(batch), 'split': MXNet's loop over
    split_and_load's slices.  Also what the first step's arrays are laid out as."""
    net = build(kind, ctx)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9}, kvstore="device")
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    losses, layout = [], {}
    for step, (x, y) in enumerate(batches(kind)):
        with autograd.record():
            if pattern == "whole":
                out = net(x)
                parts = [loss_fn(out, y)]
            else:
                parts = [loss_fn(net(a), b) for a, b in zip(split_and_load(x, ctx), split_and_load(y, ctx))]
        for part in parts:
            part.backward()
        trainer.step(BATCH)
        losses.append(sum(float(part.sum().asscalar()) for part in parts))
        if step == 0 and pattern == "whole":
            weight = next(iter(net.collect_params().values()))
            layout = {"output": _layout(out), "loss": _layout(parts[0]), "weight": _layout(weight.data()),
                      "grad": _layout(weight.grad()), "n_ctx": len(weight.list_ctx()),
                      "list_data": [str(a.context) for a in weight.list_data()]}
    return net, losses, layout


def _layout(a):
    arr = a._arr
    return {"spec": str(getattr(arr.sharding, "spec", None)), "devices": len(arr.sharding.device_set),
            "shard_rows": sorted({s.data.shape[0] if s.data.ndim else 0 for s in arr.addressable_shards})}


def main(outdir):
    ctx = [mx.cpu(i) for i in range(8)]
    report = {}
    test_x = {kind: nd.array(np.random.RandomState(2).randn(8, *shape)) for kind, (_, shape) in NETS.items()}
    for kind in NETS:
        _, single, _ = train(kind, [mx.cpu(0)])
        net, multi, layout = train(kind, ctx)
        net.save_parameters(f"{outdir}/{kind}.params")
        report[kind] = {"single": single, "multi": multi, "layout": layout,
                        "test_output": net(test_x[kind]).asnumpy().tolist(),
                        "test_x": test_x[kind].asnumpy().tolist()}
    report["mlp"]["split"] = train("mlp", ctx, "split")[1]
    again = NETS["cnn"][0]()            # a checkpoint loaded onto the devices: replicated there, same outputs
    again.load_parameters(f"{outdir}/cnn.params", ctx=ctx)
    weight = next(iter(again.collect_params().values()))
    report["reloaded"] = {"layout": _layout(weight.data()), "n_ctx": len(weight.list_ctx()),
                          "output": again(test_x["cnn"]).asnumpy().tolist()}

    # a batch that does not divide over the devices: split_and_load as MXNet, the net computes it anyway
    x = nd.array(np.arange(30, dtype="float32").reshape(10, 3))
    try:
        split_and_load(x, ctx)
        report["even_split_error"] = None
    except ValueError as exc:
        report["even_split_error"] = str(exc)
    report["uneven_rows"] = [a.shape[0] for a in split_and_load(x, ctx, even_split=False)]
    report["uneven_contexts"] = [str(a.context) for a in split_and_load(x, ctx, even_split=False)]
    net = build("mlp", ctx)
    one = build("mlp", [mx.cpu(0)])
    x12 = nd.array(np.random.RandomState(3).randn(12, 10))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = net(x12)
    report["uneven_warnings"] = [str(w.message) for w in caught]
    report["uneven_output_diff"] = float(np.abs(out.asnumpy() - one(x12).asnumpy()).max())
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
