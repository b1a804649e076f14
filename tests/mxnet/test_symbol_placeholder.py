"""``mx.sym.<op>(mx.sym.var(...))``, MXNet's graph-building style: ast-hybrid builds no graphs, so the
op says so and what to write instead, not JAX's TypeError about an argument's type."""

from __future__ import annotations

import numpy as np
import pytest

import ast_hybrid.mxnet as mx
from ast_hybrid.sym import PlaceholderGiven


@pytest.mark.parametrize("call", [lambda x: mx.sym.relu(x), lambda x: mx.sym.FullyConnected(x, num_hidden=3),
                                  lambda x: mx.sym.contrib.box_nms(x), lambda x: mx.sym.dot(x, data=x)])
def test_an_op_given_a_placeholder_says_no_graphs_and_what_to_write(call):
    with pytest.raises(PlaceholderGiven, match="builds no symbolic graphs") as err:
        call(mx.sym.var("data"))
    assert isinstance(err.value, TypeError) and "hybrid_forward" in str(err.value)
    assert "Variable(data" in str(err.value)


def test_ops_on_arrays_are_unchanged():
    out = mx.sym.relu(mx.nd.array([-1.0, 2.0]))
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 2.0])
    assert mx.sym.relu.__name__ == "relu"
