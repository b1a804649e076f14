"""MXNet 1.9.1's own recurrent cells (``gluon/rnn/rnn_cell.py``, ``gluon/contrib/rnn/rnn_cell.py``), run unchanged
on ast-hybrid's ``Block``/``HybridBlock`` and ``F``, against real MXNet 1.9.1.

The cells subclass ``Block`` the way users' cells do (``forward`` overridden and calling
``super().forward``, ``__call__`` overridden, ``hybrid_forward`` receiving parameters by name, state kept
between steps): the same construction in both, MXNet's random parameters loaded here, and ``unroll``
(with ``valid_length``), a step, and a hybridized block unrolling the cell give MXNet's values.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.oracle, pytest.mark.corpus]

X = np.random.default_rng(8).standard_normal((3, 4, 7)).astype("float32")
VL = np.array([4, 2, 3], "float32")

CELLS = {
    "lstm": "rnn.LSTMCell(6)",
    "gru_stack": "rnn.HybridSequentialRNNCell()\nlayer.add(rnn.GRUCell(5))\nlayer.add(rnn.DropoutCell(0.3))\n"
                 "layer.add(rnn.RNNCell(4, activation='relu'))",
    "bidirectional": "rnn.BidirectionalCell(rnn.LSTMCell(4), rnn.GRUCell(3))",
    "residual": "rnn.ResidualCell(rnn.GRUCell(7))",
    "lstmp": "contrib.rnn.LSTMPCell(6, 3)",
    "vardrop": "contrib.rnn.VariationalDropoutCell(rnn.LSTMCell(5), drop_inputs=0.3, drop_outputs=0.2)",
}

RUN = """
x = nd.array(inp['x']); vl = nd.array(inp['vl'])
layout = 'TNC' if {bidi} else 'NTC'
layer.initialize()
layer.unroll(4, x, layout=layout)
{load}
outs, states = layer.unroll(4, x, layout=layout, merge_outputs=True, valid_length=vl)
res = [outs] + list(states)
if not {bidi}:
    o, s = layer(x[:, 0], layer.begin_state(batch_size=3, func=nd.zeros))
    res += [o] + list(s)
"""

NET = """
class Net(HybridBlock):
    def __init__(self, cell, **kw):
        super().__init__(**kw)
        self.cell = cell

    def hybrid_forward(self, F, x, vl):
        outs, states = self.cell.unroll(4, x, layout='NTC', merge_outputs=True, valid_length=vl)
        return F.concat(outs.reshape((3, -1)), *states, dim=1)
"""


def _build(name):
    text = CELLS[name]
    first, _, rest = text.partition("\n")
    return f"layer = {first}\n{rest}"


@pytest.mark.parametrize("name", list(CELLS))
def test_mxnets_own_cells_match_mxnet(oracle, mxnet_source, tmp_path, name):
    path = str(tmp_path / "cell.params")
    bidi = name == "bidirectional"
    inputs = {"x": X.transpose(1, 0, 2) if bidi else X, "vl": VL}   # MXNet's bidirectional merge needs TNC
    save = (f"rs = np.random.RandomState(0)\nfor p in layer.collect_params().values():\n"
            f"    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))\nlayer.save_parameters({path!r})")
    code = _build(name) + RUN.format(load=save, bidi=bidi)
    ref = oracle.run("from mxnet.gluon import rnn, contrib\n" + code +
                     "for i, r in enumerate(res): out[str(i)] = r.asnumpy()\nmeta['n'] = len(res)", **inputs)

    from ast_hybrid import nd
    from mxnet.gluon import contrib, rnn     # MXNet's own cell source, on our front

    assert rnn.LSTMCell.__module__ == "mxnet.gluon.rnn.rnn_cell"
    env = {"rnn": rnn, "contrib": contrib, "nd": nd, "np": np, "inp": inputs}
    exec(_build(name) + RUN.format(load=f"layer.load_parameters({path!r})", bidi=bidi), env)
    assert len(env["res"]) == ref["meta"]["n"]
    for i, r in enumerate(env["res"]):
        np.testing.assert_allclose(np.asarray(r), ref[str(i)], rtol=1e-4, atol=1e-5, err_msg=f"{name}: {i}")


@pytest.mark.parametrize("name", ["gru_stack", "lstmp", "residual"])
def test_hybridized_block_unrolling_mxnets_own_cell_matches_mxnet(oracle, mxnet_source, tmp_path, name):
    path = str(tmp_path / "net.params")
    module = tmp_path / "net_module.py"      # a file: the converter reads the forward's source
    module.write_text("from mxnet.gluon import HybridBlock\n" + NET)
    make = _build(name) + "\nnet = Net(layer)\nnet.initialize()\nnet.hybridize()\n"
    ref = oracle.run(
        "from mxnet.gluon import rnn, contrib, HybridBlock\n" + NET + make +
        "x = nd.array(inp['x']); vl = nd.array(inp['vl'])\nnet(x, vl)\n"
        "rs = np.random.RandomState(1)\nfor p in net.collect_params().values():\n"
        "    p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))\n"
        f"net.save_parameters({path!r})\nout['y'] = net(x, vl).asnumpy()", x=X, vl=VL)

    import runpy

    from ast_hybrid import nd
    from mxnet.gluon import contrib, rnn

    env = {"rnn": rnn, "contrib": contrib, "Net": runpy.run_path(str(module))["Net"]}
    exec(make, env)
    net = env["net"]
    net(nd.array(X), nd.array(VL))
    net.load_parameters(path)
    y = net(nd.array(X), nd.array(VL))
    assert net._compiled is not None
    np.testing.assert_allclose(np.asarray(y), ref["y"], rtol=1e-4, atol=1e-5)
