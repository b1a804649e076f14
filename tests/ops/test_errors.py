"""Misuse gets a message that names the op, the argument, what was expected and what was given."""

import jax
import jax.numpy as jnp
import pytest

from ast_hybrid import nd
from ast_hybrid.ops._core import OpError

X = nd.ones((2, 3))

CASES = [
    (lambda: nd.FullyConnected(X, nd.ones((4, 5)), nd.ones((4,)), num_hidden=4),
     r"FullyConnected: weight must have shape \(num_hidden, 3\).*got \(4, 5\)"),
    (lambda: nd.Activation(X, act_type="swish"), r"Activation: unknown act_type='swish'; expected one of 'relu'"),
    (lambda: nd.elemwise_add(X, nd.ones((1, 3))),
     r"elemwise_add: the two inputs must have the same shape, got \(2, 3\) and \(1, 3\)"),
    (lambda: X + nd.ones((2, 3), dtype="int32"), r"add: the two inputs must have the same dtype.*float32 and int32"),
    (lambda: nd.broadcast_add(X, nd.ones((4, 3))),
     r"broadcast_add: operands could not be broadcast together with shapes \[2, 3\] \[4, 3\]"),
    (lambda: nd.reshape(X, shape=(4, -1)), r"reshape: cannot reshape \(2, 3\) with shape=\(4, -1\)"),
    (lambda: nd.sum(X, axis=2), r"sum: axis=2 is out of range for an input with 2 dimensions"),
    (lambda: nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pool_type="median"),
     r"Pooling: unknown pool_type='median'"),
    (lambda: nd.Convolution(nd.ones((1, 3, 5, 5)), nd.ones((4, 2, 3, 3)), kernel=(3, 3), num_filter=4, no_bias=True),
     r"Convolution: weight must have shape \(4, 3, 3, 3\)"),
    (lambda: nd.BatchNorm(nd.ones((2, 3, 4)), nd.ones((2,)), nd.ones((3,)), nd.ones((3,)), nd.ones((3,))),
     r"BatchNorm: gamma must have shape \(3,\) for 3 channels on axis 1"),
    (lambda: nd.take(X, nd.array([0]), mode="nearest"), r"take: unknown mode='nearest'"),
    (lambda: nd.softmax(X, length=nd.array([1.0, 2.0]), use_length=True), r"softmax: length must have an integer"),
    (lambda: nd.split(X, num_outputs=2, axis=1), r"split: num_outputs=2 must evenly divide the size 3 of axis 1"),
    # adaptive samples inside a compiled program (eagerly they are MXNet's): their number depends on the regions
    (lambda: jax.jit(lambda r: nd.contrib.ROIAlign(nd.ones((1, 1, 4, 4)), nd.NDArray(r), (2, 2), 1.0)._arr)(
        jnp.zeros((1, 5))), r"ROIAlign: sample_ratio <= 0"),
    (lambda: nd.Dropout(X, p=2.0), r"Dropout: p must be in \[0, 1\]"),
]


@pytest.mark.parametrize("call,message", CASES, ids=[m.split(":")[0] for _, m in CASES])
def test_clear_error(call, message):
    with pytest.raises((OpError, TypeError), match=message):
        call()


def test_op_errors_are_value_errors():
    assert issubclass(OpError, ValueError)
