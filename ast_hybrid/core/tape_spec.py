"""A recorded call's key and spec: how ``autograd.record_op`` describes a node without its arrays, so that two
calls of one op on arrays of the same shapes share a compiled backward (``core/tape_program.py``), and how a
spec is run again on traced values.

``_keyed`` turns a call's arguments into ``(key, consts, spec)``: the tracked inputs become ``_Slot`` markers,
the other arrays ``_Const`` markers into ``consts`` (the key keeps their shapes and dtypes), Python and NumPy
scalars stay static (a NumPy scalar's type goes into the key); ``_call_spec`` runs a spec with its consts and
tracked values; ``_without`` is a call's arguments with its tracked inputs dropped (what a node keeps).
"""

from __future__ import annotations


def _placed(plain_args, plain_kwargs, slots, values):
    """``plain_args``/``plain_kwargs`` with ``values`` where the tracked inputs (``slots``) go."""
    a, kw = list(plain_args), dict(plain_kwargs)
    for (where, j), value in zip(slots, values):
        if isinstance(where, str):
            kw[where] = value
        elif j is None:
            a[where] = value
        else:
            seq = list(a[where])
            seq[j] = value
            a[where] = type(plain_args[where])(seq)
    return a, kw


def _without(plain_args, plain_kwargs, slots):
    """``plain_args``/``plain_kwargs`` with None where the tracked inputs (``slots``) were."""
    return _placed(plain_args, plain_kwargs, slots, [None] * len(slots)) if slots else (plain_args, plain_kwargs)


class _Slot(tuple):
    """In a node's spec: the ``i``-th tracked input (``("slot", i)``)."""


class _Const(tuple):
    """In a node's spec: a pytree of the node's arrays (``("const", treedef, first index, count)``)."""


def _template(v, consts, scalar_types):
    """In a node's key and spec: ``v`` as it is (a static argument), or a ``_Const`` marker whose arrays go into
    ``consts`` (a NumPy scalar stays static, its type going into ``scalar_types``).  A function of the module,
    not a closure of ``_keyed``: a closure that calls itself is a reference cycle, which kept every node of a
    training step (and the arrays it held) until Python's cyclic collector ran (300 ms pauses in an op-by-op
    ImageNet epoch)."""
    import jax
    import numpy as np

    if v.__class__ in (int, float, bool, str, type(None)) or isinstance(v, type):     # (dtype=np.float32)
        return v
    if isinstance(v, np.generic):     # a NumPy scalar (a shape's np.int64): static, its type in the key
        scalar_types.append(v.__class__)
        return v
    if v.__class__ in (list, tuple):
        return v.__class__(_template(x, consts, scalar_types) for x in v)
    leaves, treedef = jax.tree_util.tree_flatten(v)
    if any(hasattr(x, "shape") and hasattr(x, "dtype") for x in leaves):
        first = len(consts)
        consts.extend(leaves)
        return _Const(("const", treedef, first, len(leaves)))
    return v


def _keyed(impl, plain_args, plain_kwargs, slots):
    """``(key, consts, spec)`` of a node (``_Node``), or ``(None, (), None)`` where a static argument is not
    hashable."""
    consts, scalar_types = [], []

    def template(v):
        return _template(v, consts, scalar_types)

    where = {}
    for k, (w, j) in enumerate(slots):
        where[(w, j)] = _Slot(("slot", k))
    args = []
    for i, a in enumerate(plain_args):
        if a.__class__ in (list, tuple):
            args.append(type(a)(where.get((i, j)) or template(v) for j, v in enumerate(a)))
        else:
            args.append(where.get((i, None)) or template(a))
    kwargs = tuple((k, where.get((k, None)) or template(v)) for k, v in plain_kwargs.items())
    # dtypes as they are (hashable; str() of a NumPy dtype costs microseconds, per residual of a program); a list
    # argument (``np.concatenate(outputs)``) as a tuple marked list in the key, a list in the spec
    hashable = tuple((list, tuple(a)) if a.__class__ is list else a for a in args)
    key = (impl, hashable, kwargs, tuple((getattr(c, "shape", None), getattr(c, "dtype", None)) for c in consts))
    if scalar_types:
        key += (tuple(scalar_types),)
    try:
        hash(key)
    except TypeError:
        return None, (), None
    return key, tuple(consts), (impl, args, dict(kwargs))


def _call_spec(spec, consts, tracked):
    """Run a node as its spec says, with its ``consts`` and ``tracked`` inputs (traced or not)."""
    import jax

    impl, args, kwargs = spec

    def fill(v):
        if v.__class__ is _Slot:
            return tracked[v[1]]
        if v.__class__ is _Const:
            return jax.tree_util.tree_unflatten(v[1], consts[v[2]:v[2] + v[3]])
        if v.__class__ in (list, tuple):
            return type(v)(fill(x) for x in v)
        return v

    return jax.tree_util.tree_leaves(impl(*[fill(a) for a in args], **{k: fill(v) for k, v in kwargs.items()}))
