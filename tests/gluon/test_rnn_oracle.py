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
                                       ("rnn.GRU(5, num_layers=2, input_size=7)", "layer(x)"),
                                       ("contrib.rnn.LSTMPCell(6, 3, input_size=7)", "layer.unroll(4, x, "
                                        "layout='NTC', merge_outputs=True, valid_length=nd.array([4, 2, 3]))[0]"),
                                       ("rnn.ResidualCell(rnn.GRUCell(7, input_size=7))", "layer.unroll(4, x, "
                                        "layout='NTC', merge_outputs=True)[0]")])
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
    ref = oracle.run("from mxnet.gluon import rnn, contrib\nfrom mxnet import autograd\n" + code +
                     "out.update(grads)", x=X)
    from ast_hybrid.gluon import contrib

    env = {"rnn": rnn, "contrib": contrib, "nd": nd, "np": np, "autograd": autograd, "inp": {"x": X}}
    exec(code, env)
    assert sorted(env["grads"]) == sorted(k for k in ref if k != "meta")
    for k, g in env["grads"].items():
        np.testing.assert_allclose(g, ref[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_fused_layer_constructors_are_mxnets(oracle):
    """Parameter names, order and defaults of RNN/LSTM/GRU (RNN's third positional is ``activation``)."""
    import inspect

    ref = oracle.run("import inspect\nfrom mxnet.gluon import rnn\n"
                     "meta['sig'] = {n: [(p.name, repr(p.default)) for p in inspect.signature("
                     "getattr(rnn, n).__init__).parameters.values()] for n in ('RNN', 'LSTM', 'GRU')}")
    for name, params in ref["meta"]["sig"].items():
        ours = [[p.name, repr(p.default)] for p in inspect.signature(getattr(rnn, name).__init__).parameters.values()]
        assert ours == [list(p) for p in params], name


VL = np.array([4, 1, 3], "float32")

# MXNet 1.9.1's CPU build ignores sequence_length (verified: same output as without) and refuses projection;
# the reference for both is MXNet's own recurrent cells unrolled with valid_length, the fused layer's
# parameters copied into them (what cuDNN computes)
REFERENCE_CELLS = """
from mxnet.gluon import rnn, contrib
layer = {ctor}
layer.initialize()
rs = np.random.RandomState(3)
for p in layer.collect_params().values():
    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))
layer.save_parameters({path!r})
P = {{k[len(layer.prefix):]: p.data() for k, p in layer.collect_params().items()}}
mode, dirs, L, H = layer._mode, layer._dir, layer._num_layers, layer._hidden_size
stack = rnn.HybridSequentialRNNCell()
ni = layer._input_size
for i in range(L):
    def make(d):
        if layer._projection_size:
            return contrib.rnn.LSTMPCell(H, layer._projection_size, input_size=ni, prefix='%s%d_' % (d, i))
        if mode == 'lstm':
            return rnn.LSTMCell(H, input_size=ni, prefix='%s%d_' % (d, i))
        if mode == 'gru':
            return rnn.GRUCell(H, input_size=ni, prefix='%s%d_' % (d, i))
        return rnn.RNNCell(H, activation=mode[4:], input_size=ni, prefix='%s%d_' % (d, i))
    stack.add(rnn.BidirectionalCell(make('l'), make('r')) if dirs == 2 else make('l'))
    ni = (layer._projection_size or H) * dirs
stack.initialize()
for k, p in stack.collect_params().items():
    p.set_data(P[k])
x = nd.array(inp['x'])
# TNC: MXNet's BidirectionalCell fails to merge NTC outputs with valid_length (it stacks a stacked array)
outs, states = stack.unroll(4, x, layout='TNC', merge_outputs=True, valid_length=nd.array(inp['vl']))
out['y'] = outs.asnumpy()
n = 2 if mode == 'lstm' else 1
for j in range(n):   # the cells' [l0 h, l0 c, r0 h, r0 c, l1 ...] as the fused layer's stacked (L*D, N, .)
    out['s%d' % j] = nd.stack(*states[j::n], axis=0).asnumpy()
"""

SEQ_LAYERS = ["rnn.LSTM(5, num_layers=2, bidirectional=True, input_size=7, use_sequence_length=True)",
              "rnn.GRU(4, input_size=7, use_sequence_length=True)",
              "rnn.RNN(3, 2, 'tanh', input_size=7, bidirectional=True, use_sequence_length=True)",
              "rnn.LSTM(6, num_layers=2, input_size=7, projection_size=3)",
              "rnn.LSTM(6, input_size=7, projection_size=4, bidirectional=True, use_sequence_length=True)"]
XT = X.transpose(1, 0, 2)      # (T=4, N=3, C=7)


@pytest.mark.parametrize("ctor", SEQ_LAYERS)
def test_sequence_length_and_projection_follow_mxnets_cells(oracle, tmp_path, ctor):
    path = str(tmp_path / "seq.params")
    vl = VL if "use_sequence_length" in ctor else np.full(3, 4, "float32")
    ref = oracle.run(REFERENCE_CELLS.format(ctor=ctor, path=path), x=XT, vl=vl)
    layer = eval(ctor)
    layer.initialize()
    layer.load_parameters(path)
    extra = (nd_array(vl),) if "use_sequence_length" in ctor else ()
    for hybridize in (False, True):
        if hybridize:
            layer.hybridize()
        y, states = layer(nd_array(XT), layer.begin_state(3), *extra)
        np.testing.assert_allclose(np.asarray(y), ref["y"], rtol=1e-4, atol=1e-5)
        for j, s in enumerate(states):
            np.testing.assert_allclose(np.asarray(s), ref[f"s{j}"], rtol=1e-4, atol=1e-5, err_msg=f"state {j}")


def nd_array(a):
    from ast_hybrid import nd

    return nd.array(a)


def test_lstm_state_clipping_clips_the_cell_state():
    """No oracle (MXNet's CPU build ignores the clip; cuDNN applies it): a numpy LSTM with the clip."""
    layer = rnn.LSTM(4, input_size=7, state_clip_min=-0.3, state_clip_max=0.2, layout="NTC")
    layer.initialize()
    for p in layer.collect_params().values():
        p.set_data(np.random.default_rng(0).uniform(-1, 1, p.shape).astype("float32") * 2)
    y, (h, c) = layer(nd_array(X), layer.begin_state(3))
    w = {k.split("_", 1)[1]: np.asarray(p.data()) for k, p in layer.collect_params().items()}
    hh, cc = np.zeros((3, 4), "float32"), np.zeros((3, 4), "float32")

    def sig(v):
        return 1 / (1 + np.exp(-v))

    for t in range(4):
        g = X[:, t] @ w["l0_i2h_weight"].T + w["l0_i2h_bias"] + hh @ w["l0_h2h_weight"].T + w["l0_h2h_bias"]
        i, f, gc, o = np.split(g, 4, axis=1)
        cc = np.clip(sig(f) * cc + sig(i) * np.tanh(gc), -0.3, 0.2)
        hh = sig(o) * np.tanh(cc)
        np.testing.assert_allclose(np.asarray(y)[:, t], hh, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(c)[0], cc, rtol=1e-5, atol=1e-5)
    assert np.asarray(c).min() >= -0.3 and np.asarray(c).max() <= 0.2
