"""BatchNorm's gradients against MXNet 1.9.1 in every mode a recorded call can be in.

MXNet's CPU kernel, in a recorded predict-mode call (``autograd.record(train_mode=False)``) without
``use_global_stats``, normalises with the moving statistics but runs the batch-statistics backward on them:
the data's gradient is ``g * inv * (dy - mean(dy) - xr * mean(dy * xr))`` with ``xr = (x - mean) * inv`` of
the moving statistics, not the plain ``g * inv * dy`` (found by a predict-mode gradient through GluonCV's
FeatureExpander that differed from MXNet's).  With ``use_global_stats`` the gradient is the plain one, and in
training mode the batch-statistics one.  Each combination, NCHW and 2-D, fix_gamma on and off, op by op and
inside a hybridized layer."""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import nn

pytestmark = pytest.mark.oracle

CASES = [(shape, fix_gamma, use_global, train) for shape in ((4, 3, 5, 5), (6, 3)) for fix_gamma in (False, True)
         for use_global in (False, True) for train in (False, True)]


def _inputs(shape):
    rs = np.random.RandomState(len(shape))
    c = shape[1]
    return {"x": rs.randn(*shape).astype("float32"), "w": rs.randn(*shape).astype("float32"),
            "g": (rs.rand(c) + 0.5).astype("float32"), "b": rs.randn(c).astype("float32"),
            "rm": (rs.randn(c) * 0.3).astype("float32"), "rv": (rs.rand(c) + 0.5).astype("float32")}


CODE = """
from mxnet import autograd
x, g, b = nd.array(inp['x']), nd.array(inp['g']), nd.array(inp['b'])
for a in (x, g, b):
    a.attach_grad()
with autograd.record(train_mode={train}):
    y = nd.BatchNorm(x, g, b, nd.array(inp['rm']), nd.array(inp['rv']), eps=1e-5, fix_gamma={fix_gamma},
                     use_global_stats={use_global})
    loss = (y * nd.array(inp['w'])).sum()
loss.backward()
out['y'], out['dx'], out['dg'], out['db'] = y.asnumpy(), x.grad.asnumpy(), g.grad.asnumpy(), b.grad.asnumpy()
"""


@pytest.mark.parametrize("shape,fix_gamma,use_global,train", CASES)
def test_op_gradients_match_mxnet(oracle, shape, fix_gamma, use_global, train):
    inp = _inputs(shape)
    ref = oracle.run(CODE.format(train=train, fix_gamma=fix_gamma, use_global=use_global), **inp)
    x, g, b = nd.array(inp["x"]), nd.array(inp["g"]), nd.array(inp["b"])
    for a in (x, g, b):
        a.attach_grad()
    with autograd.record(train_mode=train):
        y = nd.BatchNorm(x, g, b, nd.array(inp["rm"]), nd.array(inp["rv"]), eps=1e-5, fix_gamma=fix_gamma,
                         use_global_stats=use_global)
        loss = (y * nd.array(inp["w"])).sum()
    loss.backward()
    for name, ours in (("y", y), ("dx", x.grad), ("dg", g.grad), ("db", b.grad)):
        np.testing.assert_allclose(ours.asnumpy(), ref[name], rtol=1e-5, atol=1e-5, err_msg=name)


LAYER = """
from mxnet import autograd
from mxnet.gluon import nn
import numpy as np
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation('relu'))
net.initialize()
x = nd.array(inp['x'])
net(x)
for i, (k, p) in enumerate(sorted(net.collect_params().items())):
    v = np.sin(np.arange(np.prod(p.shape)) * (i + 1)).reshape(p.shape) / 5
    p.set_data(nd.array(np.abs(v) + 0.5 if k.endswith('var') else v))
net.hybridize()
with autograd.record(train_mode=False):
    y = net(x)
    loss = (y * nd.array(inp['w'])).sum()
loss.backward()
for k, p in net.collect_params().items():
    if p.grad_req != 'null':
        out[k] = p.grad().asnumpy()
"""


def test_hybridized_layer_in_predict_mode_matches_mxnet(oracle):
    rs = np.random.RandomState(3)
    inp = {"x": np.cos(np.arange(2 * 3 * 6 * 6)).reshape(2, 3, 6, 6).astype("float32"),
           "w": rs.randn(2, 4, 4, 4).astype("float32")}
    ref = oracle.run(LAYER.replace("nn.HybridSequential()", "nn.HybridSequential(prefix='p_')"), **inp)
    ours = _run_ours(LAYER.replace("nn.HybridSequential()", "nn.HybridSequential(prefix='p_')"), inp)
    assert sorted(ours) == sorted(ref)
    for k in ref:
        np.testing.assert_allclose(ours[k], ref[k], rtol=1e-4, atol=1e-5, err_msg=k)


def _run_ours(code, inp):
    """The oracle's code run here, with ``mxnet`` imports resolved to ast-hybrid."""
    code = code.replace("from mxnet import autograd", "").replace("from mxnet.gluon import nn", "")
    scope = {"nn": nn, "nd": nd, "np": np, "autograd": autograd, "inp": inp, "out": {}}
    exec(code, scope)
    return scope["out"]
