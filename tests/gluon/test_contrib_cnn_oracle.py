"""``gluon.contrib.cnn``: ``DeformableConvolution`` and ``ModulatedDeformableConvolution``, built with the SAME
constructor text in MXNet 1.9.1 and here (``from mxnet.gluon.contrib.cnn import ...`` on both sides), with
MXNet's random parameters loaded (offset weights large enough to move the samples by pixels, across the
image's edge), give MXNet's output, imperative and hybridized, and have its parameter names, shapes, repr and
initial values.  Gradients w.r.t. the input and every parameter: v1's against MXNet's backward; v2's
(MXNet 1.9.1 has no CPU backward for it) against directional differences of MXNet's float64 forward."""

import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.gluon.programs import _mode

pytestmark = pytest.mark.oracle

CASES = [
    "DeformableConvolution(6, 3, padding=1)",
    "DeformableConvolution(6, kernel_size=(3, 3), strides=2, padding=1, dilation=2, groups=2, "
    "num_deformable_group=2, activation='relu')",
    "DeformableConvolution(4, 1, use_bias=False, offset_use_bias=False, in_channels=4)",
    "ModulatedDeformableConvolution(6, 3, padding=1)",
    "ModulatedDeformableConvolution(6, 3, strides=2, padding=1, dilation=2, groups=2, num_deformable_group=2, "
    "activation='relu')",
    "ModulatedDeformableConvolution(4, (2, 3), padding=(0, 1), num_deformable_group=4, use_bias=False, "
    "offset_use_bias=False, in_channels=4)",
]
SHAPE = (2, 4, 7, 6)

BUILD = """
from mxnet.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution
from mxnet.gluon import nn as gnn
scope = gnn.Block(prefix='t{i}_')
with scope.name_scope():
    layer = {ctor}
"""

MX = BUILD + """
from mxnet import autograd
layer.initialize()
x = nd.array(inp['x'])
layer(x)
rs = np.random.RandomState(0)
for p in layer.collect_params().values():
    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))
layer.save_parameters({path!r})
out['y'] = layer(x).asnumpy()
meta['names'] = [(k, list(p.shape)) for k, p in layer.collect_params().items()]
meta['repr'] = repr(layer)
params = list(layer.collect_params().values())
ct = nd.array(inp['ct'])
if {v1}:
    x.attach_grad()
    with autograd.record():
        loss = (layer(x) * ct).sum()
    loss.backward()
    out['g:x'] = x.grad.asnumpy()
    for p in params:
        out['g:' + p.name] = p.grad().asnumpy()
else:      # directional differences of the float64 forward, one random direction per input
    layer.cast('float64')
    x64, ct64 = x.astype('float64'), ct.astype('float64')
    eps = 1e-6
    def loss(xx):
        return float((layer(xx) * ct64).sum().asscalar())
    d = nd.array(inp['dir:x'], dtype='float64')
    out['d:x'] = np.array((loss(x64 + eps * d) - loss(x64 - eps * d)) / (2 * eps))
    for p in params:
        base = p.data().copy()
        d = nd.array(inp['dir:' + p.name[len(layer.prefix):]], dtype='float64')
        ends = []
        for sign in (1, -1):
            p.set_data(base + sign * eps * d)
            ends.append(loss(x64))
        p.set_data(base)
        out['d:' + p.name] = np.array((ends[0] - ends[1]) / (2 * eps))
"""


def _ours(i, ctor):
    env = {}
    exec(BUILD.format(i=i, ctor=ctor).replace("from mxnet.gluon", "from ast_hybrid.gluon"), env)
    return env["layer"]


def _arrays(layer_shapes):
    rng = np.random.default_rng(4)
    arrays = {"x": rng.uniform(-1, 1, SHAPE).astype("float32")}
    arrays["dir:x"] = rng.standard_normal(SHAPE).astype("float32")
    for name, shape in layer_shapes:
        arrays[f"dir:{name}"] = rng.standard_normal(shape).astype("float32")
    return arrays


@pytest.mark.parametrize("i,ctor", list(enumerate(CASES)), ids=[f"{i}-{c.split('(')[0]}" for i, c in enumerate(CASES)])
def test_layer_matches_mxnet(oracle, tmp_path, i, ctor):
    path = str(tmp_path / "l.params")
    v1 = ctor.startswith("DeformableConvolution")
    probe = _ours(i, ctor)
    probe.initialize()
    y0 = probe(np.zeros(SHAPE, "float32"))
    arrays = _arrays([(k[len(probe.prefix):], p.shape) for k, p in probe.collect_params().items()])
    arrays["ct"] = np.random.default_rng(5).uniform(-1, 1, y0.shape).astype("float32")
    ref = oracle.run(MX.format(i=i, ctor=ctor, path=path, v1=v1), **arrays)
    assert [(k, tuple(p.shape)) for k, p in probe.collect_params().items()] == \
        [(k, tuple(s)) for k, s in ref["meta"]["names"]]
    for hybridize in (False, True):
        layer = _ours(i, ctor)
        layer.initialize()
        layer(arrays["x"])
        layer.load_parameters(path)
        layer.hybridize(hybridize)
        where = f"{ctor} (hybridized={hybridize})"
        with _mode(False):
            np.testing.assert_allclose(np.asarray(layer(arrays["x"])), ref["y"], rtol=1e-5, atol=1e-5, err_msg=where)
        x = nd.array(arrays["x"])
        x.attach_grad()
        with autograd.record():
            loss = (layer(x) * nd.array(arrays["ct"])).sum()
        loss.backward()
        grads = {"x": x.grad.asnumpy()}
        grads.update({p.name: p.grad().asnumpy() for p in layer.collect_params().values()})
        for name, g in grads.items():
            if v1:
                want = ref[f"g:{name}"]
                np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max()),
                                           err_msg=f"gradient w.r.t. {name}: {where}")
            else:
                short = "x" if name == "x" else name[len(layer.prefix):]
                d = arrays[f"dir:{short}"]
                got, want = float((g.astype("float64") * d).sum()), float(ref[f"d:{name}"])
                scale = float(np.abs(g.astype("float64") * d).sum())
                assert scale > 1e-3, f"gradient w.r.t. {name} is ~0: {where}"
                assert abs(got - want) <= 1e-5 * scale, f"d/d{name} along a direction: {got} vs MXNet {want}; {where}"
    assert repr(layer) == ref["meta"]["repr"]


def test_initialisers_and_prefixes_are_mxnets(oracle):
    """Where each initialiser goes (offsets zero by default: a new layer samples the regular grid, and its v2
    mask is 2 * sigmoid(0) = 1) and the default prefixes."""
    from ast_hybrid import mxnet as mx

    ctors = ["DeformableConvolution(3, 3, in_channels=2)",
             "ModulatedDeformableConvolution(3, 3, in_channels=2, weight_initializer=mx.init.Constant(0.3), "
             "bias_initializer='ones', offset_weight_initializer=mx.init.Constant(0.01), "
             "offset_bias_initializer=mx.init.Constant(0.2))",
             "ModulatedDeformableConvolution(3, 3)"]
    code = f"""
from mxnet.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution
with mx.name.NameManager():
    layers = [{', '.join(ctors)}]
meta['prefixes'] = [b.prefix for b in layers]
for b in layers[:2]:
    b.initialize(mx.init.Constant(0.5))
    b(nd.ones((1, 2, 5, 5)))
    for k, p in b.collect_params().items():
        out[k] = p.data().asnumpy()
"""
    ref = oracle.run(code)
    from ast_hybrid.gluon.contrib import cnn

    assert ref["meta"]["prefixes"] == ["deformable_conv0_", "modulated_deformable_conv0_",
                                       "modulated_deformable_conv1_"]
    env = {"mx": mx, "DeformableConvolution": cnn.DeformableConvolution,
           "ModulatedDeformableConvolution": cnn.ModulatedDeformableConvolution}
    ours = [eval(c, env) for c in ctors]
    stems = [p.rstrip("_0123456789") for p in ref["meta"]["prefixes"]]
    assert [b.prefix.rstrip("_0123456789") for b in ours] == stems
    for b, mx_prefix in zip(ours[:2], ref["meta"]["prefixes"]):
        b.initialize(mx.init.Constant(0.5))
        b(np.ones((1, 2, 5, 5), "float32"))
        for k, p in b.collect_params().items():
            np.testing.assert_array_equal(p.data().asnumpy(), ref[mx_prefix + k[len(b.prefix):]], err_msg=k)


@pytest.mark.parametrize("kwargs", ["layout='NHWC'", "layout='NCW'"])
def test_layouts_mxnet_cannot_run_fail(oracle, kwargs):
    """MXNet's layer accepts 'NHWC' and fails at the first call (its ops take NCHW only); 'NCW' fails at
    construction.  Here both fail at construction, with a message that says why."""
    ref = oracle.run(f"""
from mxnet.gluon.contrib.cnn import DeformableConvolution
try:
    layer = DeformableConvolution(3, 3, in_channels=2, {kwargs})
    layer.initialize()
    layer(nd.ones((1, 2, 5, 5)))
    meta['error'] = None
except Exception as exc:
    meta['error'] = type(exc).__name__
""")
    assert ref["meta"]["error"] is not None
    from ast_hybrid.gluon.contrib.cnn import DeformableConvolution

    with pytest.raises((AssertionError, ValueError), match="NCHW"):
        eval(f"DeformableConvolution(3, 3, in_channels=2, {kwargs})", {"DeformableConvolution": DeformableConvolution})
