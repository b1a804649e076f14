"""``gluon.contrib.nn``: each layer, built with the SAME constructor text in MXNet 1.9.1 and here, with MXNet's
random parameters loaded, gives MXNet's output (imperative and hybridized, predict and training mode), and
has MXNet's parameter names and repr."""

import numpy as np
import pytest

from ast_hybrid import gluon
from ast_hybrid.gluon import nn as gnn
from ast_hybrid.gluon.programs import _mode
from ast_hybrid.gluon.contrib import nn

pytestmark = pytest.mark.oracle

# Constructor text, run with ``nn`` = gluon.contrib.nn and ``gnn`` = gluon.nn on both sides; an expression, or
# statements that set ``layer``.  (SyncBatchNorm with num_devices > 1 waits for the other devices in MXNet's
# training mode: test_num_devices_changes_nothing covers it.)
CONCURRENT = """layer = nn.{cls}({axis})
with layer.name_scope():
    layer.add({children})"""
CASES = [
    ("nn.PixelShuffle1D(2)", (2, 6, 5)),
    ("nn.PixelShuffle1D(3)", (1, 9, 4)),
    ("nn.PixelShuffle2D(2)", (2, 8, 3, 4)),
    ("nn.PixelShuffle2D((2, 3))", (1, 12, 3, 5)),
    ("nn.PixelShuffle3D(2)", (1, 16, 2, 3, 2)),
    ("nn.PixelShuffle3D((1, 2, 3))", (2, 12, 2, 3, 4)),
    ("nn.SyncBatchNorm()", (4, 3, 5, 5)),
    ("nn.SyncBatchNorm(num_devices=1, momentum=0.8, epsilon=1e-3, scale=False)", (4, 3, 6)),
    ("nn.SyncBatchNorm(in_channels=3, center=False, use_global_stats=True)", (4, 3, 2, 2)),
    ("nn.SyncBatchNorm(2, 1, 0.5, 1e-2)", (5, 2)),
    ("nn.Identity()", (3, 4)),
    ("nn.SparseEmbedding(10, 4)", None),
    (CONCURRENT.format(cls="HybridConcurrent", axis="",
                       children="gnn.Dense(3), gnn.Dense(2, activation='relu'), nn.Identity()"), (4, 5)),
    (CONCURRENT.format(cls="HybridConcurrent", axis="axis=1",
                       children="gnn.Conv2D(2, 3, padding=1), nn.Identity(), nn.SyncBatchNorm(num_devices=1)"),
     (2, 3, 4, 4)),
    (CONCURRENT.format(cls="Concurrent", axis="axis=1", children="gnn.Dense(3), nn.Identity()"), (4, 5)),
]
CTORS = [ctor for ctor, _ in CASES]
IDS = [ctor.split("\n")[0] + ("..." if "\n" in ctor else "") for ctor in CTORS]


def _input(shape):
    rng = np.random.default_rng(3)
    if shape is None:
        return rng.integers(0, 10, (3, 4)).astype("float32")
    return rng.standard_normal(shape).astype("float32")


def _build(ctor):
    """``ctor`` run in a fresh naming scope (MXNet's process and ours have made other blocks before): the layer
    is ``t<case>_<name>0_`` on both sides.  The scope differs from case to case because MXNet's SyncBatchNorm
    keeps its device-sync buffers per ``key`` (the prefix) for the life of the process: a second layer with
    the same prefix and another channel count fails there (shape mismatch)."""
    code = ctor if "layer =" in ctor else f"layer = {ctor}"
    return f"scope = gnn.Block(prefix='t{CTORS.index(ctor)}_')\nwith scope.name_scope():\n" + "".join(
        f"    {line}\n" for line in code.split("\n"))


def _ours(ctor):
    env = {"nn": nn, "gnn": gnn}
    exec(_build(ctor), env)
    return env["layer"]


@pytest.mark.parametrize("ctor,shape", CASES, ids=IDS)
def test_layer_matches_mxnet(oracle, tmp_path, ctor, shape):
    x = _input(shape)
    path = str(tmp_path / "l.params")
    code = f"""
from mxnet.gluon import nn as gnn
from mxnet.gluon.contrib import nn
from mxnet import autograd
{_build(ctor)}
layer.initialize()
if isinstance(layer, nn.SparseEmbedding):
    gluon.Trainer(layer.collect_params(), 'sgd')   # MXNet reads a row-sparse weight only through a Trainer
layer(nd.array(inp['x']))
rs = np.random.RandomState(0)
for p in layer.collect_params().values():
    p.set_data(nd.array(rs.uniform(0.5, 1.5, p.shape)))
layer.save_parameters({path!r})
out['y'] = layer(nd.array(inp['x'])).asnumpy()
with autograd.record():
    t = layer(nd.array(inp['x']))
out['train'] = t.asnumpy()
meta['names'] = list(layer.collect_params().keys())
meta['repr'] = repr(layer)
"""
    ref = oracle.run(code, x=x)
    for hybridize in (False, True):
        layer = _ours(ctor)
        assert list(layer.collect_params().keys()) == ref["meta"]["names"]
        layer.initialize()
        if isinstance(layer, nn.SparseEmbedding):
            gluon.Trainer(layer.collect_params(), "sgd")    # as MXNet: the weight is read through a Trainer
        layer(x)
        layer.load_parameters(path)
        layer.hybridize(hybridize)
        for training, expected in ((False, ref["y"]), (True, ref["train"])):
            with _mode(training):
                got = np.asarray(layer(x))
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{ctor} (hybridized={hybridize}, training={training})")
    if "layer =" not in ctor:       # the containers' reprs list their children (Dense's differs: not ours)
        assert repr(layer) == ref["meta"]["repr"]


def test_top_level_prefixes_follow_mxnet(oracle):
    """Outside any scope a layer is named ``<class name, lower case><n>_``, n counting per name."""
    ctors = ["nn.SyncBatchNorm(num_devices=1)", "nn.SparseEmbedding(10, 4)", "nn.PixelShuffle1D(2)",
             "nn.PixelShuffle2D(2)", "nn.PixelShuffle3D(2)", "nn.HybridConcurrent()", "nn.Concurrent()",
             "nn.Identity()", "nn.SyncBatchNorm(num_devices=1)"]
    ref = oracle.run(f"""
from mxnet.gluon.contrib import nn
with mx.name.NameManager():
    layers = [{', '.join(ctors)}]
meta['prefixes'] = [b.prefix for b in layers]
meta['params'] = [list(b.collect_params().keys()) for b in layers]
""")
    expected = ["syncbatchnorm0_", "sparseembedding0_", "pixelshuffle1d0_", "pixelshuffle2d0_", "pixelshuffle3d0_",
                "hybridconcurrent0_", "concurrent0_", "identity0_", "syncbatchnorm1_"]
    assert ref["meta"]["prefixes"] == expected
    names = ("gamma", "beta", "running_mean", "running_var")
    assert ref["meta"]["params"][0] == [f"syncbatchnorm0_{n}" for n in names]
    ours = [eval(c) for c in ctors]
    for b, mx_prefix, mx_params in zip(ours, expected, ref["meta"]["params"]):
        stem = mx_prefix.rstrip("_0123456789")
        assert b.prefix.startswith(stem) and b.prefix[len(stem):-1].isdigit() and b.prefix.endswith("_")
        assert [k[len(b.prefix):] for k in b.collect_params()] == [k[len(mx_prefix):] for k in mx_params]
    assert int(ours[-1].prefix[len("syncbatchnorm"):-1]) == int(ours[0].prefix[len("syncbatchnorm"):-1]) + 1


@pytest.mark.parametrize("hybridize", [False, True])
def test_syncbatchnorm_running_statistics_follow_mxnet_after_a_training_step(oracle, hybridize):
    """As BatchNorm's: MXNet writes the running mean/var in the backward, we in the training-mode forward;
    after the steps both hold the same values, and the outputs and input gradients agree."""
    from ast_hybrid import autograd, nd

    x = np.random.default_rng(7).standard_normal((4, 3, 5)).astype("float32") * 2 + 1
    ctor = "SyncBatchNorm(momentum=0.7, in_channels=3, num_devices=1, gamma_initializer='ones')"
    ref = oracle.run(f"""
from mxnet import autograd
from mxnet.gluon.contrib import nn
layer = nn.{ctor}
layer.initialize()
layer.hybridize()
for _ in range(2):
    x = nd.array(inp['x'])
    x.attach_grad()
    with autograd.record():
        y = layer(x)
    y.backward()
out['mean'], out['var'] = layer.running_mean.data().asnumpy(), layer.running_var.data().asnumpy()
out['y'], out['grad'] = y.asnumpy(), x.grad.asnumpy()
""", x=x)
    layer = eval(f"nn.{ctor}")
    layer.initialize()
    if hybridize:
        layer.hybridize()
    for _ in range(2):
        xs = nd.array(x)
        xs.attach_grad()
        with autograd.record():
            y = layer(xs)
        y.backward()
    np.testing.assert_allclose(layer.running_mean.data().asnumpy(), ref["mean"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.running_var.data().asnumpy(), ref["var"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), ref["y"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xs.grad.asnumpy(), ref["grad"], rtol=1e-4, atol=1e-5)


def test_num_devices_changes_nothing(oracle):
    """MXNet's predict mode with num_devices=4 gives BatchNorm's output; here num_devices changes nothing in
    either mode (one device), and only shows in the repr, as ``ndev``."""
    x = _input((4, 3, 5))
    ref = oracle.run("""
from mxnet.gluon.contrib import nn
layer = nn.SyncBatchNorm(num_devices=4, prefix='s_')
layer.initialize()
out['y'] = layer(nd.array(inp['x'])).asnumpy()
meta['repr'] = repr(layer)
""", x=x)
    one, four = nn.SyncBatchNorm(num_devices=1), nn.SyncBatchNorm(num_devices=4, prefix="s_")
    for layer in (one, four):
        layer.initialize()
    np.testing.assert_allclose(np.asarray(four(x)), ref["y"], rtol=1e-4, atol=1e-5)
    assert repr(four) == ref["meta"]["repr"]
    with _mode(True):
        np.testing.assert_array_equal(np.asarray(four(x)), np.asarray(one(x)))
    np.testing.assert_array_equal(four.running_mean.data().asnumpy(), one.running_mean.data().asnumpy())


@pytest.mark.parametrize("ctor", ["nn.PixelShuffle2D((2, 3, 4))", "nn.PixelShuffle3D((2, 3))",
                                  "nn.PixelShuffle1D((2,))", "nn.PixelShuffle2D('a')"])
def test_bad_factors_fail_as_in_mxnet(oracle, ctor):
    ref = oracle.run(f"""
from mxnet.gluon.contrib import nn
try:
    {ctor}
    meta['error'] = None
except Exception as exc:
    meta['error'] = [type(exc).__name__, str(exc)]
""")
    assert ref["meta"]["error"] is not None, f"MXNet accepts {ctor}"
    kind, message = ref["meta"]["error"]
    with pytest.raises(Exception) as info:
        eval(ctor)
    assert (type(info.value).__name__, str(info.value)) == (kind, message)


def test_the_module_mirrors_mxnet(oracle):
    ref = oracle.run("from mxnet.gluon.contrib import nn\nmeta['all'] = nn.__all__")
    assert nn.__all__ == ref["meta"]["all"]
    assert all(hasattr(nn, name) for name in nn.__all__)
    assert nn.HybridConcurrent().axis == -1 and nn.Concurrent().axis == -1
