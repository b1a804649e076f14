"""Train the chapter's MLP with optax through ``ast_hybrid.functional`` (needs the ``examples`` extra).

The data set is made here: two Gaussian blobs in 512 dimensions, labels 0/1.
``functional(net)`` gives a pure ``apply_fn(params, x)``, so ``jax.grad`` and
``optax`` apply directly; the trained values are written back into the net.

    python examples/train_optax.py
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ast_hybrid import functional
from ast_hybrid.gluon import nn


def make_data(n=512, dim=512, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    centers = rng.standard_normal((2, dim)).astype("float32") * 0.3
    x = centers[y] + rng.standard_normal((n, dim)).astype("float32")
    return jnp.asarray(x), jnp.asarray(y)


def main(steps=60):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    x, y = make_data()
    apply_fn, params = functional(net, x[:1])
    opt = optax.adam(1e-3)
    state = opt.init(params)

    def loss_fn(p, xb, yb):
        logits = apply_fn(p, xb)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()

    @jax.jit
    def step(p, s, xb, yb):
        loss, grads = jax.value_and_grad(loss_fn)(p, xb, yb)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, loss

    losses = []
    for i in range(steps):
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))
        if i % 10 == 0 or i == steps - 1:
            print(f"step {i:3d}  loss {losses[-1]:.4f}")
    for p in net.collect_params().values():   # write the trained values back into the Gluon net
        p.set_data(params[p.name])
    acc = float((jnp.argmax(jnp.asarray(net(x)), axis=1) == y).mean())
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, training accuracy {acc:.2f}")
    return losses, acc


if __name__ == "__main__":
    main()
