"""``mx.sym.<op>(mx.sym.var(...))``, MXNet's graph-building style: the op builds a node of the graph (with the
variables MXNet creates for inputs not given), which computes when evaluated; on arrays the op computes."""

from __future__ import annotations

import numpy as np

import ast_hybrid.mxnet as mx


def test_an_op_given_a_placeholder_builds_a_node():
    x = mx.sym.var("data")
    assert isinstance(mx.sym.relu(x), mx.sym.Symbol) and mx.sym.relu(x).list_arguments() == ["data"]
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    assert fc.list_arguments() == ["data", "fc_weight", "fc_bias"] and fc.name == "fc"
    nms = mx.sym.contrib.box_nms(x, name="nms")
    assert nms.list_outputs() == ["nms_output0"]        # MXNet's name: its other output is hidden
    got = fc.eval(data=np.ones((2, 4), np.float32), fc_weight=np.ones((3, 4), np.float32),
                  fc_bias=np.zeros(3, np.float32))[0]
    np.testing.assert_array_equal(got.asnumpy(), np.full((2, 3), 4.0))


def test_ops_on_arrays_are_unchanged():
    out = mx.sym.relu(mx.nd.array([-1.0, 2.0]))
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 2.0])
    assert mx.sym.relu.__name__ == "relu"
