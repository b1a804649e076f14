"""Issue 17, "Bad input", in every mode: an ``infer_shape`` that disagrees with what forward (or backward)
assigns, a ``Function.backward`` that returns the wrong number of gradients, an ``op_type`` never
registered; each op by op, under ``record()``/``backward()`` and inside a hybridized block (predict and
recorded), written with NDArray ops and with ``asnumpy()`` (run through ``jax.pure_callback`` when traced).

Each is an ``operator.CustomError`` of its own (not JAX's ``JaxRuntimeError``), whose message names the
class, the method, the user's line and where the op was called, and carries no JAX traceback text; its
printed traceback has no JAX frame and no JAX cause, and JAX logs nothing about the failed callback."""

import inspect
import logging
import traceback

import numpy as np
import pytest

from ast_hybrid import autograd, nd, operator
from ast_hybrid.gluon import HybridBlock
from ast_hybrid.core import errors
from ast_hybrid.operator import CustomError

HERE = __file__


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return f"{HERE}:{start + next(i for i, line in enumerate(lines) if text in line)}"


# --- Functions whose backward returns two gradients for one input --------------------------------

class TwoGrads(autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 2, dy      # two gradients


class TwoGradsHostBackward(autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        g = nd.array(dy.asnumpy() * 2)
        return g, g      # two gradients


class TwoGradsHostForward(autograd.Function):
    def forward(self, x):
        return nd.array(x.asnumpy() * 2)

    def backward(self, dy):
        return [dy, dy]      # two gradients


# --- custom ops whose forward or backward disagrees with infer_shape ---------------------------

class Doubles(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], nd.concat(in_data[0], in_data[0], dim=1))    # the bad line

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


class DoublesHost(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        v = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], nd.array(np.concatenate([v, v], 1)))    # the bad line

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


class SlicesIn(operator.CustomOp):
    """Writes its output by slice assignment, not assign()."""

    def forward(self, is_train, req, in_data, out_data, aux):
        out_data[0][:] = nd.concat(in_data[0], in_data[0], dim=1)    # the bad line

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


class BadGrad(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], nd.concat(out_grad[0], out_grad[0], dim=1))    # the bad line


class BadGradHost(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        v = out_grad[0].asnumpy()
        self.assign(in_grad[0], req[0], nd.array(np.concatenate([v, v], 1)))    # the bad line


def _prop(op_cls):
    class Prop(operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []      # the declaration

        def create_operator(self, ctx, shapes, dtypes):
            return op_cls()

    Prop.__name__ = Prop.__qualname__ = op_cls.__name__ + "Prop"
    operator.register("ah_bad_" + op_cls.__name__)(Prop)
    return Prop


PROPS = {cls: _prop(cls) for cls in (Doubles, DoublesHost, SlicesIn, BadGrad, BadGradHost)}


def call(F, x, what):
    if isinstance(what, str):
        return F.Custom(x, op_type=what)      # the call
    if issubclass(what, operator.CustomOp):
        return F.Custom(x, op_type="ah_bad_" + what.__name__)      # the call
    return what()(x)      # the call


class Net(HybridBlock):
    def __init__(self, what, **kwargs):
        super().__init__(**kwargs)
        self.what = what

    def hybrid_forward(self, F, x):
        return call(F, x, self.what) * 1


def run(what, mode):
    """Run ``what`` in ``mode``: 'eager' (op by op), 'record' (op by op, then backward()), 'hybrid' (a
    hybridized block's call) or 'hybrid-record' (recorded, then backward())."""
    x = nd.ones((2, 3))
    if mode.startswith("hybrid"):
        net = Net(what)
        net.hybridize()
        f = net
    else:
        def f(x):
            return call(nd, x, what)
    if mode in ("eager", "hybrid"):
        return f(x).asnumpy()
    x.attach_grad()
    with autograd.record():
        y = f(x)
    y.backward()
    return x.grad.asnumpy()


def check_clean(err):
    """No JAX in the message, the traceback or the chain."""
    msg = str(err)
    assert "Traceback" not in msg and "JaxRuntimeError" not in msg and "jax" not in msg.lower(), msg
    assert not getattr(err, "__notes__", None)
    printed = "".join(traceback.format_exception(err))
    assert "site-packages/jax" not in printed and "JaxStackTraceBeforeTransformation" not in printed, printed
    assert "The above exception" not in printed or "CustomError" not in printed.split("The above exception")[0]
    cause = err.__cause__
    assert cause is None or not type(cause).__module__.startswith("jax"), type(cause)


def raises(what, mode, caplog):
    with caplog.at_level(logging.ERROR), pytest.raises(Exception) as info:
        run(what, mode)
    assert type(info.value) is CustomError, f"{type(info.value).__name__}: {info.value}"
    check_clean(info.value)
    assert not [r for r in caplog.records if "callback" in r.getMessage()], "JAX logged the failed callback"
    return str(info.value)


MODES = ["eager", "record", "hybrid", "hybrid-record"]
CALL = _line(call, "what()(x)")
CUSTOM_CALL = _line(call, 'op_type="ah_bad_"')


@pytest.mark.parametrize("mode", ["record", "hybrid-record"])
@pytest.mark.parametrize("fn", [TwoGrads, TwoGradsHostBackward, TwoGradsHostForward])
def test_backward_returning_the_wrong_number_of_gradients(fn, mode, caplog):
    msg = raises(fn, mode, caplog)
    assert f"{fn.__name__}.backward ({_line(fn.backward, 'two gradients')}; the Function called at {CALL})" in msg
    assert "returned 2 gradient(s); forward took 1 NDArray input(s)" in msg


@pytest.mark.parametrize("mode", ["eager", "hybrid"])
@pytest.mark.parametrize("fn", [TwoGrads, TwoGradsHostBackward, TwoGradsHostForward])
def test_a_bad_backward_is_not_run_without_backward(fn, mode):
    """Its backward runs only when backward() is called, as in MXNet."""
    np.testing.assert_allclose(run(fn, mode), np.full((2, 3), 2.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op_cls", [Doubles, DoublesHost, SlicesIn])
def test_forward_disagreeing_with_infer_shape(op_cls, mode, caplog):
    msg = raises(op_cls, mode, caplog)
    prop = PROPS[op_cls]
    assert f"{op_cls.__name__}.forward ({_line(op_cls.forward, 'the bad line')})" in msg
    assert f"{prop.__name__}.infer_shape ({_line(prop.infer_shape, 'def infer_shape')})" in msg
    assert f"Custom called at {CUSTOM_CALL}" in msg
    assert ("(2, 6)" if op_cls is not SlicesIn else "[2,6]") in msg and "(2, 3)" in msg


@pytest.mark.parametrize("mode", ["record", "hybrid-record"])
@pytest.mark.parametrize("op_cls", [BadGrad, BadGradHost])
def test_backward_disagreeing_with_the_input_shape(op_cls, mode, caplog):
    msg = raises(op_cls, mode, caplog)
    assert f"{op_cls.__name__}.backward ({_line(op_cls.backward, 'the bad line')})" in msg
    assert "in_grad[0]" in msg and "(2, 6)" in msg and f"Custom called at {CUSTOM_CALL}" in msg


@pytest.mark.parametrize("mode", MODES)
def test_op_type_never_registered(mode, caplog):
    msg = raises("ah_never_registered_anywhere", mode, caplog)
    assert "op_type='ah_never_registered_anywhere' is not registered" in msg
    assert f"Custom ({_line(call, 'op_type=what')})" in msg and "@mx.operator.register(" in msg


def test_an_error_of_a_previous_program_is_not_reported_again(caplog):
    """After a host callback's error is reported, the same block with good input runs, and an unrelated error
    is not mistaken for it."""
    with pytest.raises(CustomError):
        run(DoublesHost, "hybrid")
    assert errors._FAILED == {}
    np.testing.assert_allclose(run(BadGradHost, "hybrid"), np.full((2, 3), 2.0))


def test_custom_on_a_symbol_placeholder():
    """``mx.sym.Custom(mx.sym.var('data'), ...)`` (MXNet's symbolic API) builds a graph node
    (tests/mxnet/test_symbol_custom_oracle.py runs one against MXNet); ``nd.Custom`` given a placeholder is a
    clear error saying what to call instead (it was a TypeError from ``shape`` of the placeholder)."""
    from ast_hybrid import sym

    node = sym.Custom(sym.var("data"), op_type="ah_bad_Doubles")
    assert node.list_arguments() == ["data"] and len(node.list_outputs()) == 1
    with pytest.raises(CustomError) as info:
        nd.Custom(sym.var("data"), op_type="ah_bad_Doubles")    # the imperative call
    msg = str(info.value)
    assert f"Custom ({_line(test_custom_on_a_symbol_placeholder, 'the imperative call')})" in msg
    assert "sym.var placeholder" in msg and "mx.sym.Custom" in msg and "hybrid_forward" in msg


class PositiveOnlyOp(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        v = in_data[0].asnumpy()
        if (v < 0).any():
            raise ValueError("negative input")    # the failing line
        self.assign(out_data[0], req[0], nd.array(np.sqrt(v)))


_prop(PositiveOnlyOp)


def test_host_error_on_a_later_call_of_a_compiled_block(caplog):
    """The program is compiled by the first call; the second one (the fast path of a hybridized call)
    fails in its host callback: the user's error, as a CustomError naming its line, with nothing from JAX."""
    net = Net(PositiveOnlyOp)
    net.hybridize()
    np.testing.assert_allclose(net(nd.ones((2, 3)) * 4).asnumpy(), np.full((2, 3), 2.0))
    with caplog.at_level(logging.ERROR), pytest.raises(Exception) as info:
        net(-nd.ones((2, 3))).asnumpy()
    assert type(info.value) is CustomError
    check_clean(info.value)
    msg = str(info.value)
    assert f"PositiveOnlyOp.forward ({_line(PositiveOnlyOp.forward, 'the failing line')}) failed: ValueError: " \
           "negative input" in msg
    assert isinstance(info.value.__cause__, ValueError)      # the user's own error, kept as the cause
    assert not [r for r in caplog.records if "callback" in r.getMessage()]
