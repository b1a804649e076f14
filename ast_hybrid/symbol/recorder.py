"""How a Symbol graph is recorded: an op, an NDArray method or a Python operator given Symbols adds a node
(``symbol/graph.py`` holds the graph: :class:`~ast_hybrid.symbol.graph.Symbol`, its nodes, naming, replay).

- :func:`op_recorder`: an op as ``sym`` (and the ``F`` below) offers it: a node when given Symbols, else the
  op's value;
- :func:`install`: ``Symbol``'s methods (NDArray's, each a node; the host-only ones refused) and Python
  operators (MXNet's ``elemwise_*``/``_*_scalar`` nodes), set on the class when ``ast_hybrid.symbol`` is
  imported (the graph module imports nothing of this one);
- :func:`apply`: a block called with Symbols runs its ``hybrid_forward`` once with ``F`` a namespace whose ops
  record nodes instead of computing (:class:`_SymbolF`), and its parameters as variables
  (:func:`param_variable`, ``Parameter.var()``), as MXNet's ``HybridBlock.forward`` does.

The variables an op creates for inputs it was not given (``mx.sym.Convolution(y, ...)``: ``<name>_weight``,
``<name>_bias``) are MXNet's, and so is each node's output count (``common.op_outputs``).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import operator
import types

import numpy as np

from ast_hybrid.symbol.graph import Symbol, _new_name, _Node, _one_output, _symbols_in, group, variable

__all__ = ["op_recorder", "apply", "param_variable", "install"]


_HOST_ONLY = frozenset({"asnumpy", "asscalar", "wait_to_read", "attach_grad", "backward", "copyto", "item",
                        "tolist", "as_in_context", "copy", "context", "grad"})


def _getattr(self, name):
    if name.startswith("_"):
        raise AttributeError(name)
    from ast_hybrid.core.ndarray import NDArray

    if name in _HOST_ONLY:
        raise NotImplementedError(f"Function {name} is not implemented for Symbol and only available in "
                                  "NDArray: a Symbol has no value until the graph runs")
    attr = getattr(NDArray, name, None)
    if attr is None or isinstance(attr, property) or not callable(attr):
        raise AttributeError(f"'Symbol' object has no attribute {name!r}")
    return functools.partial(_method, self, name)


def _neg(self):
    return _operator(operator.mul, "_mulscalar", self, -1.0, mx_op="_mul_scalar")


#: inputs an op creates as variables (``<name>_<input>``) when the call does not give them (MXNet's)
_AUTO_INPUTS = {
    "Convolution": ("weight", "bias"), "Deconvolution": ("weight", "bias"), "FullyConnected": ("weight", "bias"),
    "BatchNorm": ("gamma", "beta", "moving_mean", "moving_var"),
    "BatchNorm_v1": ("gamma", "beta", "moving_mean", "moving_var"),
    "BatchNormWithReLU": ("gamma", "beta", "moving_mean", "moving_var"),
    "SyncBatchNorm": ("gamma", "beta", "moving_mean", "moving_var"),
    "LayerNorm": ("gamma", "beta"), "InstanceNorm": ("gamma", "beta"), "GroupNorm": ("gamma", "beta"),
    "Embedding": ("weight",),
    "RNN": ("data", "parameters", "state", "state_cell"),      # state_cell: mode 'lstm' only
    # the loss outputs' labels: <name>_label (MXNet's softmax_label)
    "SoftmaxOutput": ("label",), "Softmax": ("label",), "LinearRegressionOutput": ("label",),
    "LogisticRegressionOutput": ("label",), "MAERegressionOutput": ("label",), "SVMOutput": ("label",),
    # called with no input at all (MXNet's own tests: sym.softmin(axis=1)): <name>_data
    "softmax": ("data",), "softmin": ("data",), "log_softmax": ("data",),
    "ROIPooling": ("rois",), "Correlation": ("data1", "data2"),
    "PSROIPooling": ("rois",), "ROIAlign": ("rois",),       # (sym.contrib's)
}
_AUTO_PATHS = ((), ("contrib",))       # the namespaces whose ops above make their missing inputs
_AUX_NAMES = frozenset({"moving_mean", "moving_var", "running_mean", "running_var"})
# the initializer MXNet's operators give the variables they create (FSetInputVarAttrOnCompose)
_AUTO_INIT = {("BatchNorm", "moving_mean"): '["zero", {}]', ("BatchNorm", "moving_var"): '["one", {}]',
              ("BatchNorm_v1", "moving_mean"): '["zero", {}]', ("BatchNorm_v1", "moving_var"): '["one", {}]',
              ("BatchNormWithReLU", "moving_mean"): '["zero", {}]', ("BatchNormWithReLU", "moving_var"): '["one", {}]',
              ("SyncBatchNorm", "moving_mean"): '["zero", {}]', ("SyncBatchNorm", "moving_var"): '["one", {}]',
              ("LeakyReLU", "gamma"): '["Constant", {"value": 0.25}]'}
_NO_BIAS_DEFAULT = {"Deconvolution": True}


@functools.lru_cache(maxsize=None)
def _signature(fn):
    try:
        return inspect.signature(getattr(fn, "__wrapped__", fn))
    except (TypeError, ValueError):
        return None


def _make_op(fn, op_name, args, kwargs, name=None, hint=None, key=None, mx_op=None, nout=None, named=None):
    """A node applying ``fn`` (an op of ``ast_hybrid.ops``) to ``args``/``kwargs``, which hold Symbols
    (``named``: the node's name, already given by the NameManager)."""
    for s in _symbols_in((args, kwargs)):
        _one_output(s, f"{op_name}")
    name = named or _new_name(name, hint or op_name.lower())
    # MXNet: an op's lr_mult/wd_mult are attributes its own new variables (weight, bias...) inherit
    inherited = {f"__{k}__": str(kwargs[k]) for k in ("lr_mult", "wd_mult") if k in kwargs}
    if inherited:
        kwargs = {k: v for k, v in kwargs.items() if k not in ("lr_mult", "wd_mult")}
    sig = _signature(fn)
    bound = None
    if sig is not None:
        try:
            bound = sig.bind_partial(*args, **kwargs)
        except TypeError:
            bound = None
    auto = _AUTO_INPUTS.get(op_name, ())
    if op_name == "LeakyReLU" and bound is not None and bound.arguments.get("act_type") == "prelu":
        auto = ("gamma",)
    if op_name == "RNN" and bound is not None and bound.arguments.get("mode", "lstm") != "lstm":
        auto = auto[:-1]
    if auto and bound is not None:
        auto = ("data", *auto) if "data" not in auto else auto     # MXNet makes every missing input a variable
        kwargs = dict(kwargs)
        no_bias = bound.arguments.get("no_bias", _NO_BIAS_DEFAULT.get(op_name, False))
        for inp in auto:
            if bound.arguments.get(inp) is None and not (inp == "bias" and no_bias) and inp in sig.parameters:
                init = _AUTO_INIT.get((op_name, inp))
                kwargs[inp] = variable(f"{name}_{inp}", **({"__init__": init} if init else {}), **inherited)
        order = {k: i for i, k in enumerate(sig.parameters)}      # the inputs in the op's order, as MXNet's
        kwargs = dict(sorted(kwargs.items(), key=lambda kv: order.get(kv[0], len(order))))
        bound = sig.bind_partial(*args, **kwargs)
    node = _Node("op", name, fn=fn, args=tuple(args), kwargs=kwargs,
                 nout=nout or getattr(fn, "mx_outputs", None) or _count(key or op_name, args, kwargs, sig),
                 op=mx_op or op_name)
    if bound is not None:
        for arg, value in bound.arguments.items():
            if arg in _AUX_NAMES and isinstance(value, Symbol) and value._entries[0][0].kind == "var":
                node.aux.add(id(value._entries[0][0]))
    return Symbol._of([(node, i) for i in range(node.nout)])


def _count(key, args, kwargs, sig):
    """How many outputs the op gives for these options: MXNet's own table (``common.op_outputs``)."""
    if key == "split_v2":       # as many as sections, or one more than the indices given
        ios = kwargs.get("indices_or_sections", args[1] if len(args) > 1 else 1)
        return int(ios) if isinstance(ios, (int, np.integer)) else len(tuple(ios)) + 1
    entry = _outputs_table().get(key)
    if entry is None:
        return 1
    if type(entry) is int:
        return entry
    signature, count_param, params, defaults, combos = entry
    given = dict(kwargs)
    if not any(a.startswith("*") for a in signature):
        given.update(zip(signature, args))
    if count_param is not None:
        n = given.get(count_param, combos.get(()))
        return int(n) if isinstance(n, (int, np.integer)) else 1
    values = tuple(given.get(p, d) for p, d in zip(params, defaults))
    values = tuple(bool(v) if isinstance(d, bool) and isinstance(v, (int, np.integer)) else v
                   for v, d in zip(values, defaults))
    return combos.get(values, 1)


@functools.lru_cache(maxsize=None)
def op_recorder(fn, attr, path=(), always=False):
    """``fn`` (an op) as ``sym``/a traced ``F`` offers it: given a Symbol (or, ``always``, given anything) it
    records a node; otherwise it computes as the op does.  One per op: ``norm_layer is
    mx.sym.contrib.SyncBatchNorm`` holds however the name was reached (GluonCV's FPN tests it)."""
    op_name = getattr(fn, "op_name", attr)
    key = ".".join((*path, attr)) if path else attr

    made = _CREATIONS.get(attr) if not path else None
    # given no array at all, an op whose inputs MXNet creates as variables is a node too (sym.RNN(mode=...,
    # name='rnn'): rnn_data, rnn_parameters, ...), as are the creations
    graph_anyway = bool(made) or (tuple(path) in _AUTO_PATHS and attr in _AUTO_INPUTS)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not always and not _symbols_in((args, kwargs)) and not (graph_anyway and not _arrays_in((args, kwargs))):
            return fn(*args, **kwargs)
        if made:            # sym.zeros(shape=(0, H)): a node, its unknown dimensions inferred (graph.evaluate)
            kwargs = dict(_signature(fn).bind_partial(*args).arguments, **kwargs)   # (shape by name)
            args = ()
            name = kwargs.pop("name", None)
            return _make_op(fn, attr, args, kwargs, name, key=op_name, mx_op=made)
        kwargs = dict(kwargs)
        name = kwargs.pop("name", None)
        kwargs.pop("attr", None)
        kwargs.pop("out", None)
        mx_op = "_" + "_".join(path) + "_" + attr if path and path[0] != "_internal" else attr
        # named as MXNet names them: sym.contrib.box_nms's node "box_nms0", sym.random.uniform's (a Python
        # wrapper of _internal._random_uniform) "_random_uniform0"
        hint = (mx_op if path[0] == "random" else attr).lower() if path else None
        return _make_op(fn, attr, args, kwargs, name, hint=hint,
                        key=key if key in _outputs_table() else op_name, mx_op=mx_op)

    return call


# ops that make an array from no input: given no array either, ``sym``'s is a graph node, as MXNet's (an RNN
# cell's begin_state, ``sym.zeros((0, H))``); their registered names in MXNet's graph JSON
_CREATIONS = {"zeros": "_zeros", "ones": "_ones", "arange": "_arange", "full": "_full", "eye": "_eye",
              "linspace": "_linspace"}


def _arrays_in(obj):
    if isinstance(obj, (list, tuple)):
        return any(_arrays_in(o) for o in obj)
    if isinstance(obj, dict):
        return any(_arrays_in(o) for o in obj.values())
    # (a NumPy scalar type, np.float32 given as dtype=, has shape and dtype attributes too: not an array)
    return hasattr(obj, "shape") and hasattr(obj, "dtype") and not isinstance(obj, type)


@functools.lru_cache(maxsize=1)
def _outputs_table():
    from ast_hybrid.common.op_outputs import OUTPUTS

    return OUTPUTS


def _method(sym, name, *args, **kwargs):
    kwargs.pop("name", None)
    kwargs.pop("attr", None)
    return _make_op(_MethodCall(name), name, (sym, *args), kwargs, hint=name.lower(),
                    key={"split": "SliceChannel"}.get(name, name), mx_op=_METHOD_OPS.get(name, name))


_METHOD_OPS = {"astype": "Cast", "split": "SliceChannel"}     # a Symbol method's operator, where names differ


class _MethodCall:
    """Replays ``value.name(*args, **kwargs)`` (a Symbol's method call)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __call__(self, value, *args, **kwargs):
        return getattr(value, self.name)(*args, **kwargs)


def _operator(fn, hint, a, b, mx_op):
    return _make_op(fn, hint, (a, b), {}, hint=hint, mx_op=mx_op)


_CAMEL = ("_plus", "_minus", "_mul", "_div", "_mod", "_power")


def _binary(fn, hint, mx_op, reflected=False):
    """``sym <op> other``: MXNet's ``mx_op`` between Symbols, ``<hint>_scalar`` (``_r...`` reflected) with a
    number; the scalar is the node's ``scalar`` attribute in its graph JSON."""
    def method(self, other):
        if isinstance(other, Symbol):
            pair, h, op = (other, self) if reflected else (self, other), hint, mx_op
        elif isinstance(other, (numbers.Number, np.generic)):
            flip = reflected and hint in ("_minus", "_div", "_power", "_mod")
            pair = (other, self) if reflected else (self, other)
            op = f"{'_r' + hint[1:] if flip else hint}_scalar"
            # the node's name as MXNet's: its arithmetic calls _internal._MulScalar (hint "_mulscalar"), its
            # comparisons and __rpow__ the snake-case ops (``_greater_scalar``)
            h = op if hint not in _CAMEL or (flip and hint == "_power") else op.replace("_scalar", "scalar")
        else:
            return NotImplemented
        return _operator(fn, h, *pair, mx_op=op)
    return method


# --- the F of a hybrid_forward called with Symbols ---------------------------------------------------------

class _SymbolF:
    """``F`` while a block is called with Symbols: ``ast_hybrid.nd``'s names, every op recording a node
    (MXNet passes ``mx.sym``).  Sub-namespaces (``F.contrib``) likewise."""

    __slots__ = ("_module", "_path")

    def __init__(self, module, path=()):
        self._module, self._path = module, path

    @property
    def __dict__(self):
        """The namespace's names, as a module's: GluonCV asks ``'box_decode' in F.contrib.__dict__``."""
        return dict(self._module.__dict__)     # a copy: GluonCV's export_block pops from it

    def __getattr__(self, attr):
        if not self._path and attr in _SYMBOL_API:
            return _SYMBOL_API[attr]
        target = getattr(self._module, attr)
        if isinstance(target, types.ModuleType):
            return _SymbolF(target, (*self._path, attr))
        if callable(target) and not isinstance(target, type):
            return op_recorder(target, attr, self._path, always=True)
        return target

    def __repr__(self):
        return f"<F for Symbols: {'.'.join(('sym', *self._path))}>"


_SYMBOL_API = {"Symbol": Symbol, "var": variable, "Variable": variable, "Group": group}


@functools.lru_cache(maxsize=1)
def _traced_f():
    from ast_hybrid import nd

    return _SymbolF(nd)


def apply(block, args):
    """``block(*args)`` with Symbols: its ``hybrid_forward`` run once with the recording ``F`` and its
    parameters' variables, in the block's name scope (MXNet's ``HybridBlock.forward`` on Symbols)."""
    plain = [type(a).__name__ for a in args if not isinstance(a, (Symbol, list, tuple)) and a is not None
             and hasattr(a, "shape")]
    if plain:
        raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types for the input. "
                         f"Please check the type of the args.\n({type(block).__name__} was called with Symbols "
                         f"and a {plain[0]}: a call takes all NDArrays (it computes) or all Symbols (it builds a "
                         "graph))")
    own = getattr(block, "_symbolic_forward", None)
    if own is not None:                     # a SymbolBlock: its graph composed with the inputs
        return own(*args)
    with block.name_scope():
        params = {k: param_variable(p) for k, p in block._reg_params.items()}
        return block.hybrid_forward(_traced_f(), *args, **params)


def param_variable(p):
    """``Parameter.var()``: the parameter's variable, one per parameter (MXNet caches it on ``_var``)."""
    v = getattr(p, "_var", None)
    if not isinstance(v, Symbol):
        attrs = {"__lr_mult__": str(getattr(p, "lr_mult", 1.0)), "__wd_mult__": str(getattr(p, "wd_mult", 1.0))}
        init = getattr(p, "init", None)
        if init is not None:    # MXNet's Parameter.var(): what Module's initializer reads (InitDesc.attrs)
            attrs["__init__"] = init if isinstance(init, str) else init.dumps()
        if getattr(p, "_stype", "default") != "default":
            attrs["__storage_type__"] = str({"row_sparse": 1, "csr": 2}[p._stype])
        v = variable(p.name, shape=p._shape if p._shape and all(p._shape) else None, dtype=p.dtype, param=p,
                     **attrs)
        try:
            p._var = v
        except AttributeError:
            pass
    return v


def custom_recorder(custom):
    """``sym.Custom``: given Symbols (by position, or by the prop's input names), a graph node of the
    ``op_type``'s ``CustomOpProp`` (its missing inputs made variables ``{name}_{input}``, its
    ``list_auxiliary_states`` the node's auxiliary states, ``list_outputs`` its outputs); else ``custom``."""
    from ast_hybrid.ops.custom import inputs_by_name, make_prop, prop_names

    @functools.wraps(custom)
    def call(*args, **kwargs):
        if not _symbols_in((args, kwargs)):
            return custom(*args, **kwargs)
        kwargs = dict(kwargs)
        name = _new_name(kwargs.pop("name", None), "custom")
        kwargs.pop("attr", None)
        given = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], Symbol)}
        options = {k: v for k, v in kwargs.items() if k != "op_type"}
        names = prop_names(make_prop(kwargs.get("op_type"), options))
        arguments, outputs = names[0], names[1]
        inputs = inputs_by_name(names, args, given, kwargs.get("op_type"), lambda n: variable(f"{name}_{n}"))
        node = _make_op(custom, "Custom", inputs, kwargs, named=name, mx_op="Custom", nout=len(outputs))
        node_ = node._entries[0][0]
        node_.names = tuple(outputs)
        for s in inputs[len(arguments):]:
            if s._entries[0][0].kind == "var":
                node_.aux.add(id(s._entries[0][0]))
        return node

    return call


def _set_attr(self, **kwargs):
    """MXNet's ``Symbol._set_attr``: string attributes on the node(s) this Symbol outputs from."""
    for key, value in kwargs.items():
        if not isinstance(value, str):
            raise ValueError("Set Attr only accepts string values")
        for node, _ in self._entries:
            node.attrs[key] = value


def install():
    """Set ``Symbol``'s attribute lookup (NDArray's methods, each recording a node) and Python operators."""
    Symbol.__getattr__ = _getattr
    Symbol.__neg__ = _neg
    Symbol._set_attr = _set_attr
    for dunder, fn, hint, mx_op in (("add", operator.add, "_plus", "elemwise_add"),
                                    ("sub", operator.sub, "_minus", "elemwise_sub"),
                                    ("mul", operator.mul, "_mul", "elemwise_mul"),
                                    ("truediv", operator.truediv, "_div", "elemwise_div"),
                                    ("pow", operator.pow, "_power", "_power"), ("mod", operator.mod, "_mod", "_mod")):
        setattr(Symbol, f"__{dunder}__", _binary(fn, hint, mx_op))
        setattr(Symbol, f"__r{dunder}__", _binary(fn, hint, mx_op, reflected=True))
    for dunder, fn, hint in (("eq", operator.eq, "_equal"), ("ne", operator.ne, "_not_equal"),
                             ("gt", operator.gt, "_greater"), ("ge", operator.ge, "_greater_equal"),
                             ("lt", operator.lt, "_lesser"), ("le", operator.le, "_lesser_equal")):
        setattr(Symbol, f"__{dunder}__", _binary(fn, hint, hint))
    Symbol.__div__ = Symbol.__truediv__
    Symbol.__hash__ = object.__hash__      # __eq__ records a node, as MXNet's; identity for dicts and sets
