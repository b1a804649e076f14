"""A block called with ``sym.var`` placeholders: MXNet's ``net(mx.sym.var('data'))`` gives a ``Symbol``.

MXNet's hybridization chapter (and code written from it) calls a network with a symbolic variable to look
at the graph it builds::

    x = sym.var('data')
    y = net(x)                 # <Symbol dense2_fwd>
    y.list_arguments()         # ['data', 'dense0_weight', 'dense0_bias', ...]
    y.infer_shape(data=(3, 512))

ast-hybrid builds no symbolic graphs (a hybridized block is traced by JAX), so the :class:`Symbol` a block
returns here is the block applied to its placeholders, kept as it is: a lazy value.  What can be asked of
it without a graph is answered from the block: its name, its arguments (the placeholders, then the
parameters that are not running statistics, in the block's order), its auxiliary states (the running
statistics), its outputs, ``infer_shape``/``infer_type`` (the forward on shapes only, ``jax.eval_shape``;
parameters still waiting for their shape get it, and their initial value, as at a first call), and
``eval`` (the forward on the arrays given, by name).  Symbols compose: a block called with another
block's Symbol gives one whose input is that Symbol.  Anything that needs the graph itself (``tojson``,
``save``, ``bind``, arithmetic on Symbols, ``get_internals``) raises an error that says what to write
instead (``HybridBlock.export`` writes the program and its parameters).

Names: a layer's output is ``<its prefix>fwd`` as in MXNet (``dense2_fwd``, ``relu0_fwd``); a
``HybridSequential``'s is its last child's; a block with its own ``hybrid_forward`` is ``<prefix>fwd``
(MXNet names it after the last operator inside, which only a graph knows).  The number of outputs of a
block that returns several is known once shapes are (``infer_shape``, or a ``var`` given its shape).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Symbol", "is_symbolic", "apply"]

_NO_GRAPH = ("ast-hybrid builds no symbolic graphs: net(sym.var(...)) gives a Symbol that can name its "
             "arguments and outputs, infer_shape/infer_type and eval; to save the network as a program, "
             "hybridize() it, call it once on arrays and use net.export(path)")


class Symbol:
    """MXNet's ``Symbol`` as a block applied to placeholders (see the module's doc); made by calling a block
    with ``sym.var`` placeholders or other Symbols, never directly."""

    def __init__(self, *args, **kwargs):
        from ast_hybrid.mxnet._missing import unsupported

        raise unsupported("mxnet.symbol", "Symbol", _NO_GRAPH)

    @classmethod
    def _made(cls, block, inputs, index=None, parent=None):
        s = object.__new__(cls)
        s._block, s._inputs, s._index, s._parent = block, tuple(inputs), index, parent
        s._structure = None if parent is None else parent._structure     # output avals, once known
        s._shapes = None if parent is None else parent._shapes           # the last infer_shape's
        return s

    # -- names -----------------------------------------------------------------------------------
    @property
    def name(self):
        base = _output_name(self._block)
        return base if self._index is None else f"{base}{self._index}"

    def __repr__(self):
        return f"<Symbol {self.name}>"

    def list_inputs(self):
        return self._variable_names() + [p.name for p in self._params()]

    def list_arguments(self):
        return self._variable_names() + [p.name for p in self._params() if not _is_aux(p)]

    def list_auxiliary_states(self):
        return [p.name for p in self._params() if _is_aux(p)]

    def list_outputs(self):
        if self._index is not None:
            return [f"{self.name}_output"]
        n = self._count()
        base = self.name
        return [f"{base}_output"] if n is None else [f"{base}{i}_output" for i in range(n)]

    # -- outputs ---------------------------------------------------------------------------------
    def __len__(self):
        if self._index is not None:
            return 1
        n = self._count(needed="len()")
        return 1 if n is None else n

    def __getitem__(self, index):
        n = len(self)
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError(f"no output named {index!r}: the outputs are {names}")
            index = names.index(index)
        if not isinstance(index, int) or not -n <= index < n:
            raise IndexError(f"{self!r} has {n} output(s); index {index!r} is out of range")
        if self._index is not None or n == 1:
            return self
        return Symbol._made(self._block, self._inputs, index % n, parent=self)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # -- shapes, types, values -------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` in the order of ``list_arguments``, ``list_outputs`` and
        ``list_auxiliary_states``, from the placeholders' shapes given by position or by name."""
        shapes = self._given(args, kwargs, "infer_shape")
        outs = self._abstract(shapes, {})
        self._shapes = shapes       # infer_type reuses them
        return self._report(shapes, outs, lambda a: tuple(a.shape))

    def infer_shape_partial(self, *args, **kwargs):
        return self.infer_shape(*args, **kwargs)

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` as numpy types; the placeholders' shapes must be known
        (``sym.var(name, shape=...)``) since ast-hybrid infers types by running the forward on shapes."""
        dtypes = {k: np.dtype(v) for k, v in self._given(args, kwargs, "infer_type").items()}
        known = getattr(self, "_shapes", None) or {}
        shapes = {v.name: known.get(v.name, v.shape) for v in self._variables()}
        unknown = [k for k, s in shapes.items() if s is None]
        if unknown:
            raise ValueError(f"infer_type needs the shapes of {unknown}: give sym.var({unknown[0]!r}, "
                             "shape=...), or call infer_shape first")
        outs = self._abstract(shapes, dtypes)
        return self._report(shapes, outs, lambda a: np.dtype(a.dtype).type, dtypes=dtypes)

    def eval(self, ctx=None, **kwargs):
        """The outputs (a list of NDArrays) for the placeholders given by name; parameters given by name are
        used instead of the block's own."""
        from ast_hybrid import nd

        missing = [n for n in self._variable_names() if n not in kwargs]
        if missing:
            raise ValueError(f"eval needs a value for every placeholder: {missing} not given")
        values = {k: (v if isinstance(v, nd.NDArray) else nd.array(v)) for k, v in kwargs.items()}
        known = {p.name: p for p in self._params()}
        extra = [k for k in values if k not in known and k not in self._variable_names()]
        if extra:
            raise ValueError(f"eval was given {extra}, which are neither placeholders nor parameters of "
                             f"{self!r} (its inputs: {self.list_inputs()})")
        saved = {k: known[k].data() for k in values if k in known}
        try:
            for k in saved:
                known[k].set_data(values[k])
            out = self._run(values)
        finally:
            for k, v in saved.items():
                known[k].set_data(v)
        return [o for o in _leaves(out)]

    # -- what needs a graph ----------------------------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("__") or name.startswith("_"):
            raise AttributeError(name)
        from ast_hybrid.mxnet._missing import unsupported

        raise unsupported("mxnet.symbol", f"Symbol.{name}", _NO_GRAPH)

    def _refused(self, *args, **kwargs):
        return self.__getattr__("operators (+, -, *, ...)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refused
    __pow__ = __rpow__ = __neg__ = __matmul__ = __rmatmul__ = _refused

    # -- internals -------------------------------------------------------------------------------
    def _variables(self):
        from ast_hybrid.sym import Variable

        seen, out = set(), []
        for x in self._inputs:
            for v in ([x] if isinstance(x, Variable) else x._variables()):
                if v.name not in seen:
                    seen.add(v.name)
                    out.append(v)
        return out

    def _variable_names(self):
        return [v.name for v in self._variables()]

    def _params(self):
        seen, out = set(), []
        for x in self._inputs:
            if isinstance(x, Symbol):
                for p in x._params():
                    if id(p) not in seen:
                        seen.add(id(p))
                        out.append(p)
        for p in self._block.collect_params().values():
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
        return out

    def _given(self, args, kwargs, what):
        names = self._variable_names()
        if len(args) > len(names):
            raise ValueError(f"{what} was given {len(args)} positional values for {len(names)} placeholders "
                             f"({names})")
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise ValueError(f"{what}: {k!r} is not a placeholder of {self!r} (they are {names})")
            given[k] = v
        return given

    def _run(self, values):
        """The forward on ``values`` (NDArrays by placeholder name), each input Symbol computed first."""
        from ast_hybrid.sym import Variable

        args = [values[x.name] if isinstance(x, Variable) else _only(x._run(values), x) for x in self._inputs]
        out = self._block(*args)
        if self._index is not None:
            return _leaves(out)[self._index]
        return out

    def _abstract(self, shapes, dtypes):
        """The forward on shapes only: the outputs' ShapeDtypeStructs.  Parameters whose shape is still
        deferred get it (and their initial value) first, as a first call gives them."""
        import jax

        from ast_hybrid import nd

        variables = self._variables()
        unknown = [v.name for v in variables if shapes.get(v.name, v.shape) is None]
        if unknown:
            raise ValueError(f"the shape of {unknown} is needed: give it (infer_shape({unknown[0]}=...)) "
                             f"or as sym.var({unknown[0]!r}, shape=...)")
        avals = {v.name: jax.ShapeDtypeStruct(tuple(shapes.get(v.name) or v.shape),
                                              dtypes.get(v.name, np.dtype(v.dtype or "float32")))
                 for v in variables}
        params = self._params()
        if any(p._data is None for p in params):      # deferred shapes: one call on zeros gives them
            self._run({k: nd.zeros(a.shape, dtype=a.dtype) for k, a in avals.items()})

        def forward(arrays):
            return [o._arr for o in _leaves(self._run({k: nd.NDArray(a) for k, a in arrays.items()}))]

        outs = jax.eval_shape(forward, avals)
        if self._parent is None and self._index is None:
            self._structure = outs
        return outs

    def _count(self, needed=None):
        if self._structure is None:
            shapes = {v.name: v.shape for v in self._variables()}
            if all(s is not None for s in shapes.values()):
                self._abstract(shapes, {})
        if self._structure is not None:
            return len(self._structure)
        if needed:
            raise ValueError(f"{needed} of {self!r}: how many outputs the block returns is known once the "
                             "placeholders' shapes are: call infer_shape(...) first, or give sym.var(name, "
                             "shape=...)")
        return None

    def _report(self, given, outs, of, dtypes=None):
        dtypes = dtypes or {}
        args = []
        for name in self._variable_names():
            args.append(of(_Aval(given[name], dtypes.get(name, np.dtype("float32")))))
        params = self._params()
        args += [of(_Aval(p.shape, p.dtype)) for p in params if not _is_aux(p)]
        aux = [of(_Aval(p.shape, p.dtype)) for p in params if _is_aux(p)]
        out = [of(o) for o in outs]
        if self._index is not None:
            out = out[self._index:self._index + 1]
        return args, out, aux


class _Aval:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _only(out, symbol):
    leaves = _leaves(out)
    if len(leaves) != 1:
        raise ValueError(f"{symbol!r} has {len(leaves)} outputs and was given to a block as one input: "
                         f"pick one ({symbol!r}[i])")
    return leaves[0]


def _is_aux(p):
    from ast_hybrid.gluon.export import param_kind

    return param_kind(p) == "aux"


def _output_name(block):
    from ast_hybrid.gluon.nn import HybridSequential

    while isinstance(block, HybridSequential) and len(block._children):
        block = list(block._children.values())[-1]
    return f"{block.prefix}fwd"


def is_symbolic(args) -> bool:
    """Whether a block's call arguments are placeholders (``sym.var``) or Symbols."""
    from ast_hybrid.sym import Variable

    return any(isinstance(a, (Variable, Symbol)) for a in args)


def apply(block, args):
    """``block(*args)`` where ``args`` are placeholders/Symbols: the :class:`Symbol` (MXNet's graph output)."""
    from ast_hybrid.sym import Variable

    plain = [type(a).__name__ for a in args if not isinstance(a, (Variable, Symbol))]
    if plain:
        raise TypeError(f"{type(block).__name__} was called with sym.var placeholders mixed with {plain[0]}: "
                        "a call takes all NDArrays (it computes) or all placeholders (it gives a Symbol)")
    return Symbol._made(block, [_only_symbol(a) for a in args])


def _only_symbol(a):
    if isinstance(a, Symbol) and a._index is None and a._structure is not None and len(a._structure) != 1:
        raise ValueError(f"{a!r} has {len(a._structure)} outputs and was given to a block as one input: pick "
                         f"one ({a!r}[i])")
    return a
