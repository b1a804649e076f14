"""A graph's arrays made with unknown (0) dimensions, as MXNet's shape inference resolves them; and types
inferred without shapes.

MXNet's ``sym.zeros((0, H))`` (an RNN cell's ``begin_state`` for a batch the graph does not know yet) gets
its zeros from the nodes that consume it: MXNet infers shapes both ways through every operator.  Graphs here
infer shapes by running forward, so the unknown dimensions are found by trying: the graph run on shapes with
each candidate (the given inputs' dimensions, first axes first) until one runs through.

MXNet's ``infer_type`` needs no shapes (its type rules are separate from its shape rules); graphs here infer
types by running on shapes too, so placeholders of unknown shape are given trial shapes (:data:`TRIAL_SHAPES`,
all the same) until one runs through: an operator's output types do not depend on the shapes it runs on.  And
MXNet types a placeholder from the operator reading it (a weight, or the second data of ``Correlation``, takes
the type of the op's data): :func:`completed_types`.  ``infer_shape_partial`` keeps a dimension MXNet cannot
know unknown (0; -1 under numpy shapes): the graph is run with the unknown dimensions set to a few sizes
(:data:`PROBES`), and an output dimension that is not the same in every run is unknown: :func:`partial`.
"""

from __future__ import annotations

import itertools

from ast_hybrid.symbol import graph


def unknown_creation(node):
    """An op node that makes an array of a given ``shape`` from no input, with unknown (0) dimensions:
    MXNet's ``sym.zeros((0, H))``, an RNN cell's ``begin_state`` for a batch the graph does not know yet."""
    shape = node.kwargs.get("shape") if node.kind == "op" and not node.inputs else None
    return isinstance(shape, (list, tuple)) and any(d in (0, -1) for d in shape)     # (-1: MXNet's other spelling)


def resolved(order, entries, lookup, extra):
    """``extra`` with a ``shape`` for each creation node of unknown dimensions: MXNet infers them from the
    nodes that consume the array; here the graph is run on shapes with each unknown dimension taken from the
    given inputs' dimensions (their first axes first) until one runs through, that one kept."""
    import jax

    from ast_hybrid.core.ndarray import NDArray
    from ast_hybrid.ops.deferred import Deferred, ShapeOnly, inferring, shapes_only

    unknown = [n for n in order if unknown_creation(n) and not (extra and "shape" in extra.get(id(n), {}))]
    if not unknown:
        return extra
    avals, standins = {}, {}
    for n in order:
        if n.kind != "var":
            continue
        v = lookup(n)
        if isinstance(v, Deferred):
            standins[n.name] = v.param
        else:
            v = v._arr if isinstance(v, NDArray) else v
            avals[n.name] = jax.ShapeDtypeStruct(tuple(v.shape), v.dtype)
    candidates = []
    free = [a.shape for k, a in avals.items() if not any(m.name == k and m.param is not None for m in order)]
    # (and the known dimensions of the other arrays made from a shape: sym.ones((2, 3)) + sym.ones((-1, -1)).T)
    free += [tuple(n.kwargs["shape"]) for n in order if n.kind == "op" and not n.inputs
             and isinstance(n.kwargs.get("shape"), (list, tuple))]
    for axis in range(max((len(sh) for sh in free), default=0)):
        for sh in free:
            if len(sh) > axis and sh[axis] > 0 and sh[axis] not in candidates:
                candidates.append(sh[axis])
    params = [m.param for m in order if m.kind == "var" and m.param is not None]
    slots = sum(sum(d in (0, -1) for d in n.kwargs["shape"]) for n in unknown)
    if slots <= 4 and len(candidates) ** slots <= 256:     # few: each unknown dimension its own candidate
        choices = list(itertools.product(candidates, repeat=slots))
    else:                                                   # else one candidate for all of them
        choices = [(c,) * slots for c in candidates]
    for choice in choices:
        trial, picks = dict(extra or {}), iter(choice)
        for n in unknown:
            trial[id(n)] = dict(trial.get(id(n), {}),
                                shape=tuple(next(picks) if d in (0, -1) else d for d in n.kwargs["shape"]))
        saved = [(p, p.shape) for p in params]

        def run(arrays, trial=trial):
            def lookup_shape(m):
                return NDArray(arrays[m.name]) if m.name in arrays else ShapeOnly(standins[m.name])

            with inferring(), shapes_only():
                return [o._arr for o in graph.evaluate(entries, lookup_shape, trial)]

        try:
            jax.eval_shape(run, avals)
        except Exception:       # noqa: BLE001 - any error of the ops: this candidate does not fit
            for p, shape in saved:      # what it inferred for the parameters' shapes, undone
                p._shape = shape
            continue
        return trial
    names = ", ".join(f"{n.name!r} {tuple(n.kwargs['shape'])}" for n in unknown)
    raise ValueError(f"cannot infer the unknown (0) dimensions of {names}: no dimension of the inputs "
                     f"({candidates}) fits the ops that use it; give the full shape")


# placeholders' shapes tried for a graph's types: image-like first (most of MXNet's ops take them), then others
TRIAL_SHAPES = ((2, 3, 8, 8), (2, 3, 8), (2, 8), (8,), (2, 3, 4, 8, 8))


def types_on_trial_shapes(symbol, shapes, dtypes, unknown):
    """``symbol.infer_type``'s answer with the placeholders ``unknown`` (names, shapes not known) given each of
    :data:`TRIAL_SHAPES` until the graph runs (the data placeholders only, the ops inferring their weights';
    else all); a graph holding parameters is not tried (a trial would give them its shape)."""
    order = graph._topo(symbol._entries)
    # the placeholders an op reads as its data first (the others, weights, the op infers from the data)
    data = [k for k in unknown if any(n.kind == "op" and n.inputs and n.inputs[0].name == k for n in order)]
    if not any(n.param is not None for n in graph._variables(symbol._entries)):
        for trial, given in itertools.product(TRIAL_SHAPES, (data, unknown) if data != unknown else (unknown,)):
            trial_shapes = dict(shapes, **{k: trial for k in given})
            try:
                return symbol._types(trial_shapes, completed_types(symbol, trial_shapes, dtypes))
            except Exception:       # noqa: BLE001 - any error of the ops: this trial does not fit
                continue
    raise ValueError(f"infer_type needs the shapes of {unknown}: give sym.var({unknown[0]!r}, shape=...), or call "
                     "infer_shape first")


# ops whose parameters stay float32 under float16 data (MXNet's BatchNorm type rule)
_FLOAT32_PARAMETERS = frozenset({"BatchNorm", "_contrib_SyncBatchNorm", "_contrib_BatchNormWithReLU"})


def completed_types(symbol, shapes, dtypes):
    """``dtypes`` (name -> type) with each placeholder of no given type typed as MXNet types it from the first
    operator reading it: that op's first other input's floating type (its data: a weight of a float16 layer is
    float16, an Embedding's weight reading int32 indices stays float32); the graph run once to see its types."""
    import numpy as np

    order = graph._topo(symbol._entries)
    free = [n for n in graph._free_variables(symbol._entries)
            if n.name not in dtypes and not n.attrs.get("__dtype__")]
    if not free or not dtypes:
        return dtypes
    seen = {}
    firsts = [dtypes]       # (a run with them float32 may fail where an op wants one type: then the given one)
    if len(set(dtypes.values())) == 1:
        firsts.append(dict(dtypes, **{n.name: next(iter(dtypes.values())) for n in free}))
    for first_types in firsts:
        try:
            symbol._abstract(dict(shapes), first_types,
                             monitor=lambda node, values: seen.__setitem__(id(node), values[id(node)]))
            break
        except Exception:       # noqa: BLE001 - this run does not fit; the types' own run says what is wrong
            seen.clear()
    else:
        return dtypes
    types = dict(dtypes)
    for var in free:
        reader = next((n for n in order if n.kind == "op" and any(x is var for x in n.inputs)), None)
        if reader is None or (reader.op in _FLOAT32_PARAMETERS and reader.inputs[0] is not var):
            continue
        for s in graph._symbols_in((reader.args, reader.kwargs)):     # its data first, then the others
            node, index = s._entries[0]
            if node is var:
                continue
            dtype = types.get(node.name) if node.kind == "var" else np.dtype(seen[id(node)][index].dtype)
            if dtype is not None and np.issubdtype(dtype, np.floating):
                types[var.name] = np.dtype(dtype)
            break
    return types


# the sizes an unknown dimension is given by turns (a small one: slicing 0:5 of it is then no longer 5)
PROBES = (1009, 1013, 2)


def partial(symbol, given):
    """MXNet's ``infer_shape_partial``: ``(arg_shapes, out_shapes, aux_shapes)`` with the dimensions that
    depend on an unknown one (0, or -1 under numpy shapes, in the placeholders' given or declared shapes)
    left unknown; a graph holding parameters, or whose placeholders are all known, as ``infer_shape``.
    Where MXNet is more cautious: fixed bounds sliced from an unknown axis (``slice_axis(x, 1, 0, 5)`` of a
    (10, 0) ``x``) give their size here, 5, MXNet's 0."""
    from ast_hybrid.core.npmode import MODE

    hole = -1 if MODE.shape else 0
    shapes = {}
    for n in graph._free_variables(symbol._entries):
        s = given.get(n.name, n.attrs.get("__shape__"))
        if s is not None:
            shapes[n.name] = tuple(int(d) for d in s)
    holes = {k: [i for i, d in enumerate(s) if d == hole] for k, s in shapes.items()}
    if not any(holes.values()) or any(n.param is not None for n in graph._variables(symbol._entries)):
        return symbol.infer_shape(**given)
    saved, runs = symbol._shapes, []
    for size in PROBES:
        trial = {k: tuple(size if i in holes[k] else d for i, d in enumerate(s)) for k, s in shapes.items()}
        try:
            runs.append(symbol.infer_shape(**trial))
        except Exception:       # noqa: BLE001 - a size this graph cannot take: the other probes decide
            continue
    symbol._shapes = saved
    if len(runs) < 2:
        raise ValueError(f"infer_shape_partial: the graph runs with at most one size for the unknown dimensions of "
                         f"{sorted(k for k, v in holes.items() if v)}; give their shapes")

    def merged(*shapes):
        if any(s is None for s in shapes):
            return None
        return tuple(dims[0] if len(set(dims)) == 1 else hole for dims in zip(*shapes))

    return tuple([merged(*same) for same in zip(*(run[part] for run in runs))] for part in range(3))
