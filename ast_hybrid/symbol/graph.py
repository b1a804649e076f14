"""Symbols: MXNet's graph of operators, built by calling a block, or ``sym`` ops, on ``sym.var`` placeholders.

MXNet code builds graphs in two ways, and both work here::

    y = net(sym.var('data'))            # the hybridization chapter: <Symbol dense2_fwd>
    y.list_arguments()                  # ['data', 'dense0_weight', 'dense0_bias', ...]
    feat = y.get_internals()['resnetv10_stage3_activation5_output']      # GluonCV's FeatureExtractor
    z = mx.sym.Convolution(feat, num_filter=128, kernel=(1, 1), name='expand_conv0')
    block = gluon.SymbolBlock([feat, z], sym.var('data'), params=net.collect_params())

This module is the graph itself: :class:`Symbol`, its nodes, MXNet's naming, and replay.  How nodes are
recorded (an op, a method or a Python operator given Symbols; the ``F`` a block called with Symbols gets) is
``symbol/recorder.py``, which installs Symbol's methods and operators (``ast_hybrid.symbol`` runs its
``install()`` on import).  Each node is named as MXNet's ``NameManager``/``Prefix`` name it (the ``name=`` an
op is given, else the op's name lowercased and a counter, after the prefix of the innermost block with a
prefix of its own), so ``get_internals()`` finds the names model code asks for.  A Symbol's outputs are
``(node, index)`` entries; ``sym[i]`` picks an output (MXNet's meaning, not a slice of the data).

Values come from replaying the graph (:func:`evaluate`): each node calls what it recorded (the op on arrays,
the NDArray method, the Python operator), so a graph computes what the forward computes.  ``infer_shape`` and
``infer_type`` replay it on shapes only (``jax.eval_shape``; parameters still waiting for their shape get
it, and their initial value, as at a first call), ``eval`` on arrays.  ``gluon.SymbolBlock(outputs, inputs,
params)`` runs a graph as a block (``symbol_block.py``).  MXNet's graph JSON both ways: ``tojson``/``save``
write it (each node under MXNet's registered op name; MXNet 1.9.1 loads and runs it), :func:`load_json` reads
it (``SymbolBlock.imports`` of MXNet's own exports).  ``bool(symbol)`` raises, as MXNet's (a Python ``if`` on
a graph decides nothing).  ``bind``/``simple_bind`` make MXNet's executors (``symbol/executor.py``).

Over 600 lines: the Symbol class (names, shapes and types, replay, composition, the JSON doors) and the graph
walks it is made of, read together.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

__all__ = ["Symbol", "is_symbolic", "variable", "group", "evaluate", "compose", "load_json", "to_json"]


class _Node:
    """One operator application (``kind`` 'op': ``fn(*args, **kwargs)`` with the Symbols inside replaced by
    their values, ``nout`` outputs) or one variable (``kind`` 'var': a placeholder, or a Parameter's)."""

    __slots__ = ("kind", "name", "fn", "args", "kwargs", "nout", "param", "attrs", "inputs", "aux", "op", "names")

    def __init__(self, kind, name, fn=None, args=(), kwargs=None, nout=1, param=None, attrs=None, op=None):
        self.kind, self.name, self.fn, self.args, self.kwargs = kind, name, fn, args, kwargs or {}
        self.op = op            # MXNet's registered name of the operator (what its graph JSON says)
        self.nout, self.param, self.attrs = nout, param, attrs or {}
        self.inputs = [s._entries[0][0] for s in _symbols_in((args, self.kwargs))]
        self.aux = set()        # ids of the variable nodes this op takes as auxiliary states
        self.names = None       # its outputs' names where its op does not say them (a custom op's list_outputs)


class Symbol:
    """MXNet's ``Symbol``: the outputs ``(node, index)`` of a graph; made by ``sym.var``, ``sym`` ops and blocks
    called with Symbols, never directly."""

    def __init__(self, *args, **kwargs):
        from ast_hybrid.core.errors import unsupported

        raise unsupported("mxnet.symbol", "Symbol", "make Symbols with sym.var(name) and ops on them")

    @classmethod
    def _of(cls, entries):
        s = object.__new__(cls)
        s._entries = tuple(entries)
        s._shapes = None        # the placeholders' shapes the last infer_shape was given
        return s

    # -- names -----------------------------------------------------------------------------------
    @property
    def name(self):
        return _entry_name(*self._entries[0]) if len(self._entries) == 1 else None

    def __repr__(self):
        if len(self._entries) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(_entry_name(*e) for e in self._entries)}]>"

    def attr(self, key):
        return self._entries[0][0].attrs.get(key) if len(self._entries) == 1 else None

    def list_attr(self):
        return {k: str(v) for k, v in self._entries[0][0].attrs.items()} if len(self._entries) == 1 else {}

    def attr_dict(self):
        """Every node's attributes by node name, as strings (MXNet's): a variable's ``__shape__``,
        ``__init__``, ``__lr_mult__``...; an operator's options."""
        out = {}
        for n in _topo(self._entries):
            items = n.attrs.items() if n.kind == "var" else (
                (k, v) for k, v in (n.kwargs or {}).items() if not isinstance(v, Symbol))
            d = {k: str(v) for k, v in items if v is not None}
            if d:
                out[n.name] = d
        return out

    def list_outputs(self):
        return [_output_name(*e) for e in self._entries]

    def list_inputs(self):
        return [n.name for n in _variables(self._entries)]

    def as_np_ndarray(self):
        """MXNet's numpy-flavoured view of the Symbol (``mx.sym.np``'s inputs): the same graph here."""
        return self

    def as_nd_ndarray(self):
        return self

    def list_arguments(self):
        aux = _aux_ids(self._entries)
        return [n.name for n in _variables(self._entries) if id(n) not in aux]

    def list_auxiliary_states(self):
        aux = _aux_ids(self._entries)
        return [n.name for n in _variables(self._entries) if id(n) in aux]

    def get_internals(self):
        """Every output of every node of the graph, variables included, in MXNet's order (depth first)."""
        return Symbol._of([(n, i) for n in _topo(self._entries) for i in range(n.nout)])

    def get_children(self):
        ins = [e for n in {id(n): n for n, _ in self._entries}.values() for e in ((x, 0) for x in n.inputs)]
        return Symbol._of(ins) if ins else None

    # -- outputs ---------------------------------------------------------------------------------
    def __len__(self):
        return len(self._entries)

    def __iter__(self):
        return (Symbol._of([e]) for e in self._entries)

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError(f"There are no output named {index!r}: the outputs are {names[:20]}"
                                 f"{' ...' if len(names) > 20 else ''}")
            index = names.index(index)
        if isinstance(index, slice):
            return Symbol._of(self._entries[index])
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError(f"Symbol only support integer index to fetch i-th output (got {index!r}): a "
                            "Symbol's [] picks one of its outputs; slice the data with F.slice_axis/F.slice")
        n = len(self._entries)
        if not -n <= index < n:
            raise IndexError(f"{self!r} has {n} output(s); index {index} is out of range")
        return Symbol._of([self._entries[index]])

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __call__(self, *args, **kwargs):
        """MXNet's composition: ``sym(data=other)`` replaces the variable ``data`` by ``other``."""
        if args:
            names = [n for n in self.list_arguments()]
            kwargs = dict(zip(names, args), **kwargs)
        return compose(self, kwargs)

    # -- NDArray's methods and Python's operators record nodes: symbol/recorder.py installs them ----------
    def __bool__(self):
        raise NotImplementedError('Function __bool__ (namely operator "bool") is not implemented for Symbol and '
                                  "only available in NDArray: a Python if/while on a graph's value decides "
                                  "nothing while the graph is built (F.where, F.contrib.cond)")

    # -- shapes, types, values -------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` in the order of ``list_arguments``, ``list_outputs`` and
        ``list_auxiliary_states``, from the shapes of the placeholders given by position or by name."""
        shapes = self._given(args, kwargs, "infer_shape")
        outs = self._abstract(shapes, {}, types_free=True)
        self._shapes = shapes
        return self._report(shapes, outs, lambda a: tuple(a.shape))

    def infer_shape_partial(self, *args, **kwargs):
        """``infer_shape`` with the dimensions an unknown one (0; -1 under numpy shapes) decides left unknown
        (``symbol/unknown_dims.py``)."""
        from ast_hybrid.symbol import unknown_dims

        return unknown_dims.partial(self, self._given(args, kwargs, "infer_shape_partial"))

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` as numpy types, inferred by running the graph on shapes: the
        placeholders' (``sym.var(name, shape=...)`` or an earlier ``infer_shape``), else trial ones."""
        dtypes = {k: np.dtype(v) for k, v in self._given(args, kwargs, "infer_type").items()}
        shapes = dict(self._shapes or {})
        unknown = []
        for n in _free_variables(self._entries):
            if n.name not in shapes:
                if n.attrs.get("__shape__") is None:
                    unknown.append(n.name)
                else:
                    shapes[n.name] = n.attrs["__shape__"]
        if unknown:         # MXNet needs no shapes for types: the graph is tried on a few (unknown_dims.py)
            from ast_hybrid.symbol import unknown_dims

            return unknown_dims.types_on_trial_shapes(self, shapes, dtypes, unknown)
        from ast_hybrid.symbol import unknown_dims

        return self._types(shapes, unknown_dims.completed_types(self, shapes, dtypes))

    def _types(self, shapes, dtypes):
        """``infer_type``'s answer for known ``shapes`` (every variable's) and the ``dtypes`` given."""
        return self._report(shapes, self._abstract(shapes, dtypes), lambda a: np.dtype(a.dtype).type, dtypes=dtypes)

    def eval(self, ctx=None, **kwargs):
        """The outputs (a list of NDArrays) for the placeholders given by name; parameters given by name are
        used instead of their own values."""
        from ast_hybrid import nd

        names = {n.name: n for n in _variables(self._entries)}
        extra = [k for k in kwargs if k not in names]
        if extra:
            raise ValueError(f"eval was given {extra}, which are not inputs of {self!r} (its inputs: "
                             f"{list(names)})")
        missing = [n.name for n in _free_variables(self._entries) if n.name not in kwargs]
        if missing:
            raise ValueError(f"eval needs a value for every placeholder: {missing} not given")
        from ast_hybrid.ops.deferred import inferring

        values = {k: (v if isinstance(v, nd.NDArray) else nd.array(v)) for k, v in kwargs.items()}
        with inferring():       # parameters still waiting for their shape get it, as at a first call
            return list(evaluate(self._entries, lambda n: values[n.name] if n.name in values
                                 else _param_value(n, deferred=True)))

    # -- MXNet's graph format -----------------------------------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """The graph as MXNet's JSON (what ``mx.sym.load_json``, and MXNet 1.9.1's own, read)."""
        return to_json(self._entries, remove_amp_cast)

    def save(self, fname, remove_amp_cast=True):
        with open(fname, "w") as f:
            f.write(self.tojson(remove_amp_cast))

    # -- MXNet's executors (symbol/executor.py) ---------------------------------------------------------
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None, shared_exec=None):
        """An ``Executor`` on the NDArrays given (``args``, ``args_grad``, ``aux_states``: lists in the order of
        ``list_arguments``/``list_auxiliary_states``, or dicts by name)."""
        from ast_hybrid.symbol import executor

        return executor.bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """An ``Executor`` on new arrays of the shapes given by name (the others inferred)."""
        from ast_hybrid.symbol import executor

        return executor.simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx, shared_arg_names,
                                    shared_exec, shared_buffer, **kwargs)

    # -- internals -------------------------------------------------------------------------------
    def _given(self, args, kwargs, what):
        names = self.list_arguments()
        if len(args) > len(names):
            raise ValueError(f"{what} was given {len(args)} positional values for {len(names)} arguments")
        given = dict(zip(names, args))
        inputs = set(self.list_inputs())
        for k, v in kwargs.items():
            if k not in inputs:
                raise ValueError(f"{what}: {k!r} is not a placeholder of {self!r} (they are "
                                 f"{[n.name for n in _free_variables(self._entries)]})")
            given[k] = v
        return {k: v for k, v in given.items() if v is not None}

    def _abstract(self, shapes, dtypes, monitor=None, types_free=False):
        """The graph on shapes only: the outputs' ShapeDtypeStructs.  Parameters whose shape is still
        deferred get it (and their initial value) on the way, as a first call gives them (``monitor``:
        :func:`evaluate`'s; ``types_free``: for the shapes alone, ``deferred.shapes_only``)."""
        import jax

        from ast_hybrid.core.errors import DeferredInitializationError
        from ast_hybrid.core.ndarray import NDArray
        from ast_hybrid.ops.deferred import ShapeOnly, inferring, shapes_only

        avals, unknown = {}, {}
        for n in _variables(self._entries):
            shape = shapes.get(n.name, n.attrs.get("__shape__"))
            if n.param is None or n.name in shapes:
                dtype = dtypes.get(n.name, np.dtype(n.attrs.get("__dtype__") or "float32"))
                if shape is None or 0 in tuple(shape):      # the op it reaches infers it (a weight's, MXNet's)
                    unknown[n.name] = _Unknown(n.name, shape, dtype)
                else:
                    avals[n.name] = jax.ShapeDtypeStruct(tuple(shape), dtype)

        def value(n):
            if n.name in unknown:
                return ShapeOnly(unknown[n.name])
            return _param_value(n, deferred=True, shapes_only=True)

        def run(arrays):
            with inferring(), shapes_only(types_free):
                out = evaluate(self._entries, lambda n: NDArray(arrays[n.name]) if n.name in arrays else value(n),
                               monitor=monitor)
            return [o._arr for o in out]

        try:
            outs = jax.eval_shape(run, avals)
        except DeferredInitializationError:
            left = [k for k, u in unknown.items() if u.shape is None or 0 in tuple(u.shape)]
            if not left:
                raise
            raise ValueError(f"the shape of {left} is needed: give it (infer_shape({left[0]}=...)) "
                             f"or as sym.var({left[0]!r}, shape=...)") from None
        shapes.update((k, tuple(u.shape)) for k, u in unknown.items())
        return outs

    def _report(self, given, outs, of, dtypes=None):
        dtypes = dtypes or {}
        nodes = _variables(self._entries)
        aux = _aux_ids(self._entries)

        def one(n):
            if n.name in given or n.param is None:
                return of(_Aval(given.get(n.name, n.attrs.get("__shape__")),
                                dtypes.get(n.name, n.attrs.get("__dtype__") or "float32")))
            return of(_Aval(n.param.shape, n.param.dtype))

        return ([one(n) for n in nodes if id(n) not in aux], [of(o) for o in outs],
                [one(n) for n in nodes if id(n) in aux])


Symbol.__module__ = "mxnet.symbol"     # isinstance checks and reprs of MXNet-era code name it so


class _Unknown:
    """A placeholder whose shape the graph infers: the operator it reaches fills it in from its data (MXNet's
    ``infer_shape`` of an op's weight, bias, BatchNorm's gamma...), as a Parameter's deferred shape."""

    __slots__ = ("name", "shape", "dtype", "_value")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype, self._value = name, shape, np.dtype(dtype), None


class _Aval:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


# --- names (MXNet's NameManager and Prefix) -------------------------------------------------------------------

class _Scope:
    """A ``Prefix`` name manager: names ``prefix + (name or hint + count)``; one each time a block's
    ``name_scope()`` opens (a block with a prefix of its own), as MXNet's ``_BlockScope`` enters one: in
    ``HybridBlock.forward`` on Symbols, and around a constructor's ``mx.sym`` calls."""

    __slots__ = ("prefix", "counter")

    def __init__(self, prefix):
        self.prefix, self.counter = prefix, {}

    def get(self, name, hint):
        if not name:
            n = self.counter.get(hint, 0)
            self.counter[hint] = n + 1
            name = f"{hint}{n}"
        return self.prefix + name


class _Names(threading.local):
    """This thread's name managers, as MXNet's (per thread): ``top`` names ops built outside any block call,
    ``scopes`` are the Prefix name managers entered (blocks' name_scope()), innermost last."""

    def __init__(self):
        self.top = _Scope("")
        self.scopes = []


_NAMES = _Names()


def enter_prefix(prefix):
    """A block's ``name_scope()`` opens (MXNet enters a new ``Prefix`` name manager each time)."""
    _NAMES.scopes.append(_Scope(prefix))


def enter_manager(manager):
    """``with mx.name.NameManager()``/``Prefix(...)``: ``manager.get(name, hint)`` names the nodes made inside."""
    _NAMES.scopes.append(manager)


def exit_prefix():
    _NAMES.scopes.pop()


@contextlib.contextmanager
def unscoped():
    """Within: no Prefix name manager open in this thread (names as a graph file gives them)."""
    names = _NAMES
    saved, names.scopes = names.scopes, []
    try:
        yield
    finally:
        names.scopes = saved


def _new_name(name, hint):
    names = _NAMES
    return (names.scopes[-1] if names.scopes else names.top).get(name, hint)


def _entry_name(node, index):
    return node.name


# MXNet's names of the outputs of the ops that name theirs (FListOutputNames); the others' are output0, ...
_OUTPUT_NAMES = {op: ("output", "mean", "var")
                 for op in ("BatchNorm", "BatchNorm_v1", "_contrib_SyncBatchNorm", "_contrib_BatchNormWithReLU")}
_OUTPUT_NAMES.update({"LayerNorm": ("output", "mean", "std"), "GroupNorm": ("output", "mean", "std"),
                      "RNN": ("output", "state_output", "statecell_output"),
                      "_contrib_MultiBoxTarget": ("loc_target", "loc_mask", "cls_target")})


# ops with one visible output of several (the others hidden) and no names: MXNet calls it output0
_HIDDEN_OUTPUTS = frozenset({"CTCLoss", "ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss", "sort",
                             "_contrib_box_nms", "_contrib_box_non_maximum_suppression", "_linalg_det",
                             "linalg_det"})


def _output_name(node, index):
    if node.kind == "var":
        return node.name
    names = node.names or (_OUTPUT_NAMES.get(node.op) if node.nout > 1 else None)
    if names and index < len(names):
        return f"{node.name}_{names[index]}"
    return f"{node.name}_output{'' if node.nout == 1 and node.op not in _HIDDEN_OUTPUTS else index}"


# --- building ---------------------------------------------------------------------------------------------

def variable(name, shape=None, dtype=None, param=None, **attrs):
    """``sym.var(name, shape=..., dtype=...)``: a placeholder (or, ``param``, a Parameter's variable)."""
    if not isinstance(name, str):
        raise TypeError(f"sym.var: the name must be a str, got {type(name).__name__}")
    if dtype is not None:
        dtype = np.dtype(dtype).name
    shape = tuple(shape) if shape is not None else None
    attrs = dict(attrs, __shape__=shape, __dtype__=dtype)
    return Symbol._of([(_Node("var", name, param=param, attrs=attrs), 0)])


def group(symbols):
    """``sym.Group([a, b])``: one Symbol with the outputs of each."""
    symbols = list(symbols)
    bad = [s for s in symbols if not isinstance(s, Symbol)]
    if bad or not symbols:
        raise TypeError(f"sym.Group takes a non-empty list of Symbols, got {bad[0] if bad else symbols!r}")
    return Symbol._of([e for s in symbols for e in s._entries])


def _symbols_in(obj):
    if isinstance(obj, Symbol):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [s for o in obj for s in _symbols_in(o)]
    if isinstance(obj, dict):
        return [s for o in obj.values() for s in _symbols_in(o)]
    return []


def _one_output(s, where):
    if len(s._entries) != 1:
        raise ValueError(f"{where} was given {s!r}, which has {len(s._entries)} outputs: pick one ({s!r}[i])")


def is_symbolic(args) -> bool:
    """Whether a block's call arguments hold Symbols (``sym.var`` placeholders or graphs)."""
    return any(isinstance(a, Symbol) or (isinstance(a, (list, tuple)) and any(isinstance(v, Symbol) for v in a))
               for a in args)


# --- running a graph -----------------------------------------------------------------------------------------

def _topo(entries):
    """The nodes the entries depend on, each after its inputs, in MXNet's depth-first order."""
    order, seen = [], set()
    for head, _ in entries:
        if id(head) in seen:
            continue
        stack = [(head, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0 and id(node) in seen:
                continue
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i]
                if id(child) not in seen:
                    stack.append((child, 0))
            else:
                seen.add(id(node))
                order.append(node)
    return order


def _variables(entries):
    seen, out = set(), []
    for n in _topo(entries):
        if n.kind == "var" and n.name not in seen:
            seen.add(n.name)
            out.append(n)
    return out


def _free_variables(entries):
    return [n for n in _variables(entries) if n.param is None]


def _aux_ids(entries):
    """The variable nodes some op takes as an auxiliary state (by name: a parameter's variable may be one
    node per trace)."""
    nodes = _topo(entries)
    aux = set().union(*(n.aux for n in nodes))
    names = {n.name for n in nodes if id(n) in aux}
    return {id(n) for n in nodes if n.kind == "var" and n.name in names}


def _param_value(node, deferred=False, shapes_only=False):
    p = node.param
    if p is None:
        raise ValueError(f"the graph's variable {node.name!r} has no value: give it by name")
    if deferred and p._value is None:
        from ast_hybrid.ops.deferred import Deferred, ShapeOnly

        if getattr(p, "_deferred_init", None):
            return Deferred(p)
        if shapes_only:         # never initialised: its shape only (MXNet's infer_shape needs no values)
            return ShapeOnly(p)
    return p.data()


def evaluate(entries, lookup, extra=None, monitor=None):
    """The values of ``entries``, each variable's from ``lookup(node)``, each op node replaying what it recorded
    (``extra[id(node)]``'s keyword arguments added), ``monitor(node, values)`` told after each (MXNet's executor
    monitor).  Arrays made with unknown (0) dimensions get them first (``symbol/unknown_dims.py``)."""
    from ast_hybrid.symbol import unknown_dims

    values = {}
    order = _topo(entries)
    if any(unknown_dims.unknown_creation(n) for n in order):
        extra = unknown_dims.resolved(order, entries, lookup, extra)

    def sub(obj):
        if isinstance(obj, Symbol):
            node, i = obj._entries[0]
            return values[id(node)][i]
        if isinstance(obj, (list, tuple)):
            return type(obj)(sub(o) for o in obj) if type(obj) in (list, tuple) else obj
        if isinstance(obj, dict):
            return {k: sub(v) for k, v in obj.items()}
        return obj

    for node in order:
        if node.kind == "var":
            values[id(node)] = [lookup(node)]
            continue
        kwargs = sub(node.kwargs)
        if extra and id(node) in extra:
            kwargs.update(extra[id(node)])
        result = node.fn(*sub(node.args), **kwargs)
        if node.nout == 1:
            values[id(node)] = [result]
        else:
            result = list(result)
            if len(result) != node.nout:
                raise ValueError(f"{node.name}: the op gave {len(result)} outputs, the graph expected {node.nout}")
            values[id(node)] = result
        if monitor is not None:
            monitor(node, values)
    return [values[id(n)][i] for n, i in entries]


def compose(symbol, replacements):
    """``symbol`` with its variables named in ``replacements`` replaced by those Symbols (a copy of the graph
    above them; MXNet's ``Symbol._compose``)."""
    names = {n.name for n in _variables(symbol._entries)}
    extra = [k for k in replacements if k not in names]
    if extra:
        raise ValueError(f"cannot compose {symbol!r}: {extra} are not its inputs ({sorted(names)})")
    for k, s in replacements.items():
        if not isinstance(s, Symbol):
            raise TypeError(f"compose: {k}= must be a Symbol, got {type(s).__name__}")
        _one_output(s, f"compose({k}=...)")
    new = {}

    def sub(obj):
        if isinstance(obj, Symbol):
            node, i = obj._entries[0]
            return Symbol._of([new[id(node)][i]])
        if type(obj) in (list, tuple):
            return type(obj)(sub(o) for o in obj)
        if isinstance(obj, dict):
            return {k: sub(v) for k, v in obj.items()}
        return obj

    for node in _topo(symbol._entries):
        if node.kind == "var":
            r = replacements.get(node.name)
            new[id(node)] = [r._entries[0]] if r is not None else [(node, 0)]
            continue
        if not any(new[id(x)][0][0] is not x for x in node.inputs):
            new[id(node)] = [(node, i) for i in range(node.nout)]
            continue
        copy = _Node("op", node.name, fn=node.fn, args=sub(node.args), kwargs=sub(node.kwargs), nout=node.nout,
                     op=node.op)
        for old, got in zip(node.inputs, copy.inputs):
            if id(old) in node.aux:
                copy.aux.add(id(got))
        new[id(node)] = [(copy, i) for i in range(node.nout)]
    return Symbol._of([new[id(n)][i] for n, i in symbol._entries])


def load_json(text, where="the graph"):
    """MXNet's graph JSON as a Symbol (``symbol_json.load_json``)."""
    from ast_hybrid.symbol import graph_json as symbol_json

    return symbol_json.load_json(text, where)


def to_json(entries, remove_amp_cast=True):
    """MXNet's graph JSON of ``entries`` (``symbol_json.to_json``)."""
    from ast_hybrid.symbol import graph_json as symbol_json

    return symbol_json.to_json(entries, remove_amp_cast)
