"""Recurrent cells and fused layers against MXNet 1.9.1: same constructor text, MXNet's parameters."""

import numpy as np
import pytest

from ast_hybrid.gluon import rnn  # noqa: F401  (used by eval)

pytestmark = pytest.mark.oracle

CELLS = ["rnn.RNNCell(6)", "rnn.LSTMCell(6)", "rnn.GRUCell(6)"]
LAYERS = ["rnn.LSTM(5, num_layers=2, bidirectional=True)", "rnn.GRU(5, layout='NTC')", "rnn.RNN(5, num_layers=2)",
          "rnn.RNN(5, activation='tanh', bidirectional=True)"]

X = np.random.default_rng(4).standard_normal((3, 4, 7)).astype("float32")


def _ref(oracle, ctor, body, path):
    return oracle.run(f"""
from mxnet.gluon import rnn
layer = {ctor}
layer.initialize(mx.init.Xavier())
{body}
rs = np.random.RandomState(0)
for p in layer.collect_params().values():
    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))
layer.save_parameters({path!r})
{body}
meta['names'] = list(layer._collect_params_with_prefix().keys())
""", x=X)


@pytest.mark.parametrize("ctor", CELLS)
def test_cell_unroll_matches_mxnet(oracle, tmp_path, ctor):
    path = str(tmp_path / "c.params")
    body = ("outs, states = layer.unroll(4, nd.array(inp['x']), layout='NTC', merge_outputs=True)\n"
            "out['y'] = outs.asnumpy(); out['h'] = states[-1].asnumpy()")
    ref = _ref(oracle, ctor, body, path)
    cell = eval(ctor)
    cell.initialize()
    cell.unroll(4, X, layout="NTC")
    cell.load_parameters(path)
    assert list(cell._collect_params_with_prefix()) == ref["meta"]["names"]
    for hybridize in (False, True):
        if hybridize:
            cell.hybridize()
        outs, states = cell.unroll(4, X, layout="NTC", merge_outputs=True)
        np.testing.assert_allclose(np.asarray(outs), ref["y"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(states[-1]), ref["h"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ctor", LAYERS)
def test_fused_layer_matches_mxnet(oracle, tmp_path, ctor):
    path = str(tmp_path / "l.params")
    body = ("x = nd.array(inp['x'])\nst = layer.begin_state(x.shape[layer._layout.find('N')])\n"
            "y, st = layer(x, st)\nout['y'] = y.asnumpy(); out['s'] = st[0].asnumpy()")
    ref = _ref(oracle, ctor, body, path)
    layer = eval(ctor)
    layer.initialize()
    layer(X)
    layer.load_parameters(path)
    assert list(layer._collect_params_with_prefix()) == ref["meta"]["names"]
    for hybridize in (False, True):
        if hybridize:
            layer.hybridize()
        st = layer.begin_state(X.shape[layer._layout.find("N")])
        y, st = layer(X, st)
        np.testing.assert_allclose(np.asarray(y), ref["y"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(st[0]), ref["s"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(layer(X)), ref["y"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ctor,call", [("rnn.LSTMCell(6, input_size=7)", "layer.unroll(4, x, layout='NTC', "
                                        "merge_outputs=True)[0]"),
                                       ("rnn.GRU(5, num_layers=2, input_size=7)", "layer(x)")])
def test_imperative_parameter_gradients_match_mxnet(oracle, ctor, call):
    """``autograd.record()`` + ``backward()`` through the layer run op by op gives MXNet's parameter grads."""
    from ast_hybrid import autograd, nd

    code = f"""
layer = {ctor}
layer.initialize()
rs = np.random.RandomState(1)
for p in layer.collect_params().values():
    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))
x = nd.array(inp['x'])
with autograd.record():
    loss = ({call} ** 2).sum()
loss.backward()
grads = {{k: p.grad().asnumpy() for k, p in layer._collect_params_with_prefix().items()}}
"""
    ref = oracle.run("from mxnet.gluon import rnn\nfrom mxnet import autograd\n" + code +
                     "out.update(grads)", x=X)
    env = {"rnn": rnn, "nd": nd, "np": np, "autograd": autograd, "inp": {"x": X}}
    exec(code, env)
    assert sorted(env["grads"]) == sorted(k for k in ref if k != "meta")
    for k, g in env["grads"].items():
        np.testing.assert_allclose(g, ref[k], rtol=1e-4, atol=1e-5, err_msg=k)
