"""Imperative gradients against MXNet 1.9.1's autograd: the same record/backward code in both, ``.grad`` compared;
and the recording/training switches."""

import numpy as np
import pytest
from ops_harness import check, inputs, mx_results

from ast_hybrid import autograd, nd

pytestmark = pytest.mark.oracle

ARR = inputs(8, a=((3, 4), "float32"), b=((3, 4), "float32"), c=((1, 4), "float32"), w=((5, 4), "float32"),
             bias=((5,), "float32"), img=((2, 3, 6, 6), "float32"), cw=((4, 3, 3, 3), "float32"),
             gamma=((3,), "float32", 0.5, 1.5), beta=((3,), "float32"), p=((3, 4), "float32", 0.5, 2.0))
ARR["lab"] = np.array([0, 3, 1], "float32")
ARR["idx"] = np.array([2, 0, 1, 1], "float32")
ARR["ia"] = np.array([[3, -2, 5, 1], [0, 4, -7, 2]], "int32")      # MXNet differentiates integer arrays too
ARR["ib"] = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], "int32")
ARR["t"] = np.array([[0, 1, -1, 0], [2, 0, 0, -3]], "float32")     # exact ties and zeros: MXNet's tie rules
ARR["u"] = np.array([[0, 1, 2, 0], [2, -1, 0, 5]], "float32")


def grad_case(body, wrt=("a",), head="y"):
    """Code that records ``body`` (which sets ``y``), runs backward and returns the gradients of ``wrt``."""
    lines = [f"{v}.attach_grad()" for v in wrt] + ["with autograd.record():"]
    lines += ["    " + line for line in body.split("\n")]
    lines += [f"{head}.backward()", f"res = [{', '.join(v + '.grad' for v in wrt)}]"]
    return "\n".join(lines)


BODIES = [
    ("y = (ia * ia + ia * 3).sum()", ("ia",)),
    ("y = nd.relu(ia) * ib - ia * ia * ib", ("ia", "ib")),
    # a float gradient reaching an integer array: MXNet's C cast (toward zero), an int scalar op's int(2.7)
    ("y = ia.astype('float32') * 0.7 + ia * 2.7 - ib * 1.6 - ib.astype('float32') * 1.7", ("ia", "ib")),
    ("y = nd.maximum(t, u) + 10 * nd.minimum(t, u) + 100 * nd.relu(t)", ("t", "u")),
    ("y = nd.maximum(t, 0) * 3 + nd.minimum(t, 0) + nd.broadcast_maximum(t, nd.zeros((1, 4)))", ("t",)),
    ("y = nd.clip(t, 0, 1) * u + nd.clip(u, -1, 2)", ("t", "u")),
    ("y = (a * b + a / p - a ** 2).sum()", ("a", "b", "p")),
    ("y = nd.sigmoid(a) * nd.tanh(b) + nd.exp(a) * nd.log(p)", ("a", "b", "p")),
    ("y = nd.broadcast_mul(a, c) + nd.broadcast_add(a, c)", ("a", "c")),
    ("y = nd.relu(a) + nd.abs(b) + nd.sqrt(p) + nd.square(a)", ("a", "b", "p")),
    ("y = nd.sum(a, axis=1) * nd.mean(b, axis=1)", ("a", "b")),
    ("y = nd.max(a, axis=0) + nd.min(b)", ("a", "b")),
    ("y = nd.norm(a) + nd.norm(b, axis=1).sum()", ("a", "b")),
    ("y = nd.softmax(a) * b", ("a",)),
    ("y = nd.log_softmax(a, axis=0) * b", ("a",)),
    ("y = nd.FullyConnected(a, w, bias, num_hidden=5)", ("a", "w", "bias")),
    ("y = nd.dot(a, w, transpose_b=True)", ("a", "w")),
    ("y = nd.Convolution(img, cw, kernel=(3, 3), num_filter=4, no_bias=True, pad=(1, 1))", ("img", "cw")),
    ("y = nd.Pooling(img, kernel=(2, 2), stride=(2, 2), pool_type='max')", ("img",)),
    ("y = nd.Pooling(img, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg')", ("img",)),
    ("y = nd.BatchNorm(img, gamma, beta, nd.zeros((3,)), nd.ones((3,)), fix_gamma=False)", ("img", "gamma", "beta")),
    ("y = nd.LayerNorm(a, nd.ones((4,)) * 2, nd.zeros((4,)))", ("a",)),
    ("y = nd.GroupNorm(img * b[0, 0], gamma[:1], beta[:1]) * nd.sin(img)", ("img", "gamma", "beta")),
    ("y = nd.GroupNorm(nd.ones((2, 4, 5, 5)) * a[0, 0], gamma[:2], beta[:2], num_groups=2)", ("a", "gamma", "beta")),
    ("y = nd.GroupNorm(img, gamma[:1], beta[:1], output_mean_var=True)[0]", ("img",)),
    ("y = nd.take(a, idx)", ("a",)),
    ("y = nd.pick(a, lab, axis=1)", ("a",)),
    ("y = nd.Embedding(lab, w, input_dim=5, output_dim=4)", ("w",)),
    ("y = nd.concat(a, b, dim=0).reshape((-1,))", ("a", "b")),
    ("y = nd.split(a, num_outputs=2, axis=1)[1] * 3", ("a",)),
    ("y = a.T * 2 + nd.transpose(b)", ("a", "b")),
    ("y = a[1:, ::2] * b[1:, 1::2]", ("a", "b")),
    ("y = nd.where(a > 0, a, b * 2)", ("a", "b")),
    ("y = nd.stop_gradient(a) * b + a", ("a", "b")),
    ("y = nd.clip(a, -0.5, 0.5) * 3", ("a",)),
    ("y = nd.SoftmaxOutput(a, lab)", ("a",)),
    ("y = nd.expand_dims(a, 0).broadcast_to((2, 3, 4)).sum(axis=0)", ("a",)),
    ("y = nd.LeakyReLU(a, slope=0.2) + nd.LeakyReLU(b, act_type='elu')", ("a", "b")),
    ("y = a.copy()\n    y += b\n    y = y * a", ("a", "b")),
]

CASES = [grad_case(body, wrt) for body, wrt in BODIES] + [
    "a.attach_grad()\nwith autograd.record():\n    y = a * 2\ny.backward(nd.ones((3, 4)) * 3)\nres = a.grad",
    "a.attach_grad(grad_req='add')\nfor _ in range(2):\n    with autograd.record():\n        y = a * a\n"
    "    y.backward()\nres = a.grad",
    "a.attach_grad()\nwith autograd.record():\n    y = a * b\nres = autograd.grad(y, [a])",
    "a.attach_grad()\nwith autograd.record():\n    y = nd.exp(a)\n    z = y * 2\nz.backward()\nres = a.grad",
    "a.attach_grad()\nres = a.grad",
    "a.attach_grad()\ny = a * 2\ny.backward()",
    "res = [autograd.is_recording(), autograd.is_training()]",
    "with autograd.record():\n    res = [autograd.is_recording(), autograd.is_training()]",
    "with autograd.record(train_mode=False):\n    res = [autograd.is_recording(), autograd.is_training()]",
    "with autograd.record():\n    with autograd.pause():\n"
    "        res = [autograd.is_recording(), autograd.is_training()]",
    "with autograd.train_mode():\n    res = [autograd.is_recording(), autograd.is_training()]",
    "with autograd.record():\n    with autograd.predict_mode():\n        res = [autograd.is_recording(), "
    "autograd.is_training()]",
    "prev = autograd.set_training(True)\nres = [prev, autograd.is_training()]\nautograd.set_training(False)",
    "prev = autograd.set_recording(True)\nres = [prev, autograd.is_recording()]\nautograd.set_recording(False)",
]


@pytest.fixture(scope="module")
def ref(oracle):
    return mx_results(oracle, [(c, c) for c in CASES], ARR)


@pytest.mark.parametrize("code", CASES)
def test_matches_mxnet(ref, code):
    try:
        check(ref[code], code, ARR, tol=(1e-4, 1e-5))
    finally:
        autograd.set_recording(False)
        autograd.set_training(False)


def test_hybridized_block_under_record_gives_parameter_gradients(oracle):
    from ast_hybrid.gluon import nn

    x = np.random.default_rng(0).standard_normal((4, 6)).astype("float32")
    grads = []
    for hybridize in (False, True):
        net = nn.HybridSequential(prefix="g_")
        with net.name_scope():
            net.add(nn.Dense(5, activation="tanh", in_units=6), nn.Dense(2, in_units=5))
        net.initialize()
        for p in net.collect_params().values():
            p.set_data(np.full(p.shape, 0.1, "float32") + np.arange(int(np.prod(p.shape))).reshape(p.shape) * 0.01)
        if hybridize:
            net.hybridize()
        with autograd.record():
            loss = (net(nd.array(x)) ** 2).sum()
        loss.backward()
        grads.append({k: p.grad().asnumpy() for k, p in net.collect_params().items()})
    ref = oracle.run("""
from mxnet import autograd
net = gluon.nn.HybridSequential(prefix='g_')
with net.name_scope():
    net.add(gluon.nn.Dense(5, activation='tanh', in_units=6), gluon.nn.Dense(2, in_units=5))
net.initialize()
for p in net.collect_params().values():
    p.set_data(nd.array(np.full(p.shape, 0.1) + np.arange(int(np.prod(p.shape))).reshape(p.shape) * 0.01))
net.hybridize()
with autograd.record():
    loss = (net(nd.array(inp['x'])) ** 2).sum()
loss.backward()
for k, p in net.collect_params().items():
    out[k] = p.grad().asnumpy()
""", x=x)
    for g in grads:
        for k, v in g.items():
            np.testing.assert_allclose(v, ref[k], rtol=1e-4, atol=1e-5, err_msg=k)
