"""MXNet's executors: ``Symbol.bind``/``simple_bind`` and ``Executor`` (MXNet 1.9.1's ``python/mxnet/executor.py``
and ``symbol.py``'s binding), as MXNet's own unit tests, ``mxnet.test_utils``' symbolic checks and users'
pre-Gluon scripts drive them::

    exe = (2 * a + b).bind(mx.cpu(), {'a': nd.array([1, 2]), 'b': nd.array([2, 3])},
                           args_grad={'a': nd.zeros(2), 'b': nd.zeros(2)})
    exe.forward(is_train=True)              # [<NDArray 2 @cpu(0)>]: [4. 7.]
    exe.backward(exe.outputs[0])            # exe.grad_dict['a']: [8. 14.]

How it runs: the executor holds MXNet's arrays, bound by the caller (``bind``, the very NDArrays given: a
write into one is what the next ``forward`` reads) or allocated from the shapes given (``simple_bind``: zeros,
their shapes and types inferred from the graph).  ``forward`` replays the graph (``graph.evaluate``) on them,
recorded by autograd where an argument wants a gradient (in training mode when ``is_train``: dropout draws,
BatchNorm uses the batch's statistics and writes its moving ones into the bound auxiliary states, as MXNet's).
``backward`` takes the recorded outputs' gradients (``out_grads``; ones where none is given: MXNet's loss
operators, ``SoftmaxOutput``, ``make_loss``..., ignore theirs) and writes each argument's by its ``grad_req``:
``write`` replaces the bound gradient array's value, ``add`` adds to it, ``null`` leaves it.  ``outputs``
keep their NDArrays from one ``forward`` to the next (their values change, as MXNet's).

Not here, an error naming it: sparse storage (``stype_dict``).  Several
contexts (``group2ctx``) run on the one device.

May import what ``ast_hybrid.symbol`` may (``graph``, the core, the ops).
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.symbol.graph import _free_variables, evaluate

__all__ = ["Executor", "CachedOp", "bind", "simple_bind"]

_REQS = ("write", "add", "null")


class Executor:
    """A Symbol bound to arrays (``Symbol.bind``/``simple_bind`` make it)."""

    def __init__(self, symbol, ctx, args, grads, reqs, aux):
        self._symbol, self._ctx = symbol, ctx
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self.arg_arrays, self.aux_arrays = list(args), list(aux)
        self.grad_arrays = None if grads is None else list(grads)      # None: bound without args_grad
        self._grad_req = list(reqs)
        self._outputs = None        # the output NDArrays, kept across forwards
        self._heads = None          # the last forward's recorded outputs, and its variables
        self._leaves = {}

    # -- MXNet's dictionaries --------------------------------------------------------------------
    @staticmethod
    def _get_dict(names, ndarrays):
        if len(set(names)) != len(names):
            raise ValueError(f"Duplicate names detected, {names}")
        return dict(zip(names, ndarrays))

    @property
    def arg_dict(self):
        return self._get_dict(self._arg_names, self.arg_arrays)

    @property
    def grad_dict(self):
        return self._get_dict(self._arg_names, self._grads())

    def _grads(self):
        return self.grad_arrays if self.grad_arrays is not None else [None] * len(self._arg_names)

    @property
    def aux_dict(self):
        return self._get_dict(self._aux_names, self.aux_arrays)

    @property
    def output_dict(self):
        return self._get_dict(self._symbol.list_outputs(), self.outputs)

    @property
    def outputs(self):
        """The output NDArrays (before the first ``forward``: zeros of their inferred shapes, as MXNet
        allocates them)."""
        if self._outputs is None:
            from ast_hybrid import nd

            shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
            shapes.update((n, a.shape) for n, a in zip(self._aux_names, self.aux_arrays))
            dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
            outs = self._symbol._abstract(shapes, dtypes)
            self._outputs = [nd.zeros(o.shape, dtype=o.dtype) for o in outs]
        return self._outputs

    # -- running ---------------------------------------------------------------------------------
    def forward(self, is_train=False, **kwargs):
        """The outputs for the bound arrays (those named in ``kwargs`` first take the values given)."""
        from ast_hybrid.core import autograd
        from ast_hybrid.core.ndarray import NDArray
        from ast_hybrid.ops.array_methods import write_into

        if kwargs:
            arg_dict = self.arg_dict
            for name, array in kwargs.items():
                if not isinstance(array, (NDArray, np.ndarray)):
                    raise ValueError("only accept keyword argument of NDArrays and numpy.ndarray")
                if name not in arg_dict:
                    raise TypeError(f"Unknown argument {name}")
                if arg_dict[name].shape != array.shape:
                    raise ValueError(f"Shape not match! Argument {name}, need: {arg_dict[name].shape}, "
                                     f"received: {array.shape}")
                arg_dict[name][:] = array
        values = dict(zip(self._aux_names, self.aux_arrays))
        leaves = {}
        for name, array, grad, req in zip(self._arg_names, self.arg_arrays, self._grads(), self._grad_req):
            if req != "null" and grad is not None:
                array = array.detach()
                array.attach_grad()
                leaves[name] = array
            values[name] = array
        scope = autograd.record(train_mode=is_train) if leaves else autograd.pause(train_mode=is_train)
        with scope:
            heads = evaluate(self._symbol._entries, lambda n: values[n.name], monitor=self._monitor)
        self._heads, self._leaves = (heads, leaves) if leaves else (None, {})
        kept = self._outputs
        if kept is None or [(o.shape, o.dtype) for o in kept] != [(h.shape, h.dtype) for h in heads]:
            self._outputs = [h.detach() for h in heads]
        else:
            for out, h in zip(self._outputs, heads):
                write_into(out, h.detach(), reads_target=False)
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Write the arguments' gradients (by their ``grad_req``) for the outputs' gradients ``out_grads`` (an
        NDArray, a list in the order of the outputs, or a dict by output name; ones where missing)."""
        from ast_hybrid import nd
        from ast_hybrid.core import autograd
        from ast_hybrid.core.ndarray import NDArray

        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads[k] for k in self._symbol.list_outputs()]
        for obj in out_grads:
            if not isinstance(obj, NDArray):
                raise TypeError("inputs must be NDArray")
        if not self._leaves:
            if self._heads is None and any(r != "null" and g is not None
                                           for r, g in zip(self._grad_req, self._grads())):
                # MXNet runs the backward graph without a forward (its saved values whatever the arrays
                # hold); an op whose gradient does not read them (repeat, tile...) gets its exact gradient
                self.forward(is_train=True)
            if not self._leaves:
                return
        # an integer output (shape_array, argmax...) passes no gradient: its head gradient is not read
        pairs = [(h, out_grads[i] if i < len(out_grads) else nd.ones_like(h)) for i, h in enumerate(self._heads)
                 if np.issubdtype(h.dtype, np.inexact) and not self._gradient_free(i)]
        heads, head_grads = [h for h, _ in pairs], [g for _, g in pairs]
        names = list(self._leaves)
        grads = autograd.grad(heads, [self._leaves[n] for n in names], head_grads, retain_graph=True,
                              train_mode=is_train)
        index = {n: i for i, n in enumerate(self._arg_names)}
        for name, g in zip(names, grads):
            i = index[name]
            target = self.grad_arrays[i]
            if self._grad_req[i] == "add":
                target[:] = target + g
            else:
                target[:] = g

    def _gradient_free(self, i):
        """Whether output ``i`` is made by an op MXNet gives no gradient (argmax, argsort...): its head
        gradient is not read, whatever its shape (MXNet's zero-gradient nodes ignore it)."""
        node = self._symbol._entries[i][0]
        return node.kind == "op" and node.op in _GRADIENT_FREE

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy the given parameters' values into the bound arrays (MXNet's)."""
        for name, array in arg_params.items():
            if name in self.arg_dict:
                dst = self.arg_dict[name]
                array.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ValueError(f"Find name \"{name}\" that is not in the arguments")
        for name, array in (aux_params or {}).items():
            if name in self.aux_dict:
                dst = self.aux_dict[name]
                array.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ValueError(f"Find name {name} that is not in the auxiliary states")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes (MXNet's ``GraphExecutor::Reshape``): an array whose shape stays
        is shared; one that shrinks starts with the old one's first elements; one that grows is new (only with
        ``allow_up_sizing``); the shape of an argument not named changes only with ``partial_shaping``."""
        from ast_hybrid import nd
        from ast_hybrid.core.errors import MXNetError

        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)

        def remade(name, arr, shape, given):
            shape = tuple(shape)
            if arr is None or tuple(arr.shape) == shape:
                return arr
            if not (partial_shaping or given):
                raise MXNetError(f"Shape of unspecifie arg: {name} changed. This can cause the new executor to "
                                 "not share parameters with the old one. Please check for error in network.If "
                                 "this is intended, set partial_shaping=True to suppress this warning.")
            size = int(np.prod(shape))
            if size > arr.size:
                if not allow_up_sizing:
                    raise MXNetError(f"New shape of arg: {name} is larger than original.First making a big "
                                     "executor and then down sizing it is more efficient than the reverse.If you "
                                     "really want to up size, set allow_up_sizing=True to enable allocation of "
                                     "new arrays.")
                return nd.zeros(shape, dtype=arr.dtype)
            return arr.reshape(-1)[:size].reshape(shape).copy()

        args = [remade(n, a, s, n in kwargs) for n, a, s in zip(self._arg_names, self.arg_arrays, arg_shapes)]
        grads = None if self.grad_arrays is None else [
            remade(n, g, s, n in kwargs) for n, g, s in zip(self._arg_names, self.grad_arrays, arg_shapes)]
        aux = [remade(n, a, s, False) for n, a, s in zip(self._aux_names, self.aux_arrays, aux_shapes)]
        return Executor(self._symbol, self._ctx, args, grads, self._grad_req, aux)

    _monitor = None

    def set_monitor_callback(self, callback, monitor_all=False):
        """MXNet's monitor: at each ``forward``, ``callback(name, array)`` for each op's outputs (``<node>_output``)
        in the graph's order, and with ``monitor_all`` first for each of its inputs, by the name of where it comes
        from and by the op's name for it (``conv_data``, ``act_input0``, ``concat_arg1``).  The array is an NDArray
        (MXNet passes a C handle)."""
        from ast_hybrid.symbol.monitor import monitor

        self._monitor = monitor(callback, monitor_all)

    def debug_str(self):
        return "\n".join(f"Op:{n}" for n in self._symbol.get_internals().list_outputs())


Executor.__module__ = "mxnet.executor"


class CachedOp:
    """MXNet's ``mx.nd.CachedOp(sym)``: the graph called on NDArrays given in the order of
    ``sym.list_inputs()`` (arguments and auxiliary states as the graph meets them); one NDArray out, or a
    list; recorded as its ops are where autograd records (gradients reach the inputs that want them)."""

    def __init__(self, sym, flags=()):
        self._symbol, self._names = sym, sym.list_inputs()

    def __call__(self, *args, out=None, default_ctx=None):
        from ast_hybrid.core.ndarray import NDArray

        if len(args) != len(self._names):
            raise ValueError(f"CachedOp: {len(args)} inputs given, the graph takes {len(self._names)} "
                             f"({self._names})")
        bad = [i for i, a in enumerate(args) if not isinstance(a, NDArray)]
        if bad:
            raise TypeError(f"CachedOp: input {bad[0]} is a {type(args[bad[0]]).__name__}, not an NDArray")
        values = dict(zip(self._names, args))
        outs = evaluate(self._symbol._entries, lambda n: values[n.name])
        if out is not None:
            for o, r in zip(out if isinstance(out, (list, tuple)) else [out], outs):
                o[:] = r
            return out
        return outs[0] if len(outs) == 1 else outs


# -- binding --------------------------------------------------------------------------------------------

def _arrays(what, given, names, allow_missing):
    """MXNet's ``_get_ndarray_inputs``: a list in the order of ``names``, or a dict by name."""
    from ast_hybrid.core.ndarray import NDArray

    if isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise ValueError(f"Length of {what} does not match the number of arguments")
        for a in given:
            if not (a is None and allow_missing) and not isinstance(a, NDArray):
                raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
        return list(given)
    if isinstance(given, dict):
        out = []
        for name in names:
            if name in given:
                if not isinstance(given[name], NDArray):
                    raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
                out.append(given[name])
            elif allow_missing:
                out.append(None)
            else:
                raise ValueError(f"key `{name}` is missing in `{what}`")
        return out
    raise TypeError("Only accept list of NDArrays or dict of str to NDArray")


def _reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ValueError(f"grad_req has {len(grad_req)} entries for {len(names)} arguments")
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, "null") for n in names]
    else:
        raise TypeError(f"grad_req must be a str, a list or a dict, got {type(grad_req).__name__}")
    bad = [r for r in reqs if r not in _REQS]
    if bad:
        raise ValueError(f"grad_req must be one of {_REQS}, got {bad[0]!r}")
    return reqs


def _dense(stypes):
    from ast_hybrid.core.errors import unsupported

    sparse = {k: v for k, v in (stypes or {}).items() if v not in (None, "default")}
    if sparse:
        raise unsupported("mxnet.symbol", "Symbol.simple_bind(stype_dict=...)",
                          f"ast-hybrid has dense ('default') storage only (asked: {sparse})")


def bind(symbol, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None, shared_exec=None):
    """``Symbol.bind``: an executor on the NDArrays given (the same arrays, not copies)."""
    from ast_hybrid.core.context import Context

    if not isinstance(ctx, Context):
        raise TypeError("Context type error")
    arg_names = symbol.list_arguments()
    args = _arrays("args", args, arg_names, False)
    grads = None if args_grad is None else _arrays("args_grad", args_grad, arg_names, True)
    reqs = _reqs(grad_req, arg_names)
    aux_names = symbol.list_auxiliary_states()
    aux = _arrays("aux_states", aux_states if aux_states is not None else [], aux_names, False)
    return Executor(symbol, ctx, args, grads, reqs, aux)


def simple_bind(symbol, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
    """``Symbol.simple_bind``: an executor on new zero arrays of the shapes given by name (``kwargs``) and
    inferred for the others; ``type_dict`` names the types (float32 otherwise)."""
    from ast_hybrid import nd

    _dense(stype_dict)
    shapes = {k: v for k, v in kwargs.items() if isinstance(v, tuple)}
    arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
    type_dict = dict(type_dict or {})
    arg_names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
    typed = type_dict or any(n.attrs.get("__dtype__") for n in _free_variables(symbol._entries))
    if typed:   # the types given, and those the variables were declared with (sym.var(..., dtype=...))
        known = dict(zip(arg_names, arg_shapes), **dict(zip(aux_names, aux_shapes)))
        arg_types, _, aux_types = symbol._types(known, {k: np.dtype(v) for k, v in type_dict.items()})
    else:
        arg_types = aux_types = None
    arg_types = arg_types or [np.float32] * len(arg_names)
    aux_types = aux_types or [np.float32] * len(aux_names)
    reqs = _reqs(grad_req, arg_names)
    args = [nd.zeros(s, dtype=t) for s, t in zip(arg_shapes, arg_types)]
    grads = [nd.zeros(s, dtype=t) if r != "null" else None for s, t, r in zip(arg_shapes, arg_types, reqs)]
    aux = [nd.zeros(s, dtype=t) for s, t in zip(aux_shapes, aux_types)]
    return Executor(symbol, ctx, args, grads, reqs, aux)


# MXNet's ops whose FGradient is MakeZeroGradNodes (or none): an output of theirs passes no gradient
_GRADIENT_FREE = frozenset({"argmax", "argmin", "argsort", "argmax_channel", "round", "rint", "fix", "floor",
                            "ceil", "trunc", "shape_array", "size_array", "one_hot", "zeros_like",
                            "ones_like"})
