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

``autograd.Function`` (MXNet's custom gradients) runs the same way (``ops/function.py``); the pieces both
lowerings share are in ``ops/custom_lowering.py``.  The public names are ``ast_hybrid.operator``'s (MXNet's
``mx.operator``) and ``ast_hybrid.autograd.Function``, which re-export them.

May import: ``ast_hybrid.core`` and the ops (``_core.op``).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ast_hybrid.core import autograd
from ast_hybrid.core.context import current_context
from ast_hybrid.core.errors import CustomError
from ast_hybrid.core.ndarray import ARRAYS, NDArray
from ast_hybrid.core.trace import FRAMES
from ast_hybrid.ops import deferred
from ast_hybrid.ops.custom_lowering import (ON_HOST, HostNeeded, array_spec, call_user, caller_site, clean_call,
                                            cotangent, definition_site, host_call, is_traced, method_name,
                                            note_host, recorded_call, zero_cotangent)
from ast_hybrid.ops.function import Function, call_function  # noqa: F401  (re-exported: their old home)

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom", "CustomError", "get_all_registered_operators",
           "Function"]

_REGISTRY: dict = {}     # op_type -> CustomOpProp subclass (MXNet's register() is a global registry too)


class _Running(threading.local):
    """The custom-op methods running in this thread (innermost last): what assign() checks against."""

    def __init__(self):
        self.calls = []


_RUNNING = _Running()
# MXNet's dtype flags, as create_operator receives them
_FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5, "int64": 6, "bool": 7}


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
                    f"({definition_site(call['prop'].infer_shape)}) declared")
    elif role.startswith("in_grad"):
        declared = ", the shape of the input"
    raise CustomError(f"{method_name(op, call['method'])} ({frame.f_code.co_filename}:{frame.f_lineno}) assigns an "
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
    where = f"{method_name(prop, method)} ({definition_site(getattr(prop, method))})"
    if not isinstance(ret, (list, tuple)) or len(ret) not in (2, 3):
        raise CustomError(f"{where} must return 2 or 3 lists (inputs, outputs[, aux]), got {ret!r}")
    ret = list(ret) + [[]] * (3 - len(ret))
    for got, n, what in zip(ret, counts, ("input", "output", "aux state")):
        if len(got) != n:
            raise CustomError(f"{where} returned {len(got)} {what} entries; list_{what.split()[0]}"
                              f"{'s' if what != 'aux state' else ''} declares {n}")
    return ret


def _is_input(v):
    return v.__class__ in ARRAYS or type(v).__name__ == "Symbol" or hasattr(v, "__jax_array__") or \
        type(v).__module__.startswith("jax")


def make_prop(op_type, kwargs):
    """The ``CustomOpProp`` registered as ``op_type``, made with ``kwargs`` as strings (MXNet's)."""
    if op_type not in _REGISTRY:
        raise CustomError(f"Custom ({caller_site()}): op_type={op_type!r} is not registered; registered: "
                          f"{', '.join(map(repr, sorted(_REGISTRY)))}.  Decorate its CustomOpProp subclass with "
                          f"@mx.operator.register({op_type!r}) and import that module first")
    prop_cls = _REGISTRY[op_type]
    try:
        return prop_cls(**{k: str(v) for k, v in kwargs.items()})
    except TypeError as exc:
        raise CustomError(f"{prop_cls.__name__}.__init__ ({definition_site(prop_cls.__init__)}): {exc} (Custom passes "
                          f"op_type={op_type!r}'s keyword arguments {sorted(kwargs)} as strings)") from exc


def prop_names(prop):
    """``[arguments, outputs, auxiliary states]``: the names the prop lists."""
    return [call_user(prop, m) for m in ("list_arguments", "list_outputs", "list_auxiliary_states")]


def inputs_by_name(names, data, given, op_type, missing=None):
    """``data`` (by position) then the inputs ``given`` by name, in the prop's order (``names``: its arguments,
    outputs and aux states); one not given is ``missing(name)`` (None: left out); a name the prop does not
    list is an error."""
    unknown = sorted(set(given) - set(names[0]) - set(names[2]))
    if unknown:
        raise CustomError(f"Custom ({caller_site()}): op_type={op_type!r} has no input {unknown[0]!r} (its "
                          f"arguments {names[0]}, aux states {names[2]})")
    out = list(data)
    for n in (names[0] + names[2])[len(data):]:
        if n in given:
            out.append(given[n])
        elif missing is not None:
            out.append(missing(n))
    return out


def Custom(*data, op_type=None, **kwargs):
    """MXNet's ``Custom`` operator: run the ``CustomOpProp`` registered as ``op_type`` on ``data`` (the
    arguments, then the aux states); the prop gets the other keyword arguments as strings."""
    from ast_hybrid.ops._core import op

    for k in ("name", "attr", "out"):
        kwargs.pop(k, None)
    given = {k: kwargs.pop(k) for k in list(kwargs) if _is_input(kwargs[k])}     # inputs by name: data=x
    prop = make_prop(op_type, kwargs)
    names = prop_names(prop)
    if given:
        data = inputs_by_name(names, data, given, op_type)
    if any(type(x).__name__ == "Symbol" for x in data):
        raise CustomError(f"Custom ({caller_site()}): op_type={op_type!r} was given a sym.var placeholder "
                          "through nd: call mx.sym.Custom to build a graph node, F.Custom inside a HybridBlock's "
                          "hybrid_forward, or nd.Custom on arrays")
    n_in, n_out, n_aux = map(len, names)
    counts = (n_in, n_out, n_aux)
    if len(data) != n_in + n_aux:
        raise CustomError(f"Custom ({caller_site()}): op_type={op_type!r} takes {n_in} argument(s) {names[0]} and "
                          f"{n_aux} aux state(s) {names[2]} ({type(prop).__name__}.list_arguments, "
                          f"list_auxiliary_states), given {len(data)} array(s)")
    if any(deferred.is_standin(x) for x in data[n_in:]):    # aux states of unknown shape: the prop's infer_shape
        known = [[int(d) for d in x.shape] for x in data[:n_in]]
        _, _, aux_shapes = _three(prop, "infer_shape", call_user(prop, "infer_shape", known), counts)
        data = deferred.filled(data, {n_in + i: s for i, s in enumerate(aux_shapes)})
    data = [x if x.__class__ in ARRAYS else NDArray(x) for x in data]
    in_shapes = [[int(d) for d in x.shape] for x in data[:n_in]]
    _, out_shapes, aux_shapes = _three(prop, "infer_shape", call_user(prop, "infer_shape", in_shapes), counts)
    in_types = [np.dtype(x.dtype).type for x in data[:n_in]]
    _, out_types, aux_types = _three(prop, "infer_type", call_user(prop, "infer_type", in_types), counts)
    out_specs = [array_spec(s, t) for s, t in zip(out_shapes, out_types)]
    aux_specs = [array_spec(s, t) for s, t in zip(aux_shapes, aux_types)]
    for x, s, name in zip(data[n_in:], aux_specs, names[2]):
        if tuple(x.shape) != s.shape:
            raise CustomError(f"Custom ({caller_site()}): aux state {name!r} has shape {tuple(x.shape)}; "
                              f"{type(prop).__name__}.infer_shape ({definition_site(prop.infer_shape)}) declared "
                              f"{s.shape}")
    flags = [_FLAGS.get(np.dtype(t).name, -1) for t in in_types]
    operator = call_user(prop, "create_operator", current_context(), in_shapes, flags)
    # which inputs get a gradient (req 'null' for the others, as MXNet): known op by op from the tape; in a
    # traced program a value made by traced control flow carries no mark, so every input gets 'write' there
    # (jax drops the gradients nothing needs)
    traced = is_traced([x._arr for x in data])
    needs = None
    if autograd.is_recording() and not traced:
        needs = tuple(x._ag is not None for x in data[:n_in])
    lowered = _lower_custom(op_type, prop, operator, n_in, out_specs, autograd.is_training(), needs, traced,
                            caller_site())
    recorded = needs is not None and any(needs)
    result = clean_call(recorded_call(lowered) if recorded else op(lowered, name="Custom"), data)
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
            call_user(operator, "forward", traced=traced, context=_declared(prop, out_specs, site),
                       is_train=int(is_train), req=["write"] * len(outs), in_data=ins, out_data=outs, aux=aux)
        finally:
            _RUNNING.calls.pop()
        for i, (o, s) in enumerate(zip(outs, out_specs)):
            if tuple(o.shape) != s.shape:
                raise CustomError(f"{method_name(operator, 'forward')} ({definition_site(operator.forward)}) left "
                                  f"out_data[{i}] with shape {tuple(o.shape)}{_declared(prop, out_specs, site)}")
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
            call_user(operator, "backward", traced=traced, req=req, out_grad=[NDArray(c) for c in cts],
                       in_data=[NDArray(a) for a in ins], out_data=[NDArray(o) for o in outs],
                       in_grad=grads, aux=[NDArray(a) for a in aux])
        finally:
            _RUNNING.calls.pop()
        return [g._arr for g in grads]

    def forward(*arrays):
        if is_traced(arrays):
            if not ON_HOST.get(fwd_key):
                try:
                    return tuple(run_forward(*arrays, traced=True))
                except HostNeeded:
                    ON_HOST[fwd_key] = True
            note_host(("forward", op_type), f"Custom op {op_type!r} ({type(operator).__name__})", "its forward")
            specs = out_specs + [array_spec(np.shape(a), a.dtype) for a in arrays[n_in:]]
            return tuple(host_call(run_forward, specs, *arrays))
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
        if is_traced(values) and not ON_HOST.get(bwd_key):
            try:
                grads = run_backward(*values, traced=True)
            except HostNeeded:
                ON_HOST[bwd_key] = True
        if grads is None:
            if is_traced(values):
                note_host(("backward", op_type), f"Custom op {op_type!r} ({type(operator).__name__})",
                           "its backward")
                grads = host_call(run_backward, [array_spec(np.shape(a), a.dtype) for a in ins], *values)
            else:
                grads = run_backward(*values)
        return tuple(cotangent(a, g) for a, g in zip(ins, grads)) + tuple(zero_cotangent(a) for a in aux)

    lowered.defvjp(fwd, bwd)
    return lowered


def _declared(prop, out_specs, site):
    return (f" (out_data shapes {[s.shape for s in out_specs]} as {type(prop).__name__}.infer_shape "
            f"({definition_site(prop.infer_shape)}) declared them; Custom called at {site})")
