"""The ceiling of a CIFAR ResNet-20 training step on XLA:CPU: the step written by hand in JAX, in NCHW and in
NHWC (``lax.conv_general_dilated``, batch statistics, softmax cross-entropy, SGD with momentum: one jitted
function each), against our Gluon step (``bench/train.py``'s, hybridized), interleaved, ms per step.

Issue 11: if the best hand-written step is no faster than ours, what is left between ours and MXNet is
XLA:CPU's kernels for this network, not our training path.

    python -m bench.resnet20_hand
"""

from __future__ import annotations

import numpy as np

from bench import harness

STAGES = (16, 32, 64)


def init(rs, layout):
    """He-initialised weights (OIHW for NCHW, HWIO for NHWC) and BatchNorm gamma/beta, by name."""
    import jax.numpy as jnp

    p = {}

    def conv(name, cin, cout, k):
        w = rs.standard_normal((cout, cin, k, k)).astype("float32") * np.sqrt(2.0 / (cin * k * k))
        p[name] = jnp.asarray(w if layout == "NCHW" else w.transpose(2, 3, 1, 0))
        p[name + "_g"], p[name + "_b"] = jnp.ones(cout), jnp.zeros(cout)

    conv("stem", 3, 16, 3)
    cin = 16
    for s, c in enumerate(STAGES):
        for i in range(3):
            conv(f"s{s}b{i}c1", cin, c, 3)
            conv(f"s{s}b{i}c2", c, c, 3)
            if c != cin:
                conv(f"s{s}b{i}ds", cin, c, 1)
            cin = c
    p["fc_w"] = jnp.asarray(rs.standard_normal((64, 10)).astype("float32") * 0.1)
    p["fc_b"] = jnp.zeros(10)
    return p


def make_step(layout):
    """The jitted step ``(params, momenta, x, y) -> (params, momenta)`` in ``layout``."""
    import jax
    from jax import lax

    dn = ("NCHW", "OIHW", "NCHW") if layout == "NCHW" else ("NHWC", "HWIO", "NHWC")
    spatial = (2, 3) if layout == "NCHW" else (1, 2)
    channel = 1 if layout == "NCHW" else 3

    def conv_bn(p, name, x, stride):
        w = p[name]
        k = w.shape[2] if layout == "NCHW" else w.shape[0]
        x = lax.conv_general_dilated(x, w, (stride, stride), [(k // 2, k // 2)] * 2, dimension_numbers=dn)
        axes = (0,) + spatial
        m = x.mean(axes, keepdims=True)
        v = ((x - m) ** 2).mean(axes, keepdims=True)
        shape = [1, 1, 1, 1]
        shape[channel] = x.shape[channel]
        return (x - m) * lax.rsqrt(v + 1e-5) * p[name + "_g"].reshape(shape) + p[name + "_b"].reshape(shape)

    def forward(p, x):
        h = jax.nn.relu(conv_bn(p, "stem", x, 1))
        cin = 16
        for s, c in enumerate(STAGES):
            for i in range(3):
                n, stride = f"s{s}b{i}", 2 if s and not i else 1
                r = conv_bn(p, n + "c2", jax.nn.relu(conv_bn(p, n + "c1", h, stride)), 1)
                h = jax.nn.relu(r + (conv_bn(p, n + "ds", h, stride) if c != cin else h))
                cin = c
        return h.mean(spatial) @ p["fc_w"] + p["fc_b"]

    def loss(p, x, y):
        return -jax.numpy.take_along_axis(jax.nn.log_softmax(forward(p, x)), y[:, None], 1).sum()

    @jax.jit
    def step(p, m, x, y):
        g = jax.grad(loss)(p, x, y)
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m - 0.01 * g / x.shape[0], m, g)
        return jax.tree_util.tree_map(lambda a, b: a + b, p, m), m

    return step


def hand_contender(layout, x, y):
    import jax
    import jax.numpy as jnp

    p = init(np.random.RandomState(1), layout)
    state = [p, jax.tree_util.tree_map(jnp.zeros_like, p)]
    xj = jnp.asarray(x if layout == "NCHW" else x.transpose(0, 2, 3, 1))
    yj = jnp.asarray(y.astype("int32"))
    step = make_step(layout)

    def run():
        state[0], state[1] = step(state[0], state[1], xj, yj)
        return state[0]["fc_b"]

    return harness.local(run)


def main():
    from bench import train

    name = "CIFAR ResNet-20 b64 32x32"
    x, y = train.data(name)
    runs = {f"hand-written {layout}": hand_contender(layout, x, y) for layout in ("NCHW", "NHWC")}
    runs[harness.OURS] = harness.local(train.ours_step(name, x, y))
    t = harness.interleave(runs, 4, rounds=5)
    print(", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in t.items()))


if __name__ == "__main__":
    main()
