"""The rest of ``gluon.rnn`` (stacks, modifiers, bidirectional) and ``gluon.contrib.rnn`` against MXNet 1.9.1:
the same construction text runs in MXNet and here, MXNet's random parameters are loaded here, and
``unroll`` (merged or not, with and without ``valid_length``), stepping, and a hybridized block that
unrolls a cell give MXNet's values."""

import runpy

import jax
import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.gluon import HybridBlock, contrib, rnn  # noqa: F401  (used by exec)
from ast_hybrid.gluon.programs import _mode

pytestmark = pytest.mark.oracle

X = np.random.default_rng(5).standard_normal((3, 4, 7)).astype("float32")     # NTC
VALID = np.array([4, 2, 3], "float32")

CELLS = {
    "hybrid_stack": "layer = rnn.HybridSequentialRNNCell()\nlayer.add(rnn.LSTMCell(6))\n"
                    "layer.add(rnn.DropoutCell(0.5))\nlayer.add(rnn.GRUCell(5))",
    "stack": "layer = rnn.SequentialRNNCell()\nlayer.add(rnn.RNNCell(6, activation='relu'))\n"
             "layer.add(rnn.LSTMCell(4))",
    "residual": "layer = rnn.ResidualCell(rnn.GRUCell(7))",
    "zoneout": "layer = rnn.ZoneoutCell(rnn.LSTMCell(6), zoneout_outputs=0.3, zoneout_states=0.2)",
    "bidirectional": "layer = rnn.BidirectionalCell(rnn.LSTMCell(4), rnn.GRUCell(3))",
    "lstmp": "layer = contrib.rnn.LSTMPCell(6, 3)",
    "vardrop": "layer = contrib.rnn.VariationalDropoutCell(rnn.LSTMCell(5), drop_inputs=0.3, drop_states=0.2, "
               "drop_outputs=0.1)",
    "vardrop_no_states": "layer = contrib.rnn.VariationalDropoutCell(rnn.GRUCell(5), drop_inputs=0.3, "
                         "drop_outputs=0.1)",
}

UNROLLS = {
    "merged": "outs, states = layer.unroll(4, x, layout='NTC', merge_outputs=True)",
    "as_given": "outs, states = layer.unroll(4, x, layout='NTC')",
    "list": "outs, states = layer.unroll(4, x, layout='NTC', merge_outputs=False)",
    "valid_length": "outs, states = layer.unroll(4, x, layout='NTC', merge_outputs=True, valid_length=vl)",
    "tnc_list_in": "outs, states = layer.unroll(4, [x[:, t] for t in range(4)], layout='TNC', merge_outputs=True)",
}

# code run after the construction, in MXNet and here: initialise, set MXNet's random parameters, save them
# (MXNet) and run; ``out`` gets the outputs, ``meta['names']`` the parameter names
SETUP = """
layer.initialize()
x = nd.array(inp['x']); vl = nd.array(inp['vl'])
layer.unroll(x.shape[1], x, layout='NTC')
"""

RUN = """
def flat(outs, states):
    outs = [outs] if not isinstance(outs, (list, tuple)) else list(outs)
    return outs + list(states)
res = flat(outs, states)
"""


def _mx_code(build, unroll, path, setup=SETUP):
    return (f"from mxnet.gluon import rnn, contrib, nn\n{build}\n{setup}"
            "rs = np.random.RandomState(0)\n"
            "for p in layer.collect_params().values():\n"
            "    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))\n"
            f"layer.save_parameters({path!r})\n"
            f"{unroll}\n{RUN}"
            "for i, r in enumerate(res): out[str(i)] = r.asnumpy()\n"
            "meta['n'] = len(res); meta['names'] = sorted(layer.collect_params().keys())\n")


def _ours(build, unroll, path):
    from ast_hybrid.gluon import nn

    ns = {"rnn": rnn, "contrib": contrib, "nn": nn, "nd": nd, "inp": {"x": X, "vl": VALID}}
    exec(f"{build}\n{SETUP}", ns)
    ns["layer"].load_parameters(path)
    exec(f"{unroll}\n{RUN}", ns)
    return ns["layer"], [np.asarray(r) for r in ns["res"]]


def _check(ref, got, what):
    assert len(got) == ref["meta"]["n"], what
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, ref[str(i)], rtol=1e-4, atol=1e-5, err_msg=f"{what}: result {i}")


@pytest.mark.parametrize("unroll", list(UNROLLS))
@pytest.mark.parametrize("cell", list(CELLS))
def test_unroll_matches_mxnet(oracle, tmp_path, cell, unroll):
    path = str(tmp_path / "c.params")
    ref = oracle.run(_mx_code(CELLS[cell], UNROLLS[unroll], path), x=X, vl=VALID)
    layer, got = _ours(CELLS[cell], UNROLLS[unroll], path)
    assert sorted(layer.collect_params().keys()) == ref["meta"]["names"]
    _check(ref, got, f"{cell} {unroll}")


# MXNet 1.9.1 cannot step a hybridized cell that keeps values between steps (ZoneoutCell's previous output,
# VariationalDropoutCell's masks: an NDArray meets its Symbol graph); here it can (see the zoneout test below)
STATEFUL = ("zoneout", "vardrop", "vardrop_no_states")
STEPPABLE = [(c, h) for c in CELLS if c != "bidirectional" for h in (False, True) if not (h and c in STATEFUL)]


@pytest.mark.parametrize("cell,hybridize", STEPPABLE)
def test_stepping_matches_mxnet(oracle, tmp_path, cell, hybridize):
    """Two steps called one by one (each a compiled program when hybridized)."""
    path = str(tmp_path / "c.params")
    step = ("states = layer.begin_state(batch_size=3, func=nd.zeros)\n"
            f"{'layer.hybridize()' if hybridize else ''}\n"
            "o1, states = layer(x[:, 0], states)\n"
            "outs, states = layer(x[:, 1], states)\n"
            "outs = [o1, outs]")
    ref = oracle.run(_mx_code(CELLS[cell], step, path), x=X, vl=VALID)
    _, got = _ours(CELLS[cell], step, path)
    _check(ref, got, f"{cell} stepped")


NET = """
class Net(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            {build}
            self.cell = layer

    def hybrid_forward(self, F, x, vl):
        outs, states = self.cell.unroll(4, x, layout='NTC', merge_outputs=True, valid_length=vl)
        return F.concat(outs.reshape((3, -1)), *states, dim=1)

net = Net()
net.initialize()
net.hybridize()
"""


@pytest.mark.parametrize("cell", ["hybrid_stack", "bidirectional", "lstmp", "residual", "vardrop_no_states"])
def test_hybridized_block_unrolling_a_cell_matches_mxnet(oracle, tmp_path, cell):
    path = str(tmp_path / "n.params")
    net = NET.format(build=CELLS[cell].replace("\n", "\n            "))
    ref = oracle.run(
        "from mxnet.gluon import rnn, contrib, nn, HybridBlock\n" + net +
        "x = nd.array(inp['x']); vl = nd.array(inp['vl'])\nnet(x, vl)\n"
        "rs = np.random.RandomState(1)\n"
        "for p in net.collect_params().values():\n"
        "    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))\n"
        f"net.save_parameters({path!r})\n"
        "out['y'] = net(x, vl).asnumpy()\n", x=X, vl=VALID)
    module = tmp_path / "net_module.py"          # a file: the converter reads the forward's source
    module.write_text("from ast_hybrid import nd\nfrom ast_hybrid.gluon import rnn, contrib, nn, HybridBlock\n" + net)
    net = runpy.run_path(str(module))["net"]
    net(X, VALID)
    net.load_parameters(path)
    y = net(X, VALID)
    assert net._compiled is not None                  # one compiled program
    np.testing.assert_allclose(np.asarray(y), ref["y"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("valid", [False, True])
def test_dynamic_unroll_matches_mxnet(oracle, tmp_path, valid):
    path = str(tmp_path / "d.params")
    call = ("states = layer.begin_state(batch_size=3)\n"
            "outs, states = contrib.rnn.rnn_cell.dynamic_unroll(layer, x, states, layout='NTC'"
            f"{', valid_length=vl' if valid else ''})")
    ref = oracle.run(_mx_code("layer = rnn.LSTMCell(5)", call, path), x=X, vl=VALID)
    _, got = _ours("layer = rnn.LSTMCell(5)", call.replace("contrib.rnn.rnn_cell.", "contrib.rnn."), path)
    _check(ref, got, "dynamic_unroll")


def test_variational_dropout_keeps_one_mask_per_sequence():
    cell = contrib.rnn.VariationalDropoutCell(rnn.RNNCell(64, activation="sigmoid"), drop_outputs=0.5,
                                              drop_states=0.3)
    cell.initialize()
    with _mode(True):
        outs, _ = cell.unroll(5, X[:, :1].repeat(5, axis=1), layout="NTC", merge_outputs=True)
        again, _ = cell.unroll(5, X[:, :1].repeat(5, axis=1), layout="NTC", merge_outputs=True)
    dropped = np.asarray(outs) == 0                     # sigmoid outputs are never 0 by themselves
    assert 0.3 < dropped.mean() < 0.7
    assert (dropped == dropped[:, :1]).all()            # the same units dropped at every step
    assert not np.array_equal(dropped, np.asarray(again) == 0)   # a new sequence draws a new mask


def test_zoneout_keeps_previous_values_in_training_and_survives_retracing():
    cell = rnn.ZoneoutCell(rnn.GRUCell(32), zoneout_outputs=0.5)
    cell.initialize()
    states = cell.begin_state(batch_size=3)
    with _mode(True):
        o1, s1 = cell(nd.array(X[:, 0]), states)
        o2, _ = cell(nd.array(X[:, 1]), s1)
    base = rnn.GRUCell(32, params=cell.base_cell.params)
    b2, _ = base(nd.array(X[:, 1]), s1)
    o1, o2, b2 = np.asarray(o1), np.asarray(o2), np.asarray(b2)
    kept = o2 == o1
    assert 0.2 < kept.mean() < 0.8 and np.allclose(o2[~kept], b2[~kept])    # the rest is the new output
    cell.reset()
    cell.hybridize()
    with jax.checking_leaks():
        p1, s = cell(nd.array(X[:, 0]), states)          # predict program
        with _mode(True):
            cell(nd.array(X[:, 1]), s)                   # a training program: a new trace, no stale tracer
        p2, _ = cell(nd.array(X[:, 1]), s)
    assert np.asarray(p2).shape == (3, 32)


def test_block_activation_unrolls():
    """MXNet 1.9.1's unroll fails on a cell whose activation is a block (its reset() calls the block's);
    here it runs, with MXNet's LeakyReLU rule."""
    from ast_hybrid.gluon import nn

    cell, ref = rnn.RNNCell(5, activation=nn.LeakyReLU(0.2)), rnn.RNNCell(5, activation="tanh")
    cell.initialize()
    cell.unroll(2, X[:, :2], layout="NTC")
    w = {k: p.data() for k, p in cell._reg_params.items()}
    outs, _ = cell.unroll(2, X[:, :2], layout="NTC", merge_outputs=True)
    pre = X[:, 0] @ np.asarray(w["i2h_weight"]).T + np.asarray(w["i2h_bias"]) + np.asarray(w["h2h_bias"])
    np.testing.assert_allclose(np.asarray(outs)[:, 0], np.where(pre > 0, pre, 0.2 * pre), rtol=1e-5, atol=1e-6)
    assert ref is not None


def test_bidirectional_cannot_be_stepped():
    cell = rnn.BidirectionalCell(rnn.LSTMCell(4), rnn.LSTMCell(4))
    cell.initialize()
    with pytest.raises(NotImplementedError, match="unroll"):
        cell(nd.array(X[:, 0]), cell.begin_state(batch_size=3))


def test_modified_cell_must_be_used_through_its_modifier():
    base = rnn.LSTMCell(4)
    rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match="modifier"):
        base.begin_state(batch_size=2)
    with pytest.raises(AssertionError, match="already modified"):
        rnn.ZoneoutCell(base)


CONV_CELLS = [
    ("contrib.rnn.Conv1DRNNCell((2, 6), 3, i2h_kernel=3, h2h_kernel=3, i2h_pad=1, activation='relu')", (2, 3, 2, 6)),
    ("contrib.rnn.Conv2DRNNCell((2, 5, 5), 3, i2h_kernel=(3, 1), h2h_kernel=(1, 3))", (2, 3, 2, 5, 5)),
    ("contrib.rnn.Conv3DRNNCell((1, 3, 4, 4), 2, i2h_kernel=1, h2h_kernel=3)", (2, 3, 1, 3, 4, 4)),
    ("contrib.rnn.Conv1DLSTMCell((2, 6), 3, i2h_kernel=3, h2h_kernel=3, i2h_dilate=2)", (2, 3, 2, 6)),
    ("contrib.rnn.Conv2DLSTMCell((2, 5, 5), 3, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)", (2, 3, 2, 5, 5)),
    ("contrib.rnn.Conv3DLSTMCell((1, 3, 4, 4), 2, i2h_kernel=(1, 3, 3), h2h_kernel=3, i2h_pad=(0, 1, 1))",
     (2, 3, 1, 3, 4, 4)),
    ("contrib.rnn.Conv1DGRUCell((2, 6), 3, i2h_kernel=1, h2h_kernel=5)", (2, 3, 2, 6)),
    ("contrib.rnn.Conv2DGRUCell((2, 5, 5), 3, i2h_kernel=3, h2h_kernel=3, activation='sigmoid')", (2, 3, 2, 5, 5)),
    ("contrib.rnn.Conv3DGRUCell((1, 3, 4, 4), 2, i2h_kernel=1, h2h_kernel=3)", (2, 3, 1, 3, 4, 4)),
]


@pytest.mark.parametrize("ctor,shape", CONV_CELLS, ids=[c.split("(")[0].split(".")[-1] + str(i)
                                                        for i, (c, _) in enumerate(CONV_CELLS)])
def test_convolutional_cells_match_mxnet(oracle, tmp_path, ctor, shape):
    """Unrolled (valid_length too) and stepped hybridized, with MXNet's parameters.  (MXNet's CPU build has no
    dilated 3-D convolution and no NHWC convolution, and cannot index a 6-D array: the cases avoid them.)"""
    path = str(tmp_path / "conv.params")
    x = np.random.default_rng(6).standard_normal(shape).astype("float32")
    body = ("outs, states = layer.unroll(3, x, layout='NTC', merge_outputs=True, valid_length=vl)\n"
            "layer.hybridize()\n"
            "o, st = layer(nd.split(x, num_outputs=3, axis=1, squeeze_axis=True)[0], layer.begin_state(batch_size=2))\n"
            "outs, states = [outs, o], list(states) + list(st)")
    # shapes are known, so no first run before MXNet's parameters are set (after one, MXNet's set_data fails
    # on a 3-D convolution weight that oneDNN has re-laid out)
    setup = SETUP.replace("layer.unroll(x.shape[1], x, layout='NTC')", "").replace("inp['vl']", "inp['vl'][:2] - 1")
    ref = oracle.run(_mx_code(f"layer = {ctor}", body, path, setup), x=x, vl=VALID)
    ns = {"rnn": rnn, "contrib": contrib, "nd": nd, "inp": {"x": x, "vl": VALID}}
    exec(f"layer = {ctor}\n{setup}", ns)
    ns["layer"].load_parameters(path)
    exec(f"{body}\n{RUN}", ns)
    assert sorted(ns["layer"].collect_params().keys()) == ref["meta"]["names"]
    _check(ref, [np.asarray(r) for r in ns["res"]], ctor)


def test_channels_last_convolutional_cell_equals_channels_first():
    """MXNet's CPU build runs no NHWC convolution, so no oracle: the NHWC cell, given the NCHW cell's
    weights laid out channels-last, gives its outputs transposed."""
    first = contrib.rnn.Conv2DGRUCell((2, 5, 5), 3, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)
    last = contrib.rnn.Conv2DGRUCell((5, 5, 2), 3, i2h_kernel=3, h2h_kernel=3, i2h_pad=1, conv_layout="NHWC")
    first.initialize()
    last.initialize()
    for (name, p), q in zip(first._reg_params.items(), last._reg_params.values()):
        v = p.data()
        q.set_data(v.transpose((0, 2, 3, 1)) if "weight" in name else v)
    x = np.random.default_rng(7).standard_normal((2, 3, 2, 5, 5)).astype("float32")
    a, sa = first.unroll(3, x, layout="NTC", merge_outputs=True)
    b, sb = last.unroll(3, x.transpose(0, 1, 3, 4, 2), layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(np.asarray(b), np.asarray(a).transpose(0, 1, 3, 4, 2), rtol=1e-5, atol=1e-5)
    assert last.state_info(2)[0]["shape"] == (2, 5, 5, 3)
