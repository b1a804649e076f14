"""ast-hybrid's own model zoo (``ast_hybrid.gluon.model_zoo.vision``) against MXNet 1.9.1's.

Per family, one or two sizes: MXNet builds ``vision.get_model(name, classes=10)``, initialises it (Xavier),
gives every BatchNorm random statistics and affine parameters, saves its parameters and its output; our
``get_model(name, classes=10)`` must have the same parameter names (after the network's prefix) and shapes,
load MXNet's file, and give MXNet's output op by op and hybridized.  Inputs are the smallest the network
takes (a fixed-window last pooling needs 224 x 224, Inception V3 299 x 299).  Every name of MXNet's
``get_model`` table builds here with MXNet's parameter names and shapes; ``pretrained=True`` without MXNet's
downloaded file is a clear offline error."""

import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.gluon.model_zoo import vision

pytestmark = pytest.mark.oracle

# name -> input shape
MODELS = {"resnet18_v2": (2, 3, 32, 32), "resnet50_v1": (1, 3, 32, 32), "resnet50_v2": (1, 3, 32, 32),
          "mobilenet0.25": (2, 3, 32, 32), "mobilenetv2_0.25": (2, 3, 32, 32),
          "alexnet": (1, 3, 63, 63), "vgg11_bn": (1, 3, 32, 32), "squeezenet1.1": (1, 3, 224, 224),
          "squeezenet1.0": (1, 3, 224, 224), "densenet121": (1, 3, 224, 224),
          "inceptionv3": (1, 3, 299, 299)}

MX = """
from mxnet.gluon.model_zoo import vision
mx.random.seed(0)
net = vision.get_model({name!r}, classes=10)
net.initialize(mx.init.Xavier())
x = nd.array(inp['x'])
net(x)
rs = np.random.RandomState(0)
ranges = {{'running_mean': (-0.2, 0.2), 'running_var': (0.5, 1.5), 'gamma': (0.5, 1.5), 'beta': (-0.2, 0.2)}}
for pname, p in net.collect_params().items():
    for suffix, (lo, hi) in ranges.items():
        if pname.endswith(suffix):
            p.set_data(nd.array(rs.uniform(lo, hi, p.shape)))
net.save_parameters({path!r})
out['y'] = net(x).asnumpy()
meta['params'] = [(k[len(net.prefix):], list(p.shape)) for k, p in net.collect_params().items()]
"""


def _params(net):
    return [[k[len(net.prefix):], list(p.shape)] for k, p in net.collect_params().items()]


@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_mxnet(oracle, tmp_path, name):
    x = np.random.RandomState(1).uniform(-1, 1, MODELS[name]).astype("float32")
    path = str(tmp_path / f"{name}.params")
    want = oracle.run(MX.format(name=name, path=path), x=x)
    net = vision.get_model(name, classes=10)
    net.load_parameters(path)
    assert _params(net) == want["meta"]["params"]
    scale = float(np.abs(want["y"]).max())
    for mode in ("op by op", "hybridized"):
        if mode == "hybridized":
            net.hybridize()
        err = float(np.abs(net(nd.array(x)).asnumpy() - want["y"]).max()) / scale
        print(f"{name} {mode}: max |ours - MXNet| / max |MXNet| = {err:.2e}")
        assert err <= 1e-4, f"{name} {mode}"


MX_TABLE = """
from mxnet.gluon.model_zoo import vision
try:
    vision.get_model('no-such-Model')
except ValueError as e:
    meta['error'] = str(e)
names = meta['error'].split('\\n\\t')[1:]    # the message lists get_model's whole table
meta['params'] = {n: [(k[len(net.prefix):], list(p.shape)) for k, p in net.collect_params().items()]
                  for n, net in ((n, vision.get_model(n, classes=10)) for n in names)}
meta['public'] = sorted(n for n in dir(vision) if not n.startswith('_'))
"""


def test_every_name_of_mxnets_table_builds_the_same_parameters(oracle):
    """Each of MXNet's 34 get_model names builds here, before any forward, with MXNet's parameter names and
    (partly deferred, 0 where unknown) shapes; the unknown-name error and the module's public names are MXNet's."""
    want = oracle.run(MX_TABLE)["meta"]
    assert len(want["params"]) == 34
    with pytest.raises(ValueError) as err:
        vision.get_model("no-such-Model")
    assert str(err.value) == want["error"]
    for name, params in want["params"].items():
        assert _params(vision.get_model(name, classes=10)) == params, name
    assert sorted(n for n in dir(vision) if not n.startswith("_")) == want["public"]


@pytest.mark.parametrize("name", ["squeezenet1.1", "mobilenetv2_0.5", "vgg11_bn", "resnet18_v2"])
def test_pretrained_without_mxnets_file_is_a_clear_offline_error(tmp_path, name):
    with pytest.raises(FileNotFoundError, match=f"no pretrained weights for '{name}' in .*does not download"):
        vision.get_model(name, pretrained=True, root=str(tmp_path))
