"""Deferred initialisation before a hybridized block's first compile: the passes that give parameters of
unknown shape their shape and initial value (the stand-in and the ops' hook are ``ast_hybrid/ops/deferred.py``).
"""

from __future__ import annotations

from ast_hybrid.ops.deferred import Deferred, inferring  # noqa: F401  (the names block.py and symbols use)

__all__ = ["Deferred", "inferring", "first_pass", "concrete_pass"]


def first_pass(block, args):
    """Give every parameter of ``block`` whose shape is still unknown its shape and initial value, as the first
    call of a hybridized block needs before its program can be built.

    The pass runs the forward once on shapes only (``jax.eval_shape``: each op traces, none computes or
    compiles) while each parameter is initialised concretely when its shape becomes known
    (``Parameter._finish_deferred_init`` evaluates its initializer eagerly even inside the trace), in the
    order the forward reaches it, with the same draws from the eager random stream as a concrete pass: the
    values are those of running the forward op by op on the arrays (:func:`concrete_pass`, what this did
    before).  Nested hybridized blocks run inside the same trace, as they do in the block's program, instead
    of each building a program of its own.  A forward the abstract pass cannot run (one that reads a value
    on the host, writes a parameter, or fails in any other way) falls back to the concrete pass from the
    state before it, so errors and values are those of the concrete pass."""
    import jax

    from ast_hybrid.ops import rng

    params = list(block.collect_params().values())
    rng._base()     # the eager stream's base key exists before the trace (drawn inside, it would be a tracer)
    saved = [(p, p._value, p._shape, p._deferred_init, p._leaf) for p in params], list(rng._GLOBAL)
    try:
        _abstract_pass(block, args)
        ok = not any(isinstance(p._value, jax.core.Tracer) for p in params)
    except Exception:       # noqa: BLE001 - whatever it is, the concrete pass gives it (or succeeds)
        ok = False
    if not ok:
        for p, data, shape, deferred, leaf in saved[0]:
            p._value, p._shape, p._deferred_init, p._leaf = data, shape, deferred, leaf
        rng._GLOBAL[:] = saved[1]
        concrete_pass(block, args)


def concrete_pass(block, args):
    """The deferred-shape pass on the arrays themselves: the forward op by op, each op computing (and
    compiling for its shapes), nested hybridized blocks building their own programs; writes made by custom
    ops are dropped (``imperative(None)``)."""
    from ast_hybrid.core import autograd
    from ast_hybrid.gluon.programs import imperative

    with autograd.mode_scope(False, False), imperative(None):
        block._call_imperative(*args)


def _abstract_pass(block, args):
    import jax

    from ast_hybrid.core import autograd
    from ast_hybrid.gluon.programs import Trace, imperative
    from ast_hybrid.core.ndarray import ARRAYS, NDArray

    leaves, treedef = jax.tree_util.tree_flatten(list(args), is_leaf=lambda v: v.__class__ in ARRAYS)
    where = [i for i, v in enumerate(leaves) if v.__class__ in ARRAYS or _is_array(v)]
    specs = [jax.ShapeDtypeStruct(leaves[i].shape, leaves[i].dtype) for i in where]

    def run(*arrays):
        given = list(leaves)
        for i, a in zip(where, arrays):
            given[i] = NDArray(a)
        # on the trace stack (with no parameter bound), so that nested hybridized blocks run in this trace as
        # they do in the block's program, with the converted forwards
        with Trace([], []).bound(), autograd.mode_scope(False, False), imperative(None):
            block._call_imperative(*jax.tree_util.tree_unflatten(treedef, given))

    jax.eval_shape(run, *specs)


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")
