"""Each layer, built with the SAME constructor text in MXNet 1.9.1 and here, with MXNet's random
parameters loaded, gives MXNet's output (imperative and hybridized)."""

import numpy as np
import pytest

from ast_hybrid.gluon import nn  # noqa: F401  (used by eval)
from ast_hybrid.gluon.programs import _mode

pytestmark = pytest.mark.oracle

CASES = [
    ("nn.Dense(7, activation='tanh', flatten=True)", (3, 4, 5)),
    ("nn.Dense(7, flatten=False, use_bias=False)", (3, 4, 5)),
    ("nn.Conv2D(4, 3, strides=2, padding=1, groups=2)", (2, 6, 9, 9)),
    ("nn.Conv1D(3, 2, dilation=2, activation='relu')", (2, 4, 10)),
    ("nn.Conv3D(2, (1, 2, 2))", (1, 3, 4, 5, 5)),
    ("nn.Conv2DTranspose(4, 3, strides=2, padding=1, output_padding=1)", (2, 3, 5, 5)),
    ("nn.Conv2DTranspose(4, 3, groups=2, dilation=2, in_channels=4)", (1, 4, 5, 5)),
    ("nn.Conv1DTranspose(3, 4, strides=3)", (2, 2, 6)),
    ("nn.ReflectionPad2D(2)", (1, 2, 5, 5)),
    ("nn.MaxPool2D(3, 2, 1)", (2, 3, 9, 9)),
    ("nn.MaxPool2D(2, ceil_mode=True)", (1, 2, 7, 7)),
    ("nn.AvgPool2D(3, 2, 1)", (2, 3, 8, 8)),
    ("nn.AvgPool2D(3, 2, 1, count_include_pad=False)", (2, 3, 8, 8)),
    ("nn.AvgPool1D(2)", (2, 3, 8)),
    ("nn.GlobalAvgPool2D()", (2, 3, 5, 5)),
    ("nn.GlobalMaxPool1D()", (2, 3, 5)),
    ("nn.BatchNorm()", (4, 3, 5, 5)),
    ("nn.BatchNorm(axis=-1, scale=False)", (4, 5, 3)),
    ("nn.BatchNormReLU()", (4, 3, 5, 5)),
    ("nn.AvgPool2D(3, 2, 1, True)", (1, 2, 8, 8)),             # ceil_mode is AvgPool2D's 4th positional
    ("nn.MaxPool3D(2, 2, 0, True)", (1, 2, 5, 5, 5)),
    ("nn.LayerNorm()", (3, 6)),
    ("nn.InstanceNorm()", (2, 3, 6)),
    ("nn.GroupNorm(num_groups=2)", (2, 4, 3, 3)),
    ("nn.Embedding(10, 4)", None),
    ("nn.LeakyReLU(0.1)", (3, 5)),
    ("nn.PReLU()", (3, 5)),
    ("nn.ELU(0.7)", (3, 5)),
    ("nn.SELU()", (3, 5)),
    ("nn.GELU()", (3, 5)),
    ("nn.Swish(1.5)", (3, 5)),
    ("nn.Flatten()", (2, 3, 4)),
    ("nn.Activation('softrelu')", (3, 5)),
]


def _input(shape):
    rng = np.random.default_rng(3)
    if shape is None:
        return rng.integers(0, 10, (3, 4)).astype("float32")
    return rng.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("ctor,shape", CASES, ids=[c for c, _ in CASES])
def test_layer_matches_mxnet(oracle, tmp_path, ctor, shape):
    x = _input(shape)
    path = str(tmp_path / "l.params")
    code = f"""
from mxnet.gluon import nn
from mxnet import autograd
layer = {ctor}
layer.initialize()
layer(nd.array(inp['x']))
rs = np.random.RandomState(0)
for p in layer.collect_params().values():
    p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))
layer.save_parameters({path!r})
out['y'] = layer(nd.array(inp['x'])).asnumpy()
with autograd.record():
    t = layer(nd.array(inp['x']))
out['train'] = t.asnumpy()
"""
    ref = oracle.run(code, x=x)
    for hybridize in (False, True):
        layer = eval(ctor)
        layer.initialize()
        layer(x)
        layer.load_parameters(path)
        if hybridize:
            layer.hybridize()
        np.testing.assert_allclose(np.asarray(layer(x)), ref["y"], rtol=1e-4, atol=1e-5, err_msg=ctor)
        with _mode(True):
            np.testing.assert_allclose(np.asarray(layer(x)), ref["train"], rtol=1e-4, atol=1e-5,
                                       err_msg=ctor + " (training mode)")


def test_dropout_keys_threaded_through_the_program():
    layer = nn.Dropout(0.5)
    layer.hybridize()
    x = np.ones((64, 64), "float32")
    np.testing.assert_array_equal(np.asarray(layer(x)), x)          # predict mode: identity
    with _mode(True):
        a, b = np.asarray(layer(x)), np.asarray(layer(x))
    assert not np.array_equal(a, b)                                # a fresh key per call
    assert set(np.unique(a)) <= {0.0, 2.0} and 0.3 < (a == 0).mean() < 0.7


@pytest.mark.parametrize("hybridize", [False, True])
def test_batchnorm_running_statistics_follow_mxnet_after_a_training_step(oracle, hybridize):
    """MXNet writes the running mean/var in the backward of a recorded training step; here the training-mode
    forward writes them (out of the compiled program): after the step both hold the same values."""
    from ast_hybrid import autograd, nd

    x = np.random.default_rng(7).standard_normal((4, 3, 5)).astype("float32") * 2 + 1
    ref = oracle.run("""
from mxnet import autograd
layer = gluon.nn.BatchNorm(momentum=0.7, in_channels=3)
layer.initialize()
layer.hybridize()
for _ in range(2):
    with autograd.record():
        y = layer(nd.array(inp['x']))
    y.backward()
out['mean'], out['var'] = layer.running_mean.data().asnumpy(), layer.running_var.data().asnumpy()
""", x=x)
    layer = nn.BatchNorm(momentum=0.7, in_channels=3)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    for _ in range(2):
        with autograd.record():
            y = layer(nd.array(x))
        y.backward()
    np.testing.assert_allclose(layer.running_mean.data().asnumpy(), ref["mean"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.running_var.data().asnumpy(), ref["var"], rtol=1e-5, atol=1e-6)


CHANNEL_LAST = [("nn.Conv2D(6, (3, 2), layout='NHWC', in_channels=4, groups=2)", (2, 7, 6, 4), (0, 3, 1, 2)),
                ("nn.Conv3D(4, (1, 2, 2), layout='NDHWC', padding=1)", (1, 3, 4, 5, 2), (0, 4, 1, 2, 3))]


@pytest.mark.parametrize("ctor, shape, to_cf", CHANNEL_LAST)
def test_a_channel_last_convolution_layer(oracle, ctor, shape, to_cf):
    """MXNet builds channel-last Conv layers (its CPU convolution refuses to run them): the weight's shape
    (O, *kernel, C/g) is MXNet's, and the layer computes the channel-first layer's output, transposed."""
    mx_shape = oracle.run(f"from mxnet.gluon import nn\nlayer = {ctor}\nmeta['w'] = list(layer.weight.shape)")
    from ast_hybrid import nd

    layer = eval(ctor)
    if 0 in layer.weight.shape:      # deferred: MXNet's shape has 0 for the channels too
        assert list(layer.weight.shape) == mx_shape["meta"]["w"]
        layer.initialize()
        layer(nd.zeros(shape))
    else:
        assert list(layer.weight.shape) == mx_shape["meta"]["w"]
        layer.initialize()
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    kw = dict(layer._kwargs, layout="NC" + layer._kwargs["layout"][1:-1])
    w_cf = layer.weight.data().transpose(to_cf)
    want = nd.Convolution(nd.array(x.transpose(to_cf)), w_cf, layer.bias.data(), **kw).asnumpy()
    from_cl = tuple(np.argsort(to_cf))
    for hybrid in (False, True):
        layer.hybridize(hybrid)
        got = layer(nd.array(x)).asnumpy()
        np.testing.assert_allclose(got, want.transpose(from_cl), rtol=1e-5, atol=1e-5)


def test_conv1d_takes_ncw_only_as_mxnet(oracle):
    said = oracle.run("""
from mxnet.gluon import nn
try:
    nn.Conv1D(5, 3, layout='NWC')
except AssertionError as exc:
    meta['error'] = str(exc)
""")["meta"]["error"]
    with pytest.raises(AssertionError) as got:
        nn.Conv1D(5, 3, layout="NWC")
    assert str(got.value) == said
