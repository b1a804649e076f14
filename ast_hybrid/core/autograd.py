"""MXNet's recording/training switches and imperative gradients: the state and the tape behind ``ast_hybrid.autograd``.

The switches mirror ``mxnet.autograd``: ``record(train_mode=True)``,
``pause(train_mode=False)``, ``train_mode()``, ``predict_mode()`` are context
managers; ``is_recording()``, ``is_training()``, ``set_recording(flag)``,
``set_training(flag)`` read and set them.  A hybridized block compiles one
program per training mode: the mode is static inside it.

Gradients work as in MXNet: ``x.attach_grad()``, ``with autograd.record(): y =
f(x)``, ``y.backward()``, then ``x.grad``; parameters of blocks run under
``record()`` get ``param.grad()``.  How: while recording, each op called on a
tracked array is put on a tape as a pure function of its tracked inputs (the
op's own jax code with its static arguments, and for a hybridized block its
compiled program's output and pullback).  ``backward()`` replays the tape under
``jax.vjp`` from the leaves to the heads (a hybridized block's node is not run
again: its gradient is its pullback); from the second ``backward()`` over a tape
of the same structure (a training loop's), that replay and pullback are one
compiled program (``tape_program.compiled_tape``).  Random ops draw their key before
recording, so the replay sees the same masks.  ``grad(..., create_graph=True)``
puts the gradients on the tape as one node (the pullback of the replay), so a
backward through them gives second derivatives; ``ast_hybrid.functional(net)``
with ``jax.grad`` is the way to fast training loops.  ``Function`` (MXNet's custom
gradients, ``ast_hybrid.autograd.Function``) is lowered to ``jax.custom_vjp`` by the ops
(``ast_hybrid/ops/function.py``).

The recording and training switches, and the traces in progress, are per thread, as MXNet's are: a thread
starts with both off whatever another thread does.  The tape is made of the arrays' own records, so each
thread's ``backward()`` runs over what its own recorded ops produced.  Here is the state and the tape; the
public module is ``ast_hybrid.autograd`` (which adds ``Function``).

Some ops act in their backward pass, as in MXNet: BatchNorm updates its
running statistics when its backward runs, that is when ``backward()`` (or
``grad()``) reaches its node and one of its inputs leads to a variable that
gets a gradient; not in the forward, not without recording, and not for a
BatchNorm whose inputs need no gradient.  Such an op registers the action with
``on_backward(output, fn)``; ``backward()`` runs the actions of the nodes it
differentiates in reverse recording order (MXNet's backward order: a layer
called twice updates with the second call's statistics first).  Inside a
compiled program's trace there is no tape: values that depend on an input
that gets a gradient carry the marker ``DEPENDS``, and the actions are
collected by ``program_effects()`` for the program to return.  (An example: ``ast_hybrid/autograd.py``.)
"""

from __future__ import annotations

import contextlib
import itertools
import threading

from ast_hybrid.core.errors import clean_error, unsupported
from ast_hybrid.core.context import filled
from ast_hybrid.core.tape_spec import _keyed, _placed, _without

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training", "set_recording",
           "set_training", "mark_variables", "backward", "grad", "get_symbol"]

# not MXNet API (as STATE, mode_scope and record_op): how ops act in the backward pass (module doc)
DEPENDS = type("Depends", (), {"__repr__": lambda self: "DEPENDS", "__slots__": ()})()


class _ThreadState(threading.local):
    """This thread's autograd state, as MXNet keeps it (per thread): ``recording`` and ``training`` (read on
    every op call and every hybridized call), and ``effects``: one list per compiled-program trace in progress
    in this thread (innermost last).  Another thread starts with recording and training off: a data-loading or
    serving thread's ops never land on this thread's tape."""

    def __init__(self):
        self.recording = False
        self.training = False
        self.effects = []


STATE = _ThreadState()


def is_recording() -> bool:
    return STATE.recording


def is_training() -> bool:
    return STATE.training


def set_recording(is_recording):  # noqa: F811  (MXNet's parameter name)
    """Set recording on or off (in this thread); returns the previous state."""
    prev = STATE.recording
    STATE.recording = bool(is_recording)
    return prev


def set_training(train_mode):  # noqa: F811
    """Set training mode on or off (in this thread); returns the previous state."""
    prev = STATE.training
    STATE.training = bool(train_mode)
    return prev


@contextlib.contextmanager
def mode_scope(recording, training):
    """Within: recording and training as given (None keeps the current one); restored after.

    What ``record()``, ``pause()``, ``train_mode()`` and ``predict_mode()`` are, and what the front uses to
    run a block's call with both off.  Not MXNet API (as ``STATE`` and ``record_op``: ast-hybrid's own)."""
    state = STATE
    prev = state.recording, state.training
    if recording is not None:
        state.recording = bool(recording)
    if training is not None:
        state.training = bool(training)
    try:
        yield
    finally:
        state.recording, state.training = prev


def record(train_mode=True):  # noqa: F811
    """Record the ops run inside for ``backward()``; training mode by default."""
    return mode_scope(True, train_mode)


def pause(train_mode=False):  # noqa: F811
    """Stop recording inside (predict mode by default)."""
    return mode_scope(False, train_mode)


def train_mode():
    """Training mode inside (Dropout active, BatchNorm uses batch statistics); recording unchanged."""
    return mode_scope(None, True)


def predict_mode():
    """Predict mode inside; recording unchanged."""
    return mode_scope(None, False)


# --- the tape ------------------------------------------------------------------------

_SEQ = itertools.count()


class _Leaf:
    """A variable gradients are taken for: ``x.attach_grad()`` or a parameter."""

    __slots__ = ("grad_req", "grad", "fresh", "__weakref__")

    def __init__(self, grad_req="write", grad=None):
        if grad_req not in ("write", "add", "null"):
            raise ValueError(f"attach_grad: unknown grad_req={grad_req!r}; expected 'write', 'add' or 'null'")
        self.grad_req = grad_req
        self.grad = grad
        self.fresh = False      # MXNet's _fresh_grad: written by a backward since the Trainer's last update

    def accumulate(self, g):
        if self.grad_req != "null":
            self.fresh = True
        if self.grad_req == "add" and self.grad is not None:
            self.grad = self.grad + g
        elif self.grad_req != "null":
            self.grad = g


class _BufferedLeaf(_Leaf):
    """A variable marked with a gradient array of the caller's (``mark_variables([x], [dx])``): each
    gradient written is written into that array too, and ``x.grad`` is it, as in MXNet."""

    __slots__ = ("buffer",)

    def __init__(self, grad_req, grad, buffer):
        super().__init__(grad_req, grad)
        self.buffer = buffer

    def accumulate(self, g):
        # the caller's array is the gradient: 'add' adds to what it holds now (``dx[:] = 0`` resets it)
        if self.grad_req != "null":
            self.fresh, current = True, self.buffer._arr
            self.grad = self.buffer._arr = (current + g if self.grad_req == "add" else g).astype(current.dtype)


class _Node:
    """One recorded call: ``fn(*tracked input arrays) -> list of output arrays``; ``effects``: what its
    backward does besides gradients (``on_backward``).  ``key`` (hashable, or None) describes the call
    without its arrays: the op, its static arguments, where its tracked inputs and its other arrays
    (``consts``) go; two nodes with one key compute the same function of (tracked, consts), which
    ``spec = (impl, args, kwargs)`` rebuilds (``_call_spec``)."""

    __slots__ = ("fn", "inputs", "seq", "effects", "key", "consts", "spec", "freed")

    def __init__(self, fn, inputs, key=None, consts=(), spec=None):
        self.fn, self.inputs, self.seq, self.effects = fn, inputs, next(_SEQ), None
        self.key, self.consts, self.spec = key, consts, spec
        self.freed = False      # its graph's backward ran without retain_graph (see ``live``)


def live(nd):
    """Whether ``nd`` is in a computational graph now.  A backward without ``retain_graph`` frees its graph,
    as MXNet's does: an array recorded in it (an RNN's hidden state carried into the next step) is then a
    constant to what is recorded next (MXNet: its AGInfo is cleared), so the tape does not grow step after
    step through every earlier graph."""
    ag = nd._ag
    if ag is None:
        return False
    if ag.__class__ is tuple and ag[0].freed:
        nd._ag = None
        return False
    return True


def on_backward(output, fn):
    """Run ``fn()`` when the backward pass differentiates the op that made ``output`` (an NDArray).

    Nothing happens when ``output`` is not recorded (no recording, or no input of the op needs a gradient).
    Inside a compiled program's trace (``program_effects``) ``fn`` is collected for the program to run at
    the end of its trace, when ``output`` depends on an input of the program that gets a gradient."""
    ag = getattr(output, "_ag", None)
    if ag is DEPENDS:
        STATE.effects[-1].append(fn)
    elif ag.__class__ is tuple:
        node = ag[0]
        if node.effects is None:
            node.effects = []
        node.effects.append(fn)


@contextlib.contextmanager
def program_effects():
    """Within: a compiled program's trace.  Ops called while recording mark their outputs ``DEPENDS`` when an
    input is marked (nothing goes on the tape), and ``on_backward`` actions are collected in the list
    yielded, in call order."""
    pending = []
    effects = STATE.effects
    effects.append(pending)
    try:
        yield pending
    finally:
        effects.pop()


def _ref(nd):
    """How a node refers to a tracked input: (leaf, value) or (node, output index)."""
    ag = nd._ag
    return (ag, nd._arr) if isinstance(ag, _Leaf) else ag


def record_op(impl, args, kwargs, result=None):
    """Run (or take the ``result`` of) ``impl`` on ``args``, and put it on the tape: NDArray outputs."""
    import jax

    from ast_hybrid.core.ndarray import ARRAYS, NDArray

    if STATE.effects:       # inside a compiled program's trace: only which values depend on a differentiated input
        if result is None:
            result = impl(*[_plain(a) for a in args], **{k: _plain(v) for k, v in kwargs.items()})
        leaves, treedef = jax.tree_util.tree_flatten(result)
        out = jax.tree_util.tree_unflatten(treedef, [NDArray(v, DEPENDS) for v in leaves])
        return [o for o in out] if isinstance(out, tuple) else out

    slots, refs = [], []          # where each tracked input sits, and its reference

    def plain(v, where):
        if v.__class__ not in ARRAYS:
            return v
        if live(v):
            slots.append(where)
            refs.append(_ref(v))
        return v._arr

    plain_args = [type(a)(plain(v, (i, j)) for j, v in enumerate(a)) if a.__class__ in (list, tuple)
                  else plain(a, (i, None)) for i, a in enumerate(args)]
    plain_kwargs = {k: plain(v, (k, None)) for k, v in kwargs.items()}
    if result is None:
        result = impl(*plain_args, **plain_kwargs)
    # the node keeps its other arguments, not its tracked inputs' values: a backward replays the tape from its
    # leaves, so an activation nothing else holds is freed now (kept, op-by-op training held every layer's
    # output twice at the backward: d2l's ResNet at batch 256 past 8 GB, MXNet's 2.7)
    held_args, held_kwargs = _without(plain_args, plain_kwargs, slots)

    def fn(*tracked):
        a, kw = _placed(held_args, held_kwargs, slots, tracked)
        return jax.tree_util.tree_leaves(impl(*a, **kw))

    leaves, treedef = jax.tree_util.tree_flatten(result)
    node = _Node(fn, refs, *_keyed(impl, plain_args, plain_kwargs, slots))
    wrapped = [NDArray(v, (node, i)) for i, v in enumerate(leaves)]
    out = jax.tree_util.tree_unflatten(treedef, wrapped)
    return [o for o in out] if isinstance(out, tuple) else out


def _plain(a):
    from ast_hybrid.core.ndarray import ARRAYS

    if a.__class__ in ARRAYS:
        return a._arr
    if a.__class__ in (list, tuple):
        return type(a)(v._arr if v.__class__ in ARRAYS else v for v in a)
    return a


def mark_variables(variables, gradients=None, grad_reqs="write"):
    """Make ``variables`` leaves of the graph (what ``x.attach_grad()`` does)."""
    if not isinstance(variables, (list, tuple)):
        variables = [variables]
    if not isinstance(grad_reqs, (list, tuple)):
        grad_reqs = [grad_reqs] * len(variables)
    gradients = gradients if gradients is not None else [None] * len(variables)
    if not isinstance(gradients, (list, tuple)):
        gradients = [gradients]
    for v, g, req in zip(variables, gradients, grad_reqs):
        init = filled(v._arr.shape, 0, v._arr.dtype, like=v._arr) if g is None else getattr(g, "_arr", g)
        v._ag = _BufferedLeaf(req, init, g) if hasattr(g, "_arr") else _Leaf(req, init)


def grad_of(nd):
    """``nd.grad``: the gradient buffer of an attached variable, or None."""
    ag = nd._ag
    if type(ag) is _BufferedLeaf:
        return ag.buffer
    if isinstance(ag, _Leaf):
        if ag.grad is None or ag.grad_req == "null":      # MXNet: attach_grad('null') gives no buffer
            return None
        from ast_hybrid.core.storage import grad_storage

        out = type(nd)(ag.grad)
        out._base = (grad_storage(ag), None)
        return out
    return None


def _graph(heads):
    """Nodes reachable from ``heads`` (in recording order) and the leaves with their primal values."""
    nodes, leaves, stack = {}, {}, []
    for h in heads:
        ag = h._ag
        if ag is None:
            raise RuntimeError("Cannot differentiate node because it is not in a computational graph. You need "
                               "to set is_recording to true or use autograd.record() to save computational "
                               "graphs for backward. If you want to differentiate the same graph twice, you "
                               "need to pass retain_graph=True to backward.")
        if isinstance(ag, _Leaf):
            leaves.setdefault(ag, h._arr)
        else:
            stack.append(ag[0])
    while stack:
        node = stack.pop()
        if id(node) in nodes:
            continue
        nodes[id(node)] = node
        for ref in node.inputs:
            if isinstance(ref[0], _Leaf):
                leaves.setdefault(ref[0], ref[1])
            else:
                stack.append(ref[0])
    return sorted(nodes.values(), key=lambda n: n.seq), leaves


def _head_value(h, env, leaf_pos, primals):
    ag = h._ag
    if isinstance(ag, _Leaf):
        return primals[leaf_pos[ag]]
    return env[id(ag[0])][ag[1]]


def _vjp(heads, head_grads, leaf_filter=None):
    """Gradients of ``heads`` (weighted by ``head_grads``) for every leaf of their graph: {leaf: array}.

    A custom gradient's error (``autograd.Function``, ``CustomOp``: a ``core.errors.CustomError``) comes out as
    it was raised, without what JAX wraps around it on the way (``core.errors.clean_error``)."""
    try:
        return _vjp_run(heads, head_grads, leaf_filter)
    except Exception as exc:
        err = clean_error(exc)
        if err is None:
            raise
        raise err from err.__cause__


def _vjp_run(heads, head_grads, leaf_filter):
    import jax
    import jax.numpy as jnp

    order, leaves = _graph(heads)
    leaf_list = [leaf for leaf in leaves if leaf_filter is None or leaf in leaf_filter]
    leaf_pos = {leaf: i for i, leaf in enumerate(leaf_list)}
    fixed = {leaf: v for leaf, v in leaves.items() if leaf not in leaf_pos}

    def forward(primals):
        env = {}
        for node in order:
            vals = []
            for ref in node.inputs:
                if isinstance(ref[0], _Leaf):
                    vals.append(primals[leaf_pos[ref[0]]] if ref[0] in leaf_pos else fixed[ref[0]])
                else:
                    vals.append(env[id(ref[0])][ref[1]])
            env[id(node)] = node.fn(*vals)
        return [_head_value(h, env, leaf_pos, primals) for h in heads]

    primals = [leaves[leaf] for leaf in leaf_list]
    head_grads = [None if g is None else getattr(g, "_arr", g) for g in head_grads or [None] * len(heads)]
    grads = None
    integer = [getattr(p.dtype, "kind", None) in ("i", "u", "b") for p in primals]   # NumPy kinds: int, uint, bool
    if any(integer):      # MXNet differentiates integer arrays too (in their type): replayed on float values
        as_float = [p.astype(_float_for(p.dtype)) if i else p for p, i in zip(primals, integer)]
        try:
            outs, pullback = jax.vjp(forward, as_float)
            (grads,) = pullback(_cotangents(outs, head_grads))
        except (TypeError, ValueError):     # an op defined on integers only (bitwise, ...): no gradient
            grads = None
        else:
            # into the integer type as MXNet's C casts do it (its _backward_cast, an int scalar op's int(scalar)):
            # toward zero
            grads = [jnp.trunc(g) if i and g.dtype != jax.dtypes.float0 else g for g, i in zip(grads, integer)]
    if grads is None:
        from ast_hybrid.core.tape_program import compiled_tape

        compiled = compiled_tape(order, heads, leaf_pos, fixed, head_grads)
        if compiled is not None:
            program, fixed_values = compiled
            grads = program(primals, fixed_values, [n.consts for n in order], head_grads)
        else:
            outs, pullback = jax.vjp(forward, primals)
            (grads,) = pullback(_cotangents(outs, head_grads))
    result = {}
    for leaf, g, p in zip(leaf_list, grads, primals):
        if g.dtype == jax.dtypes.float0:
            g = jnp.zeros_like(p)
        result[leaf] = g if g.dtype == p.dtype else g.astype(p.dtype)
    _run_effects(order, leaf_pos)
    return result


def _float_for(dtype):
    """The float type an integer leaf is differentiated in: exact for its values (float64 where JAX has it)."""
    import jax
    import numpy as np

    return np.float64 if jax.config.jax_enable_x64 and np.dtype(dtype).itemsize >= 4 else np.float32


def _cotangents(outs, head_grads):
    import jax.numpy as jnp

    return [jnp.ones_like(o) if g is None else jnp.asarray(g, o.dtype).reshape(o.shape)
            for o, g in zip(outs, head_grads)]


def _run_effects(order, differentiated):
    """The ``on_backward`` actions of the nodes whose backward runs: those with an input that leads to a
    differentiated leaf (with grad_req other than 'null'), in reverse recording order, as MXNet's backward."""
    needed, todo = set(), []
    for node in order:
        if any(id(ref[0]) in needed if not isinstance(ref[0], _Leaf)
               else ref[0] in differentiated and ref[0].grad_req != "null" for ref in node.inputs):
            needed.add(id(node))
            if node.effects:
                todo.append(node)
    for node in reversed(todo):
        for fn in node.effects:
            fn()


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: F811
    """Compute the gradients of ``heads`` and write them into the leaves' ``grad`` (``grad_req`` rules)."""
    from ast_hybrid.core.ndarray import NDArray

    if isinstance(heads, NDArray):
        heads = [heads]
    if isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    for leaf, g in _vjp(list(heads), head_grads).items():
        leaf.accumulate(g)
    if not retain_graph:        # MXNet frees the graph: a second backward is its error, its arrays constants
        for node in _graph(heads)[0]:
            node.freed = True
        for h in heads:
            if h._ag is not None and not isinstance(h._ag, _Leaf):
                h._ag = None


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True):  # noqa: F811
    """Gradients of ``heads`` with respect to ``variables`` (returned, not written into ``.grad``)."""
    from ast_hybrid.core.ndarray import NDArray

    single = isinstance(variables, NDArray)
    variables = [variables] if single else list(variables)
    heads = [heads] if isinstance(heads, NDArray) else list(heads)
    if isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    for v in variables:
        if not isinstance(v._ag, _Leaf):
            raise RuntimeError("autograd.grad: every variable must be marked with attach_grad() (or "
                               "mark_variables) before recording")
    if create_graph:
        return _recorded_grads(heads, head_grads, variables)
    grads = _vjp(heads, head_grads, {v._ag for v in variables})
    out = [type(v)(grads[v._ag]) if v._ag in grads else type(v)(v._arr * 0) for v in variables]
    return out


def _recorded_grads(heads, head_grads, variables):
    """``grad(..., create_graph=True)``: the gradients as one node on the tape, a function of every leaf of
    the heads' graph (the pullback of its replay), so that a backward through them differentiates again."""
    import jax

    from ast_hybrid.core.ndarray import NDArray

    order, leaves = _graph(heads)
    leaf_list = list(leaves)
    pos = {leaf: i for i, leaf in enumerate(leaf_list)}
    head_grads = [None if g is None else getattr(g, "_arr", g) for g in head_grads or [None] * len(heads)]

    def gradients(*primals):
        def forward(primals):
            env = {}
            for node in order:
                env[id(node)] = node.fn(*[primals[pos[r[0]]] if isinstance(r[0], _Leaf) else env[id(r[0])][r[1]]
                                          for r in node.inputs])
            return [_head_value(h, env, pos, primals) for h in heads]

        outs, pullback = jax.vjp(forward, list(primals))
        (grads,) = pullback(_cotangents(outs, head_grads))
        return [grads[pos[v._ag]] if v._ag in pos else v._arr * 0 for v in variables]

    out = record_op(gradients, [NDArray(leaves[leaf], leaf) for leaf in leaf_list], {})
    _run_effects(order, pos)
    return [type(v)(g._arr, g._ag) for v, g in zip(variables, out)]


def get_symbol(x):
    """MXNet's symbol of a recorded computation: not available (the tape holds JAX functions, not MXNet's
    operators); the error names it and what to use instead."""
    raise unsupported("mxnet.autograd", "get_symbol", "the recorded tape holds JAX functions, not a symbolic "
                      "graph; hybridize the block and use net.export() (or mx.sym on Symbols) to get a graph")
