"""A hybridized block's compiled programs: the block tree as pure functions of its parameters, jitted.

``hybridize()`` makes a block's call ONE jitted program ``program(leaves, key, *inputs)``: the parameters are
arguments (a tuple of leaves flattened once, rebuilt only when a parameter is replaced), the mode
(train/predict) is static (one jitted function per mode), and writes to parameters made during the trace
(BatchNorm's running statistics) come back as outputs and are written back.  While tracing, each parameter's
``data()`` returns the tracer bound to it (:class:`Trace`, pushed on ``core.trace.FRAMES``), so layer code is
the same in both modes.  :class:`Compiled` is what a hybridized block keeps: four programs (predict, predict
with a random key, train, recorded: forward and pullback), the predict one channel-last and kept on disk where
the XLA rewrites apply (``ast_hybrid/xla``).  :func:`run_bound` is the one function all four trace.

``gluon/block.py`` holds the Block; it calls :class:`Compiled` and nothing else of this module but the
wrappers (``wrap_inputs``/``wrap_outputs``) and :func:`imperative`.
"""

from __future__ import annotations

import contextlib
import functools
import sys

import numpy as np

from ast_hybrid.core import autograd
from ast_hybrid.core.ndarray import ARRAYS, NDArray, ndarray
from ast_hybrid.core.npmode import MODE as NP_MODE
from ast_hybrid.core.trace import FRAMES
from ast_hybrid.ops import rng
from ast_hybrid.ops._core import raw

__all__ = ["Trace", "Compiled", "run_bound", "imperative", "wrap_inputs", "wrap_outputs", "strip", "program_tree",
           "finish_tuning"]


def finish_tuning(block):
    """End now the tuning of every predict program ``block`` and its children have built (issue 31: a
    hybridized block's first call runs the program as traced, and the channel-last program is built, timed
    and swapped in over the next calls, ``xla/tuning.py``): what a benchmark calls before it times steady
    calls, or a service before it takes requests; the programs are then on disk for the next process."""
    todo = [block]
    while todo:
        b = todo.pop()
        for c in (getattr(b, "_compiled", None), getattr(b.__dict__.get("_whole"), "compiled", None)):
            if c is not None:       # a HybridBlock's program, a plain Block's (gluon/whole.py)
                c.finish_tuning()
        todo.extend(getattr(b, "_children", {}).values())


def _mxnet_prints():
    """Whether a ``print`` in a hybridized ``hybrid_forward`` runs as MXNet's: once, at trace time, showing
    ``<_Symbol data>`` (under ``import mxnet`` = ast-hybrid, its finder on ``sys.meta_path``: MXNet scripts
    print what MXNet prints); else the transpiler's print, the real values on every call."""
    return any(type(f).__name__ == "MXNetFinder" for f in sys.meta_path)


class Trace:
    """Binds tracers to parameters for the duration of one hybridized trace.

    ``marked``: the parameters that get a gradient in a recorded call (their values carry
    ``autograd.DEPENDS``); ``decay``: for each parameter updated as a running statistic
    (``update_running``), the product of the momenta applied, so that the update the program returns can be
    applied at backward to the parameter's value then (``Compiled._apply_running``)."""

    def __init__(self, params, leaves, marked=()):
        self.values = dict(zip(params, leaves))
        self.params = params
        self.writes: dict = {}
        self.decay: dict = {}
        self.marked = set(marked)
        self.carried: dict = {}     # values cells keep between steps during this trace (rnn_cell._Carried)
        self.names = None           # id(tracer) -> the name MXNet's graph gives that input ('data', 'data0'...)
        self.output_name = "output"

    def symbol_name(self, arr):
        """What MXNet's ``print`` of this traced array inside ``hybrid_forward`` shows (``<_Symbol NAME>``), under
        ``import mxnet`` only; None in ast-hybrid's own front (the transpiler's print: values on every call)."""
        return None if self.names is None else self.names.get(id(arr), self.output_name)

    def marker(self, p):
        return autograd.DEPENDS if p in self.marked else None

    def update_running(self, p, batch, momentum):
        old = self.read(p)
        self.writes[p] = (old * momentum + raw(batch) * (1 - momentum)).astype(old.dtype)
        self.decay[p] = self.decay.get(p, 1.0) * momentum

    def read(self, p):
        if p in self.writes:
            return self.writes[p]
        try:
            return self.values[p]
        except KeyError:
            raise RuntimeError(f"Parameter {p.name!r} is used by the hybridized block but is not one of its "
                               "parameters (collect_params()); register it on a child block") from None

    def write(self, p, value):
        self.writes[p] = raw(value)

    @contextlib.contextmanager
    def bound(self):
        for p in self.params:
            p._trace = self
        traces = FRAMES.traces
        traces.append(self)
        try:
            yield self
        finally:
            traces.pop()
            for p in self.params:
                p._trace = None


@contextlib.contextmanager
def imperative(entry):
    """Within: a non-hybridized forward (``core.trace.FRAMES.imperative``)."""
    running = FRAMES.imperative
    running.append(entry)
    try:
        yield
    finally:
        running.pop()


def _mode(training):
    """Training or predict mode, with recording off."""
    return autograd.mode_scope(False, training)


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and x.__class__ not in ARRAYS


def wrap_inputs(inputs):
    """Arrays (and the arrays in a list/tuple argument) as NDArrays; anything else as given.  A list that holds
    no raw array is passed on itself, not a copy: a ``hybrid_forward`` that writes into its list argument (GluonCV's
    IDAUp: ``layers[i] = ...``, read back by its caller) changes the caller's list, as in MXNet."""
    out = []
    cls = ndarray if NP_MODE.array else NDArray     # npx.set_np(): a traced forward sees mx.np arrays
    for x in inputs:
        if _is_array(x):
            x = cls(x if not isinstance(x, np.ndarray) else _jnp().asarray(x))
        elif isinstance(x, (list, tuple)) and any(_is_array(v) for v in x):
            x = type(x)(cls(v) if _is_array(v) else v for v in x)
        out.append(x)
    return out


def wrap_outputs(out):
    """A forward's result with every array an NDArray (lists and tuples kept)."""
    if out.__class__ in ARRAYS or out is None:
        return out
    if isinstance(out, (list, tuple)):
        return type(out)(wrap_outputs(o) for o in out)
    return NDArray(out) if _is_array(out) else out


def strip(out):
    """A forward's result with every NDArray replaced by its jax array (what pure functions return)."""
    if out.__class__ in ARRAYS:
        return out._arr
    if isinstance(out, (list, tuple)):
        return type(out)(strip(o) for o in out)
    if isinstance(out, dict):
        return {k: strip(v) for k, v in out.items()}
    return out


def _tracked(x):
    """Whether an argument (an NDArray, or a list/tuple of them) is recorded for autograd."""
    if isinstance(x, (list, tuple)):
        return any(_tracked(v) for v in x)
    return x.__class__ in ARRAYS and autograd.live(x)


def _first_array(out):
    if out.__class__ in ARRAYS:
        return out
    if isinstance(out, (list, tuple)):
        for o in out:
            found = _first_array(o)
            if found is not None:
                return found
    return None


def _jnp():
    import jax.numpy as jnp

    return jnp


def run_bound(block, params, leaves, key, training, inputs, needs=None):
    """Run ``block`` on ``inputs`` with ``leaves`` bound to ``params``: ``(output, writes, running)``, the
    writes made by the forward ``{index: new value}`` and the running-statistics updates of a recorded call
    ``{index: (new value, decay)}`` (``Trace``).

    ``key`` feeds every random op inside (``None``: the program has no key, and a random op raises
    ``rng.KeyNeeded``).  ``needs``: None for a call that is not recorded (no backward, so no
    running-statistics update, as in MXNet), else one flag per parameter then per input: whether it gets a
    gradient.  The trace then runs recording, with those values marked ``autograd.DEPENDS``, and the
    ``on_backward`` actions of the ops whose inputs depend on them run at its end, in reverse order (the
    order of MXNet's backward)."""
    recording = needs is not None
    marked = [p for p, n in zip(params, needs or ()) if n]
    trace = Trace(params, leaves, marked)
    with trace.bound(), autograd.mode_scope(recording, training), rng.key_scope(key), \
            autograd.program_effects() as effects:
        xs = wrap_inputs(inputs)
        if _mxnet_prints():
            arrays = [x for x in xs if x.__class__ in ARRAYS]
            trace.names = {id(x._arr): "data" if len(arrays) == 1 else f"data{i}" for i, x in enumerate(arrays)}
            trace.output_name = f"{block.prefix}output"
        if recording:
            for x, n in zip(xs, needs[len(params):]):
                for v in (x if isinstance(x, (list, tuple)) else (x,)):
                    if n and v.__class__ in ARRAYS:
                        v._ag = autograd.DEPENDS
        out = block._call_imperative(*xs)
        before = dict(trace.writes)
        for fn in reversed(effects):
            fn()
    index = {p: i for i, p in enumerate(params)}
    writes = {index[p]: v for p, v in before.items() if p in index and p not in trace.decay}
    running = {index[p]: (trace.writes[p], trace.decay[p]) for p in trace.decay if p in index}
    return out, writes, running


def _pullback_call(pullback, cotangent):
    return pullback(cotangent)


@functools.lru_cache(maxsize=1)
def _hybrid_vjp():
    """The custom_vjp of :func:`_hybrid_node` (its backward the jitted ``_pullback_call``), made at the first use."""
    import jax

    apply = jax.jit(_pullback_call)

    def node(needs, out, pullback, leaves, *xs):
        return out

    def fwd(needs, out, pullback, leaves, *xs):
        return out, pullback

    def bwd(needs, pullback, cotangent):
        d_leaves, d_xs = apply(pullback, cotangent)[0]
        it = iter(d_leaves), iter(d_xs)
        n_params, needs = needs
        leaves = tuple(next(it[0]) if k else None for k in needs[:n_params])
        # an input given as a list (an RNN cell's states) gets a list of cotangents: jax arrays, as its values
        return (None, None, leaves, *[strip(next(it[1])) if k else None for k in needs[n_params:]])

    f = jax.custom_vjp(node, nondiff_argnums=(0,))
    f.defvjp(fwd, bwd)
    return f


def _hybrid_node(leaves, *xs, out, pullback, needs):
    # needs: (the number of parameters, one flag per parameter then per input)
    """A recorded hybridized call as a tape node: its value is ``out`` (computed at the forward, for these
    same inputs) and its gradient ``pullback`` run as one compiled program, the cotangents placed where
    ``needs`` says (None: zero, for what gets no gradient).  One function for every call, so that
    ``autograd`` recognises the same tape from step to step and compiles its backward once."""
    return _hybrid_vjp()(needs, out, pullback, leaves, *xs)


def arg_format(args):
    """MXNet's ``_flatten`` format of a hybridized call's arguments: -1 for None, 0 for an array, a list
    for a (nested) list or tuple."""
    if args is None:
        return -1
    if isinstance(args, (list, tuple)):
        return [arg_format(a) for a in args]
    return 0


def check_format(stored, args):
    """MXNet's ``_call_cached_op``: a hybridized block takes the argument structure of its first call;
    trailing Nones (arguments left to their defaults) may come and go."""
    fmt = arg_format(args)
    if stored is None or fmt == stored:
        return
    short, long = (fmt, stored) if len(fmt) < len(stored) else (stored, fmt)
    if len(short) == len(long) or long[:len(short)] != short or any(f != -1 for f in long[len(short):]):
        raise ValueError("The argument structure of HybridBlock does not match the cached version. "
                         f"Stored format = {fmt}, input format = {stored}")


class Compiled:
    """What a hybridized block caches: its parameters, their leaves and the jitted programs.

    ``predict(leaves, *xs)`` and ``train(leaves, base_key, count, *xs)`` return NDArrays (a pytree node,
    rebuilt by jax on the way out) and the parameter writes (a predict program's: a custom op's aux states,
    which MXNet keeps; ``_written`` applies them); ``train`` also returns the running-statistics updates
    for backward.  A predict program
    that turns out to need randomness is replaced by ``predict_keyed`` (the ``keyed`` flag)."""

    def __init__(self, block, inputs):
        import jax

        self.params = list(block.collect_params().values())
        self.leaves = tuple(p._value for p in self.params)
        self.input_specs = [jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), strip(x))
                            for x in inputs]
        self.keyed = False
        params = self.params
        # hybridized by the user: MXNet's cached op keeps its first call's structure (a block we compile on our
        # own, a loss say, takes any structure: MXNet runs it op by op)
        in_format = arg_format(inputs) if getattr(block, "_active", False) else None

        def predict(leaves, *xs):
            check_format(in_format, xs)     # at each trace (a new structure is one), never per call
            return run_bound(block, params, leaves, None, False, xs)[:2]

        def predict_keyed(leaves, base, count, *xs):
            check_format(in_format, xs)
            return run_bound(block, params, leaves, jax.random.fold_in(base, count), False, xs)[:2]

        def train(leaves, base, count, *xs, needs=None):
            check_format(in_format, xs)
            return run_bound(block, params, leaves, jax.random.fold_in(base, count), True, xs, needs)

        def recorded(leaves, base, count, *xs, needs=None, training=True):
            check_format(in_format, xs)
            # the forward of a recorded call and its pullback (the residuals it keeps, a pytree), taken with
            # respect to what gets a gradient only (``needs``); the backward runs it (``_pullback``)
            key = jax.random.fold_in(base, count)
            n = len(leaves)
            diff = ([leaves[i] for i in range(n) if needs[i]], [xs[i] for i in range(len(xs)) if needs[n + i]])

            def forward(diff):
                it = iter(diff[0]), iter(diff[1])
                ls = tuple(next(it[0]) if needs[i] else v for i, v in enumerate(leaves))
                xx = [next(it[1]) if needs[n + i] else v for i, v in enumerate(xs)]
                out, writes, running = run_bound(block, params, ls, key, training, xx, needs if training else None)
                return strip(out), (writes, running)

            if xla_program.training_enabled():     # convolutions channel-last, forward and backward
                forward = xla_program.differentiable(forward, diff)
            out, pullback, (writes, running) = jax.vjp(forward, diff, has_aux=True)
            return out, writes, running, pullback

        self.predict_raw = lambda leaves, *xs: predict(leaves, *xs)[0]
        # predict mode, not recording: read from disk in a second process (xla/program_cache.py)
        from ast_hybrid.xla import program as xla_program, program_cache

        # convolutions channel-last inside the program, kernels transposed once (xla/program.py)
        program = xla_program.Program(predict) if xla_program.enabled() else jax.jit(predict)
        self.predict = program_cache.predict_program(block, self.params, program, program_tree)
        self.predict_keyed = jax.jit(predict_keyed)
        self.train = jax.jit(train, static_argnames=("needs",))
        self.recorded = jax.jit(recorded, static_argnames=("needs", "training"))

    def check_backward(self, args):
        """Build (abstractly: nothing runs) the backward of a recorded call on ``args``, raising where it has
        none (a traced ``while`` loop: ``lax.while_loop`` has no reverse-mode derivative), so that a caller
        may run the forward op by op instead (``gluon/whole.py``) before anything is on the tape."""
        import jax
        import jax.numpy as jnp

        xs = [a._arr if a.__class__ in ARRAYS else a for a in args]
        needs = tuple(p.grad_req != "null" for p in self.params) + tuple(_tracked(a) for a in args)
        base = jax.ShapeDtypeStruct((2,), jnp.uint32)

        def both(leaves, base, *xs):
            out, _, _, pullback = self.recorded(leaves, base, 0, *xs, needs=needs, training=autograd.STATE.training)
            return pullback(jax.tree_util.tree_map(jnp.zeros_like, out))
        jax.eval_shape(both, self.leaves, base, *xs)

    def finish_tuning(self):
        """End now the tuning of each predict program built so far (``xla/tuning.py``)."""
        from ast_hybrid.xla import tuning

        tuning.finish_all(self.predict)

    def __call__(self, args):
        state = autograd.STATE
        if state.recording or state.training or self.keyed:
            return self._call_slow(args)
        try:
            return self._written(self.predict(self.leaves, *[a._arr if a.__class__ in ARRAYS else a for a in args]))
        except rng.KeyNeeded:
            self.keyed = True
            return self._call_slow(args)

    def _call_slow(self, args):
        xs = [a._arr if a.__class__ in ARRAYS else a for a in args]
        if autograd.STATE.recording:
            return self._call_recorded(args, xs)
        if autograd.STATE.training:
            out, writes, _ = self.train(self.leaves, *rng.stream(), *xs)
            self._write_back(writes)
            return out
        return self._written(self.predict_keyed(self.leaves, *rng.stream(), *xs))

    def _written(self, result):
        """A predict program's output, its parameter writes applied."""
        out, writes = result
        self._write_back(writes)
        return out

    def refresh(self):
        """Take the parameters' current values as leaves; False if a shape, dtype or device changed."""
        leaves = tuple(p._value for p in self.params)
        for new, old in zip(leaves, self.leaves):
            if new is None or new.shape != old.shape or new.dtype != old.dtype:
                return False
        # moved to another device (reset_ctx): compiled programs are bound to their device
        if leaves and getattr(leaves[0], "sharding", None) != getattr(self.leaves[0], "sharding", None):
            return False
        self.leaves = leaves
        return True

    def _write_back(self, writes):
        if writes:
            for i, v in writes.items():
                self.params[i]._value = v
            self.leaves = tuple(p._value for p in self.params)

    def _call_recorded(self, args, xs):
        """Under ``autograd.record()``: run the forward program, which also returns its pullback (the
        residuals), and put it on the tape as one node whose gradient is the compiled backward program
        (``_pullback``) on those residuals: the backward neither runs the forward again nor compiles anything
        after the first step."""
        tracked = tuple(p.data() for p in self.params)
        nd_args = [a if a.__class__ in ARRAYS else NDArray(a) if _is_array(a) else a for a in args]
        base, count = rng.stream()
        training = autograd.STATE.training
        needs = tuple(t._ag is not None for t in tracked) + tuple(_tracked(a) for a in args)
        at_forward = self.leaves
        out, writes, running, pullback = self.recorded(at_forward, base, count, *xs, needs=needs,
                                                       training=training)
        self._write_back(writes)
        result = autograd.record_op(_hybrid_node, (tracked, *nd_args),
                                    {"out": out, "pullback": pullback, "needs": (len(tracked), needs)}, result=out)
        if running:
            autograd.on_backward(_first_array(result), lambda: self._apply_running(running, at_forward))
        return result

    def _apply_running(self, running, at_forward):
        """At backward: the running statistics the program computed from the values it read, moved by what
        changed them since (another call's backward first), ``decay`` times."""
        new = {}
        for i, (value, decay) in running.items():
            now, then = self.params[i]._value, at_forward[i]
            new[i] = value if now is then else (value + (now - then) * decay).astype(value.dtype)
        self._write_back(new)


# --- the block tree as the program cache's key reads it ------------------------------------------------------

# Block's own bookkeeping: children and parameters are keyed structurally, the rest does not reach the trace
_INTERNAL = {"_children", "_reg_params", "_params", "_scope", "_compiled", "_ah_converted", "_whole", "_ah_auto",
             "_ah_converted_forward"}


def program_tree(block):
    """What of a block tree its predict program depends on, for the program cache's key
    (``xla.program_cache``): every block in order, its class, its plain attributes, its parameters' and
    children's names; :class:`~ast_hybrid.xla.program_cache.Uncacheable` for anything the key cannot hold."""
    from ast_hybrid.parallel import data_parallel
    from ast_hybrid.xla import program_cache

    if data_parallel.PLACEMENT.active:
        raise program_cache.Uncacheable("parameters on several devices")
    return _tree(block, "net", [], program_cache)


def _tree(block, path, out, cache):
    from ast_hybrid.gluon.block import Block
    from ast_hybrid.gluon.parameter import Parameter

    attrs = []
    for k, v in block.__dict__.items():
        if k in _INTERNAL:
            continue
        if isinstance(v, Block):
            names = [n for n, c in block._children.items() if c is v]
            if not names:
                raise cache.Uncacheable(f"{path}.{k} is a block that is not one of its children")
            attrs.append([k, "block", names[0]])
        elif isinstance(v, Parameter):
            attrs.append([k, "param", v.name])
        else:
            attrs.append([k, cache.plain(v, f"{path}.{k}")])
    out.append([path, cache.class_key(type(block)), attrs, [[k, p.name] for k, p in block._reg_params.items()],
                list(block._children)])
    for name, child in block._children.items():
        _tree(child, f"{path}.{name}", out, cache)
    return out
