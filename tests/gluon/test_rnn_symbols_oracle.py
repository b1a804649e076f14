"""Recurrent cells unrolled on Symbols, as MXNet 1.9.1's ``test_gluon_rnn.py`` and its users build graphs: the
begin states are ``sym.zeros`` of batch 0 that the graph's shape inference resolves, the nodes carry MXNet's
names (``rnn_t0_out_output``), the parameters' initialisers reach ``Module.init_params``, and a fused layer's
``_unfuse()`` gives its cells.  One script, run by MXNet and under ``ast-hybrid run``: the same lines."""

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = pytest.mark.oracle

SCRIPT = r'''
import numpy as np
import mxnet as mx
from mxnet import gluon
from mxnet.gluon import rnn

CELLS = {
    "rnn": lambda: rnn.RNNCell(6, prefix="rnn_"),
    "lstm": lambda: rnn.LSTMCell(5, prefix="rnn_"),
    "gru": lambda: rnn.GRUCell(4, prefix="rnn_"),
    "residual": lambda: rnn.ResidualCell(rnn.GRUCell(5, prefix="rnn_")),
    "zoneout": lambda: rnn.ZoneoutCell(rnn.RNNCell(6, prefix="rnn_"), zoneout_outputs=0.5, zoneout_states=0.5),
    "bidirectional": lambda: rnn.BidirectionalCell(rnn.LSTMCell(4, prefix="rnn_l0_"),
                                                   rnn.GRUCell(3, prefix="rnn_r0_"), output_prefix="rnn_bi_"),
}


def stack():
    cell = rnn.HybridSequentialRNNCell()
    cell.add(rnn.LSTMCell(5, prefix="rnn_stack0_"))
    cell.add(rnn.ResidualCell(rnn.LSTMCell(5, prefix="rnn_stack1_")))
    cell.add(rnn.GRUCell(4, prefix="rnn_stack2_"))
    return cell


CELLS["stack"] = stack
x = np.linspace(-1, 1, 2 * 3 * 5).reshape(2, 3, 5).astype("float32")         # NTC, input size 5


def run(name, outputs, data=x):
    out = mx.sym.Group(outputs) if isinstance(outputs, list) else outputs
    print(name, out.list_outputs())
    shapes = {a: (2, 5) for a in out.list_arguments() if a.startswith("rnn_t")}
    shapes.update({a: data.shape for a in out.list_arguments() if a == "data"})
    print(name, "shapes", out.infer_shape(**shapes)[1])
    mod = mx.mod.Module(out, data_names=sorted(shapes), label_names=None)
    mod.bind(data_shapes=sorted(shapes.items()), for_training=False)
    mod.init_params(mx.init.Constant(0.1))
    feed = [mx.nd.array(x[:, int(k[5:].split("_")[0])] if k.startswith("rnn_t") else data) for k in sorted(shapes)]
    mod.forward(mx.io.DataBatch(feed), is_train=False)
    print(name, "values", [round(float(o.sum().asscalar()), 4) for o in mod.get_outputs()])


for name, make in CELLS.items():
    cell = make()
    steps = [mx.sym.var("rnn_t%d_data" % i) for i in range(3)]
    outputs, states = cell.unroll(3, steps)
    print(name, "params", sorted(cell.collect_params().keys()), len(states))
    run(name, outputs)

for name, layout, data in (("merged NTC", "NTC", x), ("merged TNC", "TNC", x.transpose(1, 0, 2))):
    cell = rnn.LSTMCell(4, prefix="rnn_")
    outputs, _ = cell.unroll(3, mx.sym.var("data"), layout=layout, merge_outputs=True)
    run(name, outputs, data)

cell = rnn.GRUCell(4, prefix="rnn_")
begin = cell.begin_state(batch_size=0, func=mx.sym.zeros)
outputs, _ = cell.unroll(3, [mx.sym.var("rnn_t%d_data" % i) for i in range(3)], begin_state=begin)
run("given begin_state", outputs)

stack = rnn.SequentialRNNCell()
stack.add(rnn.LSTMCell(4, i2h_bias_initializer=mx.init.LSTMBias(2.0), prefix="l0_"))
outputs, _ = stack.unroll(1, mx.sym.var("data"), merge_outputs=True)
mod = mx.mod.Module(outputs, label_names=None)
mod.bind(data_shapes=[("data", (2, 1, 5))])
mod.init_params()
print("forget bias", mod.get_params()[0]["l0_i2h_bias"].asnumpy().tolist())

layer = gluon.rnn.LSTM(3, num_layers=2, bidirectional=True)
cells = layer._unfuse()
layer.initialize(mx.init.Constant(0.2))
seq = mx.nd.array(x.transpose(1, 0, 2))          # TNC
fused = layer(seq)
unfused = cells.unroll(3, seq, layout="TNC", merge_outputs=True)[0]
print("unfuse", type(cells).__name__, len(cells), round(float(fused.sum().asscalar()), 4),
      round(float(unfused.sum().asscalar()), 4), sorted(cells.collect_params().keys())[:3])
'''


def test_cells_unrolled_on_symbols_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
    assert any(line.startswith("stack values") for line in ours)
