"""Backward through pooling inside a hybridized block (it failed with jax's "Linearization failed to produce
known values" while the window reductions' init values were traced arrays): the gradients of a recorded step,
hybridized and op by op, are MXNet 1.9.1's."""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import nn

pytestmark = pytest.mark.oracle

X = np.random.RandomState(0).uniform(-1, 1, (2, 3, 9, 9)).astype("float32")
W = np.random.RandomState(1).uniform(-1, 1, (2, 4 * 5 * 5)).astype("float32")

POOLS = {
    "max": "nn.MaxPool2D(pool_size=3, strides=2, padding=1)",
    # windows that do not overlap: ops/max_pool.py's backward (ReLU's zeros tie: the first maximum takes it)
    "max_2x2": "nn.MaxPool2D(pool_size=2, strides=2)",
    "max_3x3_s3": "nn.MaxPool2D(pool_size=3, strides=3)",
    "avg": "nn.AvgPool2D(pool_size=3, strides=2, padding=1)",
    "avg_ceil_no_pad_count": "nn.AvgPool2D(pool_size=2, strides=2, ceil_mode=True, count_include_pad=False)",
    "global_max": "nn.GlobalMaxPool2D()",
    "global_avg": "nn.GlobalAvgPool2D()",
}

CODE = """
net = nn.HybridSequential()
net.add(nn.Conv2D(4, 3, padding=1, in_channels=3), nn.Activation('relu'), {pool}, nn.Flatten())
net.initialize()
for i, p in enumerate(net.collect_params().values()):
    p.set_data(nd.array(np.linspace(-0.5, 0.7, p.data().size).reshape(p.shape) * (1 + i)))
if {hyb}:
    net.hybridize()
x = nd.array(inp['x'])
x.attach_grad()
with autograd.record():
    y = net(x)
    l = (y * nd.array(inp['w'][:, :y.shape[1]])).sum()
l.backward()
res = [y, x.grad] + [p.grad() for p in net.collect_params().values()]
"""


@pytest.fixture(scope="module")
def ref(oracle):
    code = "from mxnet import autograd\nfrom mxnet.gluon import nn\n"
    for name, pool in POOLS.items():
        code += CODE.format(pool=pool, hyb=True)
        code += f"for i, r in enumerate(res):\n    out['{name}/%d' % i] = r.asnumpy()\n"
    return oracle.run(code, x=X, w=W)


@pytest.mark.parametrize("hyb", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("name", list(POOLS))
def test_pooling_gradients_match_mxnet(ref, name, hyb):
    env = {"nd": nd, "nn": nn, "np": np, "autograd": autograd, "inp": {"x": X, "w": W}}
    exec(CODE.format(pool=POOLS[name], hyb=hyb), env)
    for i, r in enumerate(env["res"]):
        want = ref[f"{name}/{i}"]
        np.testing.assert_allclose(r.asnumpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max(),
                                   err_msg=f"{name}: result {i}")


NO_PAD = ((0, 0), (0, 0))


@pytest.mark.parametrize("kernel, stride, pads", [((2, 2), (2, 2), NO_PAD), ((3, 2), (3, 2), NO_PAD),
                                                  ((3, 3), (2, 2), ((1, 1), (1, 1))),
                                                  ((3, 3), (1, 2), ((0, 2), (1, 0)))])
def test_max_pool_backward_is_the_general_paths(kernel, stride, pads):
    """Without ties the first maximum is the maximum: ops/max_pool.py's backward equals jax's through the
    general reduce_window path, channel first and last, windows overlapping or not, padded or not."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    from ast_hybrid.ops.max_pool import max_pool_windows

    x = jnp.asarray(np.random.RandomState(3).standard_normal((2, 3, 9, 8)).astype("float32"))

    def general(v):
        return lax.reduce_window(v, np.array(-np.inf, np.float32), lax.max, (1, 1) + kernel, (1, 1) + stride,
                                 ((0, 0), (0, 0)) + pads)

    y0, back0 = jax.vjp(general, x)
    g = jnp.asarray(np.random.RandomState(4).standard_normal(y0.shape).astype("float32"))
    y1, back1 = jax.vjp(lambda v: max_pool_windows(v, kernel, stride, pads, True), x)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_allclose(back0(g)[0], back1(g)[0], rtol=1e-6, atol=1e-6)
    last = jnp.transpose(x, (0, 2, 3, 1))
    y2, back2 = jax.vjp(lambda v: max_pool_windows(v, kernel, stride, pads, False), last)
    np.testing.assert_array_equal(jnp.transpose(y2, (0, 3, 1, 2)), y0)
    np.testing.assert_allclose(jnp.transpose(back2(jnp.transpose(g, (0, 2, 3, 1)))[0], (0, 3, 1, 2)), back0(g)[0],
                               rtol=1e-6, atol=1e-6)
