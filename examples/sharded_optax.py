"""A data-parallel optax step over every device: ``functional(net)`` under ``jax.jit`` with NamedSharding inputs.

The batch is split along a ``Mesh`` axis ``'data'``; the parameters and optimizer state are replicated;
XLA sums the gradients over the devices inside the compiled step.  On a CPU-only machine the script asks
jax for 8 simulated devices (``XLA_FLAGS``, before jax starts); on GPUs it uses the ones there.  The same
step on one device gives the same losses (printed at the end).  Needs the ``examples`` extra (optax).

    python examples/sharded_optax.py
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")   # CPU: 8 simulated devices

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

from ast_hybrid import functional  # noqa: E402
from ast_hybrid.gluon import nn  # noqa: E402


def make_net():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=1, in_channels=1), nn.BatchNorm(in_channels=8), nn.Activation("relu"),
                nn.MaxPool2D(2), nn.Flatten(), nn.Dense(10, in_units=8 * 8 * 8))
    net.initialize()
    return net


def make_data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    x = rng.standard_normal((n, 1, 16, 16)).astype("float32") + y[:, None, None, None] * 0.1
    return x, y.astype("int32")


def train(net, mesh, steps=10, batch=64):
    """Losses of ``steps`` adam steps from ``net``'s values, the batch split over ``mesh`` (None: one device)."""
    apply_fn, params = functional(net)
    aux = [p.name for p in net.collect_params().values() if p.grad_req == "null"]   # BatchNorm's statistics
    opt = optax.adam(1e-2)
    state = opt.init(params)
    if mesh is not None:
        replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
        params, state = jax.device_put((params, state), replicated)
    x, y = make_data()

    def loss_fn(trainable, frozen, xb, yb, key):
        logits, new_aux = apply_fn({**trainable, **frozen}, xb, training=True, key=key)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean(), new_aux

    @jax.jit
    def step(params, state, xb, yb, key):
        trainable = {k: v for k, v in params.items() if k not in aux}
        frozen = {k: params[k] for k in aux}
        (loss, new_aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(trainable, frozen, xb, yb, key)
        grads = {**grads, **{k: jnp.zeros_like(v) for k, v in frozen.items()}}
        updates, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        return {**params, **{k: new_aux.get(k, params[k]) for k in aux}}, state, loss

    losses = []
    for i in range(steps):
        lo = (i * batch) % len(x)
        xb, yb = x[lo:lo + batch], y[lo:lo + batch]
        if mesh is not None:
            xb, yb = jax.device_put((xb, yb), split)      # each device gets batch / n rows
        params, state, loss = step(params, state, xb, yb, jax.random.PRNGKey(i))
        losses.append(float(loss))
    return losses, params


def main():
    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("data",))
    net = make_net()
    sharded, params = train(net, mesh)
    single, _ = train(net, None)
    weight = next(iter(params.values()))
    print(f"{len(devices)} devices; a parameter's sharding: {weight.sharding.spec}")
    for i, (a, b) in enumerate(zip(sharded, single)):
        print(f"step {i}  loss {a:.5f}  (one device: {b:.5f})")
    print(f"largest difference from one device: {max(abs(a - b) for a, b in zip(sharded, single)):.2e}")
    return sharded, single


if __name__ == "__main__":
    main()
