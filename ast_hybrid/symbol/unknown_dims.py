"""A graph's arrays made with unknown (0) dimensions, as MXNet's shape inference resolves them.

MXNet's ``sym.zeros((0, H))`` (an RNN cell's ``begin_state`` for a batch the graph does not know yet) gets
its zeros from the nodes that consume it: MXNet infers shapes both ways through every operator.  Graphs here
infer shapes by running forward, so the unknown dimensions are found by trying: the graph run on shapes with
each candidate (the given inputs' dimensions, first axes first) until one runs through.
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
    from ast_hybrid.ops.deferred import Deferred, ShapeOnly, inferring

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

            with inferring():
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
