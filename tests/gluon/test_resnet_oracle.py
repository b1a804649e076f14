"""ResNet-18 v1 with parameters saved by MXNet 1.9.1 gives MXNet's outputs, hybridized and not,
in predict mode and in training mode (batch statistics, running statistics' momentum update)."""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon.programs import _mode
from ast_hybrid.gluon.model_zoo import vision

pytestmark = pytest.mark.oracle

MX = """
from mxnet.gluon.model_zoo import vision
from mxnet import autograd
mx.random.seed(0)
net = vision.resnet18_v1(classes=10)
net.initialize(mx.init.Xavier())
net(nd.array(inp['x']))
rs = np.random.RandomState(0)
for name, p in net.collect_params().items():
    if name.endswith('running_mean'): p.set_data(nd.array(rs.uniform(-0.2, 0.2, p.shape)))
    if name.endswith('running_var'): p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))
    if name.endswith('gamma'): p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))
    if name.endswith('beta'): p.set_data(nd.array(rs.uniform(-0.2, 0.2, p.shape)))
net.save_parameters(inp_path)
x = nd.array(inp['x'])
out['predict'] = net(x).asnumpy()
with autograd.record():
    t = net(x)
t.backward()   # MXNet 1.9.1 (CPU) applies the running-statistics update in BatchNorm's backward
out['train'] = t.asnumpy()
out['mean0'] = net.features[1].running_mean.data().asnumpy()
out['var0'] = net.features[1].running_var.data().asnumpy()
meta['names'] = list(net.collect_params().keys())
meta['prefix'] = net.prefix
"""


@pytest.fixture(scope="module")
def mx_resnet(oracle, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("resnet") / "r18.params")
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    out = oracle.run(f"inp_path = {path!r}\n" + MX, x=x)
    return path, x, out


def _rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("hybridize", [False, True])
def test_resnet18_matches_mxnet(mx_resnet, hybridize):
    path, x, out = mx_resnet
    net = vision.resnet18_v1(classes=10)
    assert [n.replace(net.prefix, "") for n in net.collect_params()] == \
        [n.replace(out["meta"]["prefix"], "", 1) for n in out["meta"]["names"]]   # resnetv10_, or later
    net.load_parameters(path)
    if hybridize:
        net.hybridize()
    assert _rel(np.asarray(net(x)), out["predict"]) <= 1e-4
    with _mode(True):      # training mode without recording: batch statistics, no running-statistics update
        assert _rel(np.asarray(net(x)), out["train"]) <= 1e-4
    with autograd.record():
        t = net(nd.array(x))
    t.backward()           # the update, in BatchNorm's backward as in MXNet
    assert _rel(t.asnumpy(), out["train"]) <= 1e-4
    bn = net.features[1]
    np.testing.assert_allclose(np.asarray(bn.running_mean.data()), out["mean0"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(bn.running_var.data()), out["var0"], rtol=1e-4, atol=1e-6)
