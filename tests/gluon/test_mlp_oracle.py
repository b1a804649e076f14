"""The chapter's MLP against real MXNet 1.9.1: its parameter files, its outputs, its names."""

import numpy as np
import pytest

from ast_hybrid.gluon import nn
from ast_hybrid.io import params_file as params_io

pytestmark = pytest.mark.oracle

MX_MLP = """
net = gluon.nn.HybridSequential(prefix='mlp_')
with net.name_scope():
    net.add(gluon.nn.Dense(256, activation='relu'), gluon.nn.Dense(128, activation='relu'), gluon.nn.Dense(2))
"""


def _ours():
    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    return net


@pytest.fixture(scope="module")
def mx_files(oracle, tmp_path_factory):
    d = tmp_path_factory.mktemp("mlp")
    x = np.random.default_rng(1).standard_normal((4, 512)).astype("float32")
    out = oracle.run(MX_MLP + f"""
net.initialize(mx.init.Xavier())
y = net(nd.array(inp['x']))
net.save_parameters({str(d / 'mx.params')!r})
net.hybridize(static_alloc=True, static_shape=True); net(nd.array(inp['x']))
net.export({str(d / 'mx_export')!r})
out['y'] = y.asnumpy()
meta['names'] = sorted(net.collect_params().keys())
""", x=x)
    return d, x, out


@pytest.mark.parametrize("hybridize", [False, True])
def test_mxnet_params_give_mxnet_outputs(mx_files, hybridize):
    d, x, out = mx_files
    net = _ours()
    net.load_parameters(str(d / "mx.params"))
    if hybridize:
        net.hybridize()
    y = np.asarray(net(x))
    assert np.abs(y - out["y"]).max() <= 1e-5
    assert sorted(net.collect_params().keys()) == out["meta"]["names"]


def test_mxnet_export_params_load_by_full_name(mx_files):
    d, x, out = mx_files
    net = _ours()
    net.load_parameters(str(d / "mx_export-0000.params"))   # arg:mlp_dense0_weight ...
    assert np.abs(np.asarray(net(x)) - out["y"]).max() <= 1e-5


def test_our_save_loads_in_mxnet(oracle, tmp_path):
    net = _ours()
    net.initialize()
    x = np.random.default_rng(2).standard_normal((3, 512)).astype("float32")
    ours = np.asarray(net(x))
    path = str(tmp_path / "ours.params")
    net.save_parameters(path)
    theirs = oracle.run(MX_MLP + f"net.load_parameters({path!r})\nout['y'] = net(nd.array(inp['x'])).asnumpy()", x=x)
    assert np.abs(theirs["y"] - ours).max() <= 1e-5


def test_our_export_param_names_match_mxnet_export(mx_files, tmp_path):
    d, x, out = mx_files
    net = _ours()
    net.load_parameters(str(d / "mx.params"))
    net.hybridize()
    net(x)
    net.export(str(tmp_path / "ours"))
    assert sorted(params_io.load(tmp_path / "ours-0000.params")) == sorted(params_io.load(d / "mx_export-0000.params"))
