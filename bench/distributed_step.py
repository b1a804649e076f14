"""The sharded training step against the single-device one, on simulated CPU devices (issue 16).

    python -m bench.distributed_step [--devices 8] [--rounds 15]

The chapter's MLP (512 -> 256 -> 128 -> 2), one training step per call: "gluon" is MXNet's loop
(``autograd.record``, ``backward``, ``trainer.step``, sgd with momentum, ``kvstore='device'``) with the net
initialized on ``cpu(0)`` (one device) or on ``cpu(0..N-1)`` (the batch split, gradients all-reduced in the
compiled programs); "optax" is ``functional(net)`` + optax adam in one ``jax.jit``, the batch a
``NamedSharding`` or a plain array.  Simulated devices share the machine's cores, so this measures what
sharding costs (partitioned programs, the all-reduce, the transfers), not a speed-up.  Milliseconds per step,
medians of ``--rounds`` timed steps after two warm-up steps.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def _gluon_step(ctx, batch):
    import numpy as np

    from ast_hybrid import autograd, gluon, nd

    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation="relu", in_units=512), gluon.nn.Dense(128, activation="relu", in_units=256),
            gluon.nn.Dense(2, in_units=128))
    net.initialize(ctx=ctx)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9}, kvstore="device")
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rs = np.random.RandomState(0)
    x, y = nd.array(rs.randn(batch, 512)), nd.array(rs.randint(0, 2, batch))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        loss.wait_to_read()
    return step


def _optax_step(mesh, batch):
    import jax
    import numpy as np
    import optax
    from jax.sharding import NamedSharding, PartitionSpec as P

    from ast_hybrid import functional
    from ast_hybrid.gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu", in_units=512), nn.Dense(128, activation="relu", in_units=256),
            nn.Dense(2, in_units=128))
    net.initialize()
    apply_fn, params = functional(net)
    opt = optax.adam(1e-3)
    state = opt.init(params)
    rs = np.random.RandomState(0)
    x, y = rs.randn(batch, 512).astype("float32"), rs.randint(0, 2, batch).astype("int32")
    if mesh is not None:
        params, state = jax.device_put((params, state), NamedSharding(mesh, P()))
        x, y = jax.device_put((x, y), NamedSharding(mesh, P("data")))

    @jax.jit
    def train(p, s, xb, yb):
        loss, g = jax.value_and_grad(
            lambda p: optax.softmax_cross_entropy_with_integer_labels(apply_fn(p, xb), yb).mean())(p)
        updates, s = opt.update(g, s, p)
        return optax.apply_updates(p, updates), s, loss

    box = [params, state]

    def step():
        box[0], box[1], loss = train(box[0], box[1], x, y)
        loss.block_until_ready()
    return step


def _median_ms(step, rounds):
    step(), step()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--batches", type=int, nargs="+", default=[256, 2048])
    args = parser.parse_args(argv)
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.devices}"   # before jax starts

    import jax
    import numpy as np
    from jax.sharding import Mesh

    from ast_hybrid.ndarray import cpu

    mesh = Mesh(np.array(jax.devices()[:args.devices]), ("data",))
    many = [cpu(i) for i in range(args.devices)]
    print(f"jax {jax.__version__}, {os.cpu_count()} cores, {args.devices} simulated CPU devices; ms per step "
          f"(median of {args.rounds})")
    print(f"{'step':6} {'batch':>6} {'1 device':>9} {f'{args.devices} devices':>10} {'ratio':>6}")
    for batch in args.batches:
        for name, one, sharded in (("gluon", lambda: _gluon_step([cpu(0)], batch), lambda: _gluon_step(many, batch)),
                                   ("optax", lambda: _optax_step(None, batch), lambda: _optax_step(mesh, batch))):
            a, b = _median_ms(one(), args.rounds), _median_ms(sharded(), args.rounds)
            print(f"{name:6} {batch:>6} {a:>9.2f} {b:>10.2f} {b / a:>6.2f}")


if __name__ == "__main__":
    main()
