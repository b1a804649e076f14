"""MXNet 1.9.1's own model_zoo source, run on ast-hybrid's front, against real MXNet 1.9.1.

The model files are copied unchanged from the MXNet wheel and imported as
``mxnet.gluon.model_zoo`` over the compatibility package ``ast_hybrid.mxnet``
(``conftest.mxnet_source``): their ``from ...block import HybridBlock`` is ours.  Each
network is built by the same ``vision.get_model(name)`` call in both; MXNet
initialises it, sets random BatchNorm statistics and saves its parameters;
we load that file and must give MXNet's output, op by op and hybridized.
"""

from __future__ import annotations

import numpy as np
import pytest
from snippets import RANDOMISE_BATCHNORM

pytestmark = [pytest.mark.oracle, pytest.mark.corpus]

# name -> input shape (the networks whose last pooling has a fixed window need 224 x 224)
MODELS = {"resnet18_v1": (2, 3, 64, 64), "resnet18_v2": (2, 3, 64, 64), "resnet50_v1": (1, 3, 64, 64),
          "mobilenet0.25": (2, 3, 64, 64), "mobilenetv2_0.25": (2, 3, 64, 64),
          "squeezenet1.1": (1, 3, 224, 224), "densenet121": (1, 3, 224, 224), "alexnet": (1, 3, 224, 224),
          "inceptionv3": (1, 3, 299, 299)}

MX_CODE = """
from mxnet.gluon.model_zoo import vision
from mxnet import autograd
net = vision.get_model({name!r}, classes=10)
net.initialize(mx.init.Xavier())
x = nd.array(inp['x'])
net(x)
""" + RANDOMISE_BATCHNORM + """net.save_parameters({path!r})
out['y'] = net(x).asnumpy()
"""


@pytest.fixture(scope="module")
def vision(mxnet_source):
    from mxnet.gluon.model_zoo import vision as v
    return v


@pytest.mark.parametrize("name", list(MODELS))
def test_mxnet_model_zoo_source_matches_mxnet(oracle, vision, tmp_path, name):
    x = np.random.RandomState(1).uniform(-1, 1, MODELS[name]).astype("float32")
    path = str(tmp_path / f"{name}.params")
    want = oracle.run(MX_CODE.format(name=name, path=path), x=x)["y"]

    from ast_hybrid import nd
    net = vision.get_model(name, classes=10)
    net.load_parameters(path)
    got = net(nd.array(x)).asnumpy()
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale, err_msg=f"{name} op by op")
    net.hybridize()
    got = net(nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale, err_msg=f"{name} hybridized")
