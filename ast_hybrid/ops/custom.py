"""MXNet's Python custom operators (``mx.operator``) and the lowering they share with
``autograd.Function``: the user's forward and backward become one ``jax.custom_vjp``.

A custom operator is used as in MXNet::

    @operator.register("scaled_sigmoid")
    class ScaledSigmoidProp(operator.CustomOpProp):
        def __init__(self, scale="1"):            # keyword arguments arrive as strings, as in MXNet
            super().__init__(need_top_grad=True)
            self.scale = float(scale)
        def create_operator(self, ctx, shapes, dtypes):
            return ScaledSigmoid(self.scale)

    y = F.Custom(x, op_type="scaled_sigmoid", scale=2)

``F.Custom`` (``nd.Custom``, ``sym.Custom``) makes the prop with the keyword arguments as strings, takes the
outputs' and aux states' shapes and dtypes from its ``infer_shape``/``infer_type``, and calls
``forward(is_train=, req=, in_data=, out_data=, aux=)`` with zero-filled output buffers (``req`` 'write');
``backward(req=, out_grad=, in_data=, out_data=, in_grad=, aux=)`` gets zero-filled ``in_grad`` buffers,
with ``req`` 'null' for an input that needs no gradient (recorded calls), else 'write' (a gradient
accumulated by ``grad_req='add'`` is added by the tape, so 'add' and 'write' give the same result).  What
the forward writes into ``aux`` is written back into the aux arrays given (inside a hybridized training
program: into the parameter passed, as BatchNorm's statistics).

How it runs: eagerly, the user's code runs on concrete NDArrays (``asnumpy()`` works).  On traced values
(inside a hybridized block, under ``jax.grad``/``jit`` through ``functional(net)``) a forward or backward
written with NDArray ops is traced into the compiled program; one that reads values on the host
(``asnumpy()``, ``asscalar()``, a Python ``if`` on a value) runs through ``jax.pure_callback`` with the
shapes the prop declared (an ``autograd.Function``, which declares none: the shapes of a trial run of its
forward on sample inputs, each real run checked against them), and a warning (once per op type) says that
the op leaves the compiled program.

Errors in the user's code, or against the protocol (an ``infer_shape`` that disagrees with what forward
assigns, a ``Function.backward`` that returns the wrong number of gradients, an ``op_type`` never
registered) are :class:`CustomError`, naming the class, the method and the user's file and line.  One raised
where JAX runs the user's code (a host callback inside a compiled program, a backward under ``jax.vjp``) comes
out of JAX wrapped (a ``JaxRuntimeError`` whose text holds a traceback, JAX's stack-trace cause); the places
where ast-hybrid runs compiled programs for the user (a hybridized block's call, ``backward()``) give it back
as it was raised, through :func:`clean_error`.

``autograd.Function`` (MXNet's custom gradients) is defined here too, on the same lowering.  The public
names are ``ast_hybrid.operator``'s (MXNet's ``mx.operator``) and ``ast_hybrid.autograd.Function``, which
re-export them.  Not MXNet API: :func:`call_function`.

May import: ``ast_hybrid.core`` and the ops (``_core.op``).

Over 600 lines: custom operators and ``autograd.Function`` share one lowering; splitting them is in
progress (issue 29).
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import textwrap
import threading
import warnings

import numpy as np

from ast_hybrid.core import autograd
from ast_hybrid.core.context import current_context
from ast_hybrid.core.errors import CustomError, clean_error, hold
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.core.trace import FRAMES

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom", "CustomError", "get_all_registered_operators",
           "Function"]

_REGISTRY: dict = {}     # op_type -> CustomOpProp subclass (MXNet's register() is a global registry too)
_WARNED: set = set()     # op types already warned about leaving the compiled program
_HOST: dict = {}         # (class, method) -> True once its code was found to read values on the host


class _Running(threading.local):
    """The custom-op methods running in this thread (innermost last): what assign() checks against."""

    def __init__(self):
        self.calls = []


_RUNNING = _Running()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # ast_hybrid/
# MXNet's dtype flags, as create_operator receives them
_FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5, "int64": 6, "bool": 7}


class _HostNeeded(Exception):
    """The user's code read a traced value on the host (internal: the caller switches to a host callback)."""


# --- where the user's code is --------------------------------------------------------------

def _code_of(fn):
    fn = getattr(fn, "__func__", fn)
    return getattr(inspect.unwrap(fn), "__code__", None)


def _site(fn):
    """``file:line`` of the definition of ``fn`` (a function or bound method)."""
    code = _code_of(fn)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"


def _name(obj, method):
    return f"{type(obj).__name__}.{method}"


def _return_site(fn):
    """``file:line`` of the one ``return`` statement of ``fn`` (outside functions nested in it), else of its
    definition.  Read from its source only when an error is reported."""
    code = _code_of(fn)
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return _site(fn)
    returns, todo = [], list(ast.iter_child_nodes(tree.body[0])) if tree.body else []
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            returns.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    if len(returns) != 1 or code is None:
        return _site(fn)
    return f"{code.co_filename}:{start + returns[0].lineno - 1}"


def _failing_site(exc, fn):
    """``file:line`` of the deepest frame of ``exc``'s traceback in ``fn``'s file, else ``fn``'s definition."""
    code = _code_of(fn)
    where, tb = None, exc.__traceback__
    while tb is not None:
        if code is not None and tb.tb_frame.f_code.co_filename == code.co_filename:
            where = f"{code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where or _site(fn)


def _host_read(exc):
    import jax

    return isinstance(exc, (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError))


def _call_user(obj, method, *args, traced=False, context="", **kwargs):
    """``obj.method(*args, **kwargs)`` with recording off; what fails is a :class:`CustomError` at the user's
    line (``context``: what to add to the message).  On traced values, reading one on the host is
    :class:`_HostNeeded`."""
    fn = getattr(obj, method)
    try:
        with autograd.mode_scope(False, None):
            return fn(*args, **kwargs)
    except (CustomError, _HostNeeded):
        raise
    except Exception as exc:
        if traced and _host_read(exc):
            raise _HostNeeded() from exc
        raise CustomError(f"{_name(obj, method)} ({_failing_site(exc, fn)}) failed: {type(exc).__name__}: "
                          f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}{context}") from _no_jax(exc)


def _no_jax(exc):
    """``exc`` with its traceback cut after the last frame outside jax (the user's code, or ours, is where it
    went wrong; JAX's internals below that are noise)."""
    last, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").partition(".")[0] not in ("jax", "jaxlib"):
            last = tb
        tb = tb.tb_next
    if last is not None:
        last.tb_next = None
    return exc


def _is_traced(arrays):
    import jax

    return any(isinstance(a, jax.core.Tracer) for a in arrays)


def _spec(shape, dtype):
    import jax

    return jax.ShapeDtypeStruct(tuple(int(d) for d in shape), np.dtype(dtype))


def _zero_cotangent(x):
    """The cotangent jax expects for an input that gets none: zeros, float0 for integers and booleans."""
    import jax
    import jax.numpy as jnp

    if np.dtype(x.dtype).kind in "iub":
        return np.zeros(np.shape(x), jax.dtypes.float0)
    return jnp.zeros(np.shape(x), x.dtype)


def _cotangent(x, g):
    """``g`` as the cotangent of input ``x`` (float0 for integer inputs)."""
    import jax.numpy as jnp

    if np.dtype(x.dtype).kind in "iub":
        return _zero_cotangent(x)
    return jnp.asarray(g, x.dtype).reshape(np.shape(x))


def _host(fn, specs, *arrays):
    """``fn(*arrays)`` (jax arrays in, a flat list of arrays out) on the host through ``jax.pure_callback``."""
    import jax
    import jax.numpy as jnp

    def on_host(*values):
        try:
            out = fn(*[jnp.asarray(v) for v in values])
            return [np.asarray(o, s.dtype).reshape(s.shape) for o, s in zip(out, specs)]
        except Exception as exc:        # given back by clean_error where the program was called
            raise hold(exc) from None

    return jax.pure_callback(on_host, list(specs), *arrays)


def _clean_call(fn, arrays):
    """``fn(*arrays)``; an error of the user's code comes out as it was raised (:func:`clean_error`)."""
    try:
        return fn(*arrays)
    except Exception as exc:
        err = clean_error(exc)
        if err is None:
            raise
        raise err from err.__cause__


def _user_frame():
    """The innermost frame outside ast-hybrid and jax (the user's call), and how many frames up it is."""
    frame, level = sys._getframe(2), 2
    while frame is not None and (os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE)
                                 or frame.f_globals.get("__name__", "").partition(".")[0] in ("jax", "jaxlib")):
        frame, level = frame.f_back, level + 1
    return frame, level


def _caller_site():
    """``file:line`` of the user's call (the innermost frame outside ast-hybrid and jax)."""
    frame, _ = _user_frame()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


def _note_host(key, who, what):
    """Warn (once per ``key``) that ``who``'s ``what`` leaves the compiled program; at the user's line."""
    if key not in _WARNED:
        _WARNED.add(key)
        frame, level = _user_frame()
        warnings.warn(f"{who}: {what} reads values on the host (asnumpy() or similar): it runs through "
                      "jax.pure_callback and leaves the compiled program (slower; no XLA fusion across it)",
                      stacklevel=level if frame is not None else 2)


# --- state the user's object keeps from forward to backward ----------------------------------

def _stash(obj):
    """The arrays ``obj`` holds after its forward (``saved_tensors``, ``self.y = ...``): (layout, arrays)."""
    layout, arrays = [], []
    for k, v in vars(obj).items():
        if v.__class__ is NDArray:
            layout.append((k, None, 1))
            arrays.append(v._arr)
        elif isinstance(v, (list, tuple)) and v and all(x.__class__ is NDArray for x in v):
            layout.append((k, type(v), len(v)))
            arrays.extend(x._arr for x in v)
    return layout, arrays


def _unstash(obj, layout, arrays):
    """Put the residual ``arrays`` back on ``obj`` where :func:`_stash` found them."""
    i = 0
    for k, kind, n in layout:
        vals = [NDArray(a) for a in arrays[i:i + n]]
        i += n
        object.__setattr__(obj, k, vals[0] if kind is None else kind(vals))


# --- autograd.Function ---------------------------------------------------------------------

class Function:
    """Customize differentiation (MXNet's ``autograd.Function``): subclass it with ``forward(self, *inputs)``
    and ``backward(self, *output_grads)`` (one NDArray per input of forward), keep what backward needs with
    ``self.save_for_backward(*arrays)`` (read back as ``self.saved_tensors``), and call an instance once.

    As in MXNet, ``forward`` runs with recording off and its result is returned as it returned it; while
    recording, the call goes on the tape with the user's ``backward`` as its gradient.  The two are one
    ``jax.custom_vjp`` (this module), so inside a hybridized block and under ``jax.grad`` through
    ``functional(net)`` both are traced into the compiled program (a forward or backward that calls
    ``asnumpy()`` runs on the host through ``jax.pure_callback``, forward's output shapes taken from a trial
    run).  (MXNet 1.9.1 itself cannot hybridize a block that calls a
    Function.)

        >>> from ast_hybrid import nd, autograd
        >>> class Reverse(autograd.Function):
        ...     def forward(self, x):
        ...         return x * 1
        ...     def backward(self, dy):
        ...         return -dy
        >>> x = nd.array([1., 2.]); x.attach_grad()
        >>> with autograd.record():
        ...     y = Reverse()(x * 2)
        >>> y.backward(); x.grad.asnumpy().tolist()
        [-2.0, -2.0]
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        return call_function(self, inputs)

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError


def call_function(fn_obj, inputs):
    """``Function.__call__``: MXNet's protocol (module doc of ``ast_hybrid.autograd``), lowered to
    ``jax.custom_vjp`` when a gradient may be taken (recording, or traced values)."""
    from ast_hybrid.ops._core import op

    assert not fn_obj._used, "Each Function instance can only be called once. Please create another instance."
    fn_obj._used = True
    arrays = [x._arr for x in inputs if x.__class__ is NDArray]
    traced = _is_traced(arrays)
    tracked = any(x._ag is not None for x in inputs if x.__class__ is NDArray)
    if not traced and not (autograd.is_recording() and tracked):
        return _function_outputs(fn_obj, _call_user(fn_obj, "forward", *inputs))
    shape = []       # how forward returned its outputs: NDArray, tuple or list (filled by the first run)
    lowered = _lower_function(fn_obj, inputs, shape, traced, _caller_site())
    arrays = [x for x in inputs if x.__class__ is NDArray]
    result = _clean_call(op(lowered, name=type(fn_obj).__name__) if traced else _recorded(lowered), arrays)
    result = result if isinstance(result, list) else [result]
    kind = shape[0]
    return result[0] if kind is None else kind(result)


def _recorded(lowered):
    """``*NDArrays -> outputs`` for a recorded op-by-op call of ``lowered`` (a ``jax.custom_vjp``): the user's
    forward runs once, now, and the tape's node returns its outputs and residuals when ``backward()`` replays
    the graph under ``jax.vjp`` instead of running it again (MXNet calls forward once per call)."""
    import jax

    def call(*inputs):
        outs, res = lowered.fwd(*[x._arr for x in inputs])

        @jax.custom_vjp
        def replay(*arrays):
            return outs

        replay.defvjp(lambda *arrays: (outs, res), lowered.bwd)
        return autograd.record_op(replay, inputs, {}, result=outs)

    return call


def _function_outputs(fn_obj, outputs):
    """Check what ``forward`` returned (an NDArray, or a tuple/list of them) and return it."""
    items = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    for o in items:
        if o.__class__ is not NDArray:
            raise CustomError(f"{_name(fn_obj, 'forward')} ({_site(fn_obj.forward)}) returned a "
                              f"{type(o).__name__}; autograd.Function.forward must return NDArrays")
    return outputs


def _lower_function(fn_obj, inputs, shape, traced, site):
    """``raw arrays -> tuple of raw outputs``, a ``jax.custom_vjp`` whose backward is the user's."""
    import jax

    positions = [i for i, x in enumerate(inputs) if x.__class__ is NDArray]
    state = {}

    fwd_key = (type(fn_obj), "forward")

    def run(arrays, traced=False):
        """The user's forward on ``arrays``: (outputs, layout of the saved arrays, saved arrays)."""
        args = list(inputs)
        for i, a in zip(positions, arrays):
            args[i] = NDArray(a)
        out = _function_outputs(fn_obj, _call_user(fn_obj, "forward", *args, traced=traced))
        if not shape:
            shape.append(None if out.__class__ is NDArray else type(out))
        outs = (out,) if out.__class__ is NDArray else tuple(out)
        return (tuple(o._arr for o in outs), *_stash(fn_obj))

    def forward(*arrays):
        if _is_traced(arrays) and not _HOST.get(fwd_key):
            try:
                return run(arrays, traced=True)
            except _HostNeeded:
                _HOST[fwd_key] = True
        if _is_traced(arrays):
            return _function_on_host(fn_obj, run, arrays)
        return run(arrays)

    @jax.custom_vjp
    def lowered(*arrays):
        return forward(*arrays)[0]

    def fwd(*arrays):
        outs, layout, saved = forward(*arrays)
        state["layout"], state["outs"] = layout, [_spec(o.shape, o.dtype) for o in outs]
        return outs, (tuple(arrays), tuple(saved))

    def bwd(res, cts):
        arrays, saved = res
        specs = [_spec(np.shape(a), a.dtype) for a in arrays]
        run = _function_backward(fn_obj, state["layout"], len(saved), specs, site)
        key = (type(fn_obj), "backward")
        grads = None
        if _is_traced(list(saved) + list(cts)) and not _HOST.get(key):
            try:
                grads = run(*saved, *cts, traced=True)
            except _HostNeeded:
                _HOST[key] = True
        if grads is None:
            if _is_traced(list(saved) + list(cts)):
                _note_host(key, type(fn_obj).__name__, "backward")
                grads = _host(run, specs, *saved, *cts)
            else:
                grads = run(*saved, *cts)
        return tuple(_cotangent(a, g) for a, g in zip(arrays, grads))

    lowered.defvjp(fwd, bwd)
    return lowered


def _function_on_host(fn_obj, run, arrays):
    """``run`` (a Function's forward, :func:`_lower_function`) on traced ``arrays`` through
    ``jax.pure_callback``.  A Function declares no output shapes: they, and those of the arrays it keeps for
    backward, are taken from a trial run on sample values of the inputs' shapes; each real run is checked
    against them (outputs whose shapes depend on the values cannot be in a compiled program)."""
    import jax

    who = _name(fn_obj, "forward")
    with np.errstate(all="ignore"), jax.ensure_compile_time_eval():     # eagerly, inside the trace
        try:
            outs, layout, saved = run([_sample(a) for a in arrays])
        except CustomError as exc:
            raise CustomError(
                f"{who} ({_site(fn_obj.forward)}), called at {_caller_site()}, reads a traced value on the host "
                "(asnumpy() or similar) inside a compiled program; to run it on the host, its output shapes were "
                f"sought by a trial run on sample inputs, which failed: {exc}.  Write its forward with NDArray ops "
                "(its backward may use asnumpy), or call the block without hybridize()") from None
    trial = [_spec(np.shape(a), a.dtype) for a in (*outs, *saved)]
    n_out = len(outs)

    def on_host(*values):
        got_outs, got_layout, got_saved = run(values)
        got = [_spec(np.shape(a), a.dtype) for a in (*got_outs, *got_saved)]
        if got != trial or got_layout != layout:
            raise CustomError(f"{who} ({_site(fn_obj.forward)}) gave outputs and saved arrays of shapes "
                              f"{[g.shape for g in got]} here, {[t.shape for t in trial]} in its trial run on "
                              "sample inputs: inside a compiled program their shapes must not depend on the "
                              "values; call the block without hybridize()")
        return [*got_outs, *got_saved]

    _note_host((type(fn_obj), "forward"), type(fn_obj).__name__, "forward")
    result = _host(on_host, trial, *arrays)
    return tuple(result[:n_out]), layout, list(result[n_out:])


def _sample(a):
    """A host array of ``a``'s shape and dtype for a trial run: values in [0.5, 1.5) (no zero, no negative),
    ones for integers and booleans."""
    import jax.numpy as jnp

    shape, dtype = tuple(np.shape(a)), np.dtype(a.dtype)
    if dtype.kind in "fc":
        return jnp.asarray(np.random.default_rng(0).uniform(0.5, 1.5, shape).astype(dtype))
    return jnp.ones(shape, dtype)


def _function_backward(fn_obj, layout, n_saved, specs, site):
    """``(*saved, *output grads) -> input grads``: the user's backward on NDArrays, its result checked (an error
    names the return statement and ``site``, where the Function was called)."""

    def where():
        return f"{_name(fn_obj, 'backward')} ({_return_site(fn_obj.backward)}; the Function called at {site})"

    def run(*values, traced=False):
        _unstash(fn_obj, layout, values[:n_saved])
        rets = _call_user(fn_obj, "backward", *[NDArray(g) for g in values[n_saved:]], traced=traced)
        rets = (rets,) if rets.__class__ is NDArray else rets
        if not isinstance(rets, (list, tuple)) or len(rets) != len(specs):
            got = len(rets) if isinstance(rets, (list, tuple)) else type(rets).__name__
            raise CustomError(f"{where()} returned {got} gradient(s); forward took {len(specs)} NDArray input(s): "
                              "backward must return exactly one NDArray per input of forward")
        for i, (r, s) in enumerate(zip(rets, specs)):
            if r.__class__ is not NDArray:
                raise CustomError(f"{where()} returned a {type(r).__name__} as gradient {i}: autograd.Function."
                                  "backward must return NDArrays")
            if tuple(r.shape) != tuple(s.shape):
                raise CustomError(f"{where()} returned a gradient of shape {tuple(r.shape)} for input {i} of "
                                  f"shape {tuple(s.shape)}")
        return [r._arr for r in rets]

    return run


# --- custom operators ----------------------------------------------------------------------

class CustomOp:
    """Base class for operators implemented in Python (MXNet's ``mx.operator.CustomOp``)."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Write the outputs into ``out_data`` (``self.assign(out_data[i], req[i], value)``)."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Write the inputs' gradients into ``in_grad``."""

    def assign(self, dst, req, src):
        """``dst[:] = src`` ('write', 'inplace'), ``dst[:] += src`` ('add'), nothing ('null')."""
        if req == "null":
            return
        if req not in ("write", "inplace", "add"):
            raise CustomError(f"{type(self).__name__}.assign: unknown req {req!r}; expected 'null', 'write', "
                              "'inplace' or 'add'")
        _check_assign(self, dst, src)
        if req == "add":
            dst[:] += src
        else:
            dst[:] = src


def _check_assign(op, dst, src):
    """An array whose shape cannot fill ``dst`` (as MXNet, a broadcastable one can): the error names the
    prop's declaration and the user's line."""
    shape = tuple(getattr(src, "shape", ()))
    target = tuple(dst.shape)
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
    ok = len(shape) <= len(target) and all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))
    if ok or not _RUNNING.calls:
        return
    call = _RUNNING.calls[-1]
    role = call["roles"].get(id(dst), "an array")
    frame = sys._getframe(2)
    declared = ""
    if role.startswith("out_data") or role.startswith("aux"):
        declared = (f", whose shape {target} {type(call['prop']).__name__}.infer_shape "
                    f"({_site(call['prop'].infer_shape)}) declared")
    elif role.startswith("in_grad"):
        declared = ", the shape of the input"
    raise CustomError(f"{_name(op, call['method'])} ({frame.f_code.co_filename}:{frame.f_lineno}) assigns an "
                      f"array of shape {tuple(getattr(src, 'shape', ()))} to {role}{declared}: make infer_shape "
                      f"and {call['method']} agree (Custom called at {call['site']})")


class CustomOpProp:
    """Base class for a custom operator's properties (MXNet's ``mx.operator.CustomOpProp``)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        return in_type, [in_type[0]] * len(self.list_outputs()), [in_type[0]] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stype):
        return in_stype, ["default"] * len(self.list_outputs()), ["default"] * len(self.list_auxiliary_states())

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CustomOp()


def register(reg_name):
    """``@register('name')`` on a ``CustomOpProp`` subclass: ``F.Custom(..., op_type='name')`` uses it."""
    def do_register(prop_cls):
        _REGISTRY[reg_name] = prop_cls
        return prop_cls
    return do_register


register("custom_op")(CustomOpProp)


def get_all_registered_operators():
    """The registered custom op types (MXNet lists its built-in operators too)."""
    return sorted(_REGISTRY)


def _three(prop, method, ret, counts):
    """A prop's (inputs, outputs, aux) answer checked against its list_* counts."""
    where = f"{_name(prop, method)} ({_site(getattr(prop, method))})"
    if not isinstance(ret, (list, tuple)) or len(ret) not in (2, 3):
        raise CustomError(f"{where} must return 2 or 3 lists (inputs, outputs[, aux]), got {ret!r}")
    ret = list(ret) + [[]] * (3 - len(ret))
    for got, n, what in zip(ret, counts, ("input", "output", "aux state")):
        if len(got) != n:
            raise CustomError(f"{where} returned {len(got)} {what} entries; list_{what.split()[0]}"
                              f"{'s' if what != 'aux state' else ''} declares {n}")
    return ret


def Custom(*data, op_type=None, **kwargs):
    """MXNet's ``Custom`` operator: run the ``CustomOpProp`` registered as ``op_type`` on ``data`` (the
    arguments, then the aux states); the prop gets the other keyword arguments as strings."""
    from ast_hybrid.ops._core import op

    for k in ("name", "attr", "out"):
        kwargs.pop(k, None)
    if op_type not in _REGISTRY:
        raise CustomError(f"Custom ({_caller_site()}): op_type={op_type!r} is not registered; registered: "
                          f"{', '.join(map(repr, sorted(_REGISTRY)))}.  Decorate its CustomOpProp subclass with "
                          f"@mx.operator.register({op_type!r}) and import that module first")
    prop_cls = _REGISTRY[op_type]
    try:
        prop = prop_cls(**{k: str(v) for k, v in kwargs.items()})
    except TypeError as exc:
        raise CustomError(f"{prop_cls.__name__}.__init__ ({_site(prop_cls.__init__)}): {exc} (Custom passes "
                          f"op_type={op_type!r}'s keyword arguments {sorted(kwargs)} as strings)") from exc
    if any(type(x).__name__ == "Symbol" for x in data):
        raise CustomError(f"Custom ({_caller_site()}): op_type={op_type!r} was given a sym.var placeholder; "
                          "ast-hybrid's graphs do not run custom ops built outside a block: call "
                          "F.Custom inside a HybridBlock's hybrid_forward and hybridize() it, or nd.Custom on arrays")
    names = [_call_user(prop, m) for m in ("list_arguments", "list_outputs", "list_auxiliary_states")]
    n_in, n_out, n_aux = map(len, names)
    data = [x if x.__class__ is NDArray else NDArray(x) for x in data]
    if len(data) != n_in + n_aux:
        raise CustomError(f"Custom ({_caller_site()}): op_type={op_type!r} takes {n_in} argument(s) {names[0]} and "
                          f"{n_aux} aux state(s) {names[2]} ({type(prop).__name__}.list_arguments, "
                          f"list_auxiliary_states), given {len(data)} array(s)")
    in_shapes = [[int(d) for d in x.shape] for x in data[:n_in]]
    counts = (n_in, n_out, n_aux)
    _, out_shapes, aux_shapes = _three(prop, "infer_shape", _call_user(prop, "infer_shape", in_shapes), counts)
    in_types = [np.dtype(x.dtype).type for x in data[:n_in]]
    _, out_types, aux_types = _three(prop, "infer_type", _call_user(prop, "infer_type", in_types), counts)
    out_specs = [_spec(s, t) for s, t in zip(out_shapes, out_types)]
    aux_specs = [_spec(s, t) for s, t in zip(aux_shapes, aux_types)]
    for x, s, name in zip(data[n_in:], aux_specs, names[2]):
        if tuple(x.shape) != s.shape:
            raise CustomError(f"Custom ({_caller_site()}): aux state {name!r} has shape {tuple(x.shape)}; "
                              f"{type(prop).__name__}.infer_shape ({_site(prop.infer_shape)}) declared {s.shape}")
    flags = [_FLAGS.get(np.dtype(t).name, -1) for t in in_types]
    operator = _call_user(prop, "create_operator", current_context(), in_shapes, flags)
    # which inputs get a gradient (req 'null' for the others, as MXNet): known op by op from the tape; in a
    # traced program a value made by traced control flow carries no mark, so every input gets 'write' there
    # (jax drops the gradients nothing needs)
    traced = _is_traced([x._arr for x in data])
    needs = None
    if autograd.is_recording() and not traced:
        needs = tuple(x._ag is not None for x in data[:n_in])
    lowered = _lower_custom(op_type, prop, operator, n_in, out_specs, autograd.is_training(), needs, traced,
                            _caller_site())
    recorded = needs is not None and any(needs)
    result = _clean_call(_recorded(lowered) if recorded else op(lowered, name="Custom"), data)
    result = result if isinstance(result, list) else [result]
    outs, new_aux = result[:n_out], result[n_out:]
    for x, new in zip(data[n_in:], new_aux):
        _write_aux(x, new)
    return outs[0] if n_out == 1 else outs


def _write_aux(x, new):
    """MXNet's forward writes its aux states in place: into the array given and, when that is a parameter's
    (inside a hybridized trace: the value bound to it; in a non-hybridized forward: the array hybrid_forward
    got for it), into the parameter."""
    traces, imperative = FRAMES.traces, FRAMES.imperative
    if traces:
        trace = traces[-1]
        for p in trace.params:
            if trace.writes.get(p, trace.values.get(p)) is x._arr:
                trace.write(p, new._arr)
                break
    elif imperative and None not in imperative:
        param = next((reg[k] for given, reg in reversed(imperative)
                      for k, v in given.items() if v is x), None)
        if param is not None:
            param.set_data(new._arr)
    x._arr = new._arr


def _lower_custom(op_type, prop, operator, n_in, out_specs, is_train, needs, traced, site):
    """``(*inputs, *aux) -> (*outputs, *new aux)``: a ``jax.custom_vjp`` over the operator's forward and
    backward, traced or (for code that reads values on the host) through ``jax.pure_callback``."""
    import jax

    fwd_key, bwd_key = (type(operator), "forward"), (type(operator), "backward")

    def run_forward(*arrays, traced=False):
        ins = [NDArray(a) for a in arrays[:n_in]]
        aux = [NDArray(a) for a in arrays[n_in:]]
        outs = [NDArray(jax.numpy.zeros(s.shape, s.dtype)) for s in out_specs]
        roles = {id(o): f"out_data[{i}]" for i, o in enumerate(outs)}
        roles.update({id(a): f"aux[{i}]" for i, a in enumerate(aux)})
        _RUNNING.calls.append({"method": "forward", "prop": prop, "roles": roles, "site": site})
        try:
            _call_user(operator, "forward", traced=traced, context=_declared(prop, out_specs, site),
                       is_train=int(is_train), req=["write"] * len(outs), in_data=ins, out_data=outs, aux=aux)
        finally:
            _RUNNING.calls.pop()
        for i, (o, s) in enumerate(zip(outs, out_specs)):
            if tuple(o.shape) != s.shape:
                raise CustomError(f"{_name(operator, 'forward')} ({_site(operator.forward)}) left out_data[{i}] "
                                  f"with shape {tuple(o.shape)}{_declared(prop, out_specs, site)}")
        return [o._arr.astype(s.dtype) for o, s in zip(outs, out_specs)] + [a._arr for a in aux]

    def run_backward(*values, traced=False):
        ins, outs = values[:n_in], values[n_in:n_in + len(out_specs)]
        rest = values[n_in + len(out_specs):]
        n_aux = len(rest) - len(out_specs)
        aux, cts = rest[:n_aux], rest[n_aux:]
        grads = [NDArray(jax.numpy.zeros(np.shape(a), a.dtype)) for a in ins]
        req = ["write" if needs is None or n else "null" for n in (needs or [True] * n_in)]
        roles = {id(g): f"in_grad[{i}]" for i, g in enumerate(grads)}
        _RUNNING.calls.append({"method": "backward", "prop": prop, "roles": roles, "site": site})
        try:
            _call_user(operator, "backward", traced=traced, req=req, out_grad=[NDArray(c) for c in cts],
                       in_data=[NDArray(a) for a in ins], out_data=[NDArray(o) for o in outs],
                       in_grad=grads, aux=[NDArray(a) for a in aux])
        finally:
            _RUNNING.calls.pop()
        return [g._arr for g in grads]

    def forward(*arrays):
        if _is_traced(arrays):
            if not _HOST.get(fwd_key):
                try:
                    return tuple(run_forward(*arrays, traced=True))
                except _HostNeeded:
                    _HOST[fwd_key] = True
            _note_host(("forward", op_type), f"Custom op {op_type!r} ({type(operator).__name__})", "its forward")
            specs = out_specs + [_spec(np.shape(a), a.dtype) for a in arrays[n_in:]]
            return tuple(_host(run_forward, specs, *arrays))
        return tuple(run_forward(*arrays))

    @jax.custom_vjp
    def lowered(*arrays):
        return forward(*arrays)

    def fwd(*arrays):
        out = forward(*arrays)
        return out, (tuple(arrays[:n_in]), out)

    def bwd(res, cts):
        ins, out = res
        outs, aux = out[:len(out_specs)], out[len(out_specs):]
        values = (*ins, *outs, *aux, *cts[:len(out_specs)])
        grads = None
        if _is_traced(values) and not _HOST.get(bwd_key):
            try:
                grads = run_backward(*values, traced=True)
            except _HostNeeded:
                _HOST[bwd_key] = True
        if grads is None:
            if _is_traced(values):
                _note_host(("backward", op_type), f"Custom op {op_type!r} ({type(operator).__name__})",
                           "its backward")
                grads = _host(run_backward, [_spec(np.shape(a), a.dtype) for a in ins], *values)
            else:
                grads = run_backward(*values)
        return tuple(_cotangent(a, g) for a, g in zip(ins, grads)) + tuple(_zero_cotangent(a) for a in aux)

    lowered.defvjp(fwd, bwd)
    return lowered


def _declared(prop, out_specs, site):
    return (f" (out_data shapes {[s.shape for s in out_specs]} as {type(prop).__name__}.infer_shape "
            f"({_site(prop.infer_shape)}) declared them; Custom called at {site})")
