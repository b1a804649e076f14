"""Bad custom gradients and custom operators: a clear ``operator.CustomError`` naming the class, the method
and the user's line, never a raw JAX traceback."""

import inspect

import pytest

from ast_hybrid import autograd, nd, operator
from ast_hybrid.gluon import HybridBlock
from ast_hybrid.operator import CustomError

HERE = __file__


class TwoGrads(autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 2, dy      # one input, two gradients


class WrongShape(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], nd.concat(in_data[0], in_data[0], dim=1))   # (2, 6) into (2, 3)


@operator.register("ah_test_wrong_shape")
class WrongShapeProp(operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return WrongShape()


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("hybridize", [False, True])
def test_backward_with_the_wrong_number_of_gradients(hybridize):
    class Net(HybridBlock):
        def hybrid_forward(self, F, x):
            return TwoGrads()(x)

    net = Net()
    if hybridize:
        net.hybridize()
    x = nd.ones((2, 3))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    with pytest.raises(CustomError) as info:
        y.backward()
    msg = str(info.value)
    assert "TwoGrads.backward" in msg and f"{HERE}:{_line(TwoGrads.backward, 'return')}" in msg   # its return
    assert "returned 2 gradient(s); forward took 1" in msg


@pytest.mark.parametrize("hybridize", [False, True])
def test_infer_shape_that_disagrees_with_forward(hybridize):
    class Net(HybridBlock):
        def hybrid_forward(self, F, x):
            return F.Custom(x, op_type="ah_test_wrong_shape")

    net = Net()
    if hybridize:
        net.hybridize()
    with pytest.raises(CustomError) as info:
        net(nd.ones((2, 3)))
    msg = str(info.value)
    assert "WrongShape.forward" in msg and f"{HERE}:{_line(WrongShape.forward, 'self.assign')}" in msg
    assert "(2, 6)" in msg and "out_data[0]" in msg and "WrongShapeProp.infer_shape" in msg
    assert f"{HERE}:{WrongShapeProp.infer_shape.__code__.co_firstlineno}" in msg


def test_op_type_never_registered():
    with pytest.raises(CustomError) as info:
        nd.Custom(nd.ones((2,)), op_type="ah_never_registered")    # the line named
    msg = str(info.value)
    assert "'ah_never_registered' is not registered" in msg and "operator.register" in msg
    assert f"{HERE}:{_line(test_op_type_never_registered, 'ah_never_registered')}" in msg


def test_a_function_instance_is_called_once():
    f = TwoGrads()
    f(nd.ones((2,)))
    with pytest.raises(AssertionError, match="only be called once"):
        f(nd.ones((2,)))


class PositiveOnly(autograd.Function):
    def forward(self, x):
        v = x.asnumpy()
        return nd.array(v[v > 0])      # its shape depends on the values

    def backward(self, dy):
        return dy


class NeedsANegative(autograd.Function):
    def forward(self, x):
        v = x.asnumpy()
        assert (v < 0).any(), "needs a negative value"
        return nd.array(v)

    def backward(self, dy):
        return dy


class _Calls(HybridBlock):
    def __init__(self, fn, **kwargs):
        super().__init__(**kwargs)
        self.fn = fn

    def hybrid_forward(self, F, x):
        return self.fn()(x)      # the user's line


def test_function_reading_the_host_whose_trial_run_fails():
    """A Function with asnumpy() in forward runs on the host in a compiled program, its output shapes from
    a trial run on sample inputs; when that run fails, the error names the class, forward's line, the
    user's call and what to write instead."""
    net = _Calls(NeedsANegative)
    net.hybridize()
    with pytest.raises(CustomError) as info:
        net(nd.array([[-1.0, 2.0]]))
    msg = str(info.value)
    assert "NeedsANegative.forward" in msg and f"{HERE}:{_line(NeedsANegative.forward, 'assert')}" in msg
    assert f"{HERE}:{_line(_Calls.hybrid_forward, 'the user')}" in msg
    assert "trial run" in msg and "needs a negative value" in msg and "without hybridize()" in msg


def test_function_reading_the_host_whose_shapes_depend_on_the_values():
    net = _Calls(PositiveOnly)
    net.hybridize()
    with pytest.raises(CustomError) as info:
        net(nd.array([[-1.0, 2.0, 3.0]])).asnumpy()
    msg = str(info.value)
    assert "PositiveOnly.forward" in msg and "[(2,)] here, [(3,)] in its trial run" in msg
    assert "must not depend on the" in msg
