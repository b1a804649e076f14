"""``Block`` and ``HybridBlock`` (MXNet 1.x Gluon API) and the hybridize machinery.

Without ``hybridize()`` a ``HybridBlock`` runs ``hybrid_forward(F, x, **params)``
op by op.  With it, the whole block tree becomes ONE jitted program
``program(leaves, key, *inputs)``: the parameters are arguments (a tuple of
leaves flattened once, rebuilt only when a parameter is replaced), the mode
(train/predict) is static (one jitted function per mode), and writes to
parameters made during the trace (BatchNorm's running statistics) come back
as outputs and are written back.  While tracing, each parameter's ``data()``
returns the tracer bound to it (``_Trace``), so layer code is the same in both
modes.  ``hybrid_forward`` goes through the transpiler's ``convert`` when it is
available, so tensor-dependent Python control flow becomes ``lax``.

    >>> from ast_hybrid.gluon import nn
    >>> net = nn.HybridSequential(prefix='demo_')
    >>> with net.name_scope():
    ...     net.add(nn.Dense(3, in_units=2))
    >>> sorted(net.collect_params().keys())
    ['demo_dense0_bias', 'demo_dense0_weight']
    >>> sorted(net._collect_params_with_prefix())
    ['0.bias', '0.weight']
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections import OrderedDict

import numpy as np

from ast_hybrid import nd
from ast_hybrid.core import autograd
from ast_hybrid.ops import rng
from ast_hybrid.gluon import compile_cache, data_parallel, symbolic
from ast_hybrid.gluon.parameter import DeferredInitializationError, Parameter, ParameterDict, assign_loaded, shape_known
from ast_hybrid.core.autograd import STATE
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.core.trace import FRAMES
from ast_hybrid.ops._core import raw

__all__ = ["Block", "HybridBlock"]



class _Naming(threading.local):
    """This thread's naming state, as MXNet keeps it (its NameManager and _BlockScope are per thread):
    ``counter`` numbers top-level blocks (dense0_, dense1_, ...), ``scopes`` are the blocks whose
    ``name_scope()`` is open (innermost last)."""

    def __init__(self):
        self.counter = {}
        self.scopes = []


_NAMING = _Naming()


class _BlockScope:
    def __init__(self, block):
        self._block = block
        self._counter: dict = {}

    @staticmethod
    def create(prefix, params, hint):
        scopes = _NAMING.scopes
        current = scopes[-1] if scopes else None
        if current is None:
            if prefix is None:
                counter = _NAMING.counter
                n = counter.get(hint, 0)
                counter[hint] = n + 1
                prefix = f"{hint}{n}_"
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            n = current._counter.get(hint, 0)
            current._counter[hint] = n + 1
            prefix = f"{hint}{n}_"
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params


def indent(s, n):
    lines = s.split("\n")
    return "\n".join([lines[0]] + [" " * n + line for line in lines[1:]])


class Block:
    """Base class of all layers and models (MXNet's ``gluon.Block``)."""

    def __init__(self, prefix=None, params=None):
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)

    def _alias(self):
        return type(self).__name__.lower()

    def __setattr__(self, name, value):
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def __repr__(self):
        body = "\n".join(f"  ({k}): {indent(repr(b), 2)}" for k, b in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return self._name

    @property
    def params(self):
        return self._params

    @contextlib.contextmanager
    def name_scope(self):
        if self._empty_prefix:
            # MXNet: a block made with prefix='' opens no scope of its own, so its children are
            # named in its parent's scope (AlexNet's `features` and `output` Dense layers are
            # dense0..dense2 of one counter)
            yield self
            return
        scopes = _NAMING.scopes
        scopes.append(self._scope)
        symbolic.enter_prefix(self.prefix)      # MXNet's Prefix name manager: sym ops made inside are prefixed
        try:
            yield self
        finally:
            symbolic.exit_prefix()
            scopes.pop()

    def register_child(self, block, name=None):
        if name is None:
            name = str(len(self._children))
        self._children[name] = block
        self._invalidate()

    def _invalidate(self):
        return None

    def collect_params(self, select=None):
        ret = ParameterDict(self._params.prefix)
        if select is None:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = OrderedDict((prefix + k, v) for k, v in self._reg_params.items())
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def apply(self, fn):
        """MXNet's ``Block.apply``: ``fn`` on every child (recursively, children first), then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def hybridize(self, active=True, **kwargs):
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        for child in self._children.values():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def save_parameters(self, filename, deduplicate=False):
        from ast_hybrid import distributed
        from ast_hybrid.gluon import params_io

        if not distributed.writes_files():      # several processes: process 0 writes (distributed.writes_files)
            return
        params = self._collect_params_with_prefix()
        arrays, seen = OrderedDict(), {}
        for k, p in params.items():
            if deduplicate and id(p) in seen:
                continue
            seen[id(p)] = k
            arrays[k] = p.data()
        params_io.save(filename, arrays)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        from ast_hybrid.gluon import params_io

        loaded = params_io.load(filename)
        where = os.fspath(filename)
        if isinstance(loaded, list) and not loaded:
            loaded = {}     # a block without parameters saves an empty file
        if isinstance(loaded, list):
            raise ValueError(f"{where!r} holds an unnamed list of arrays, not parameters")
        structural = self._collect_params_with_prefix()
        params = structural
        if loaded and not any("." in k for k in loaded):
            # MXNet's legacy rule: names without '.' are full names (export's arg:/aux:, ParameterDict.save)
            # or full names less the block's prefix (a single layer's save_parameters); pick what matches
            loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
            full = OrderedDict((p.name, p) for p in self.collect_params().values())
            candidates = [(structural, loaded), (full, loaded),
                          (full, {self.prefix + k: v for k, v in loaded.items()})]
            params, loaded = max(candidates, key=lambda c: len(set(c[0]) & set(c[1])))
        assign_loaded(params, loaded, where, allow_missing, ignore_extra)
        if ctx is not None:     # several contexts: replicated over their devices (gluon/data_parallel.py)
            for p in params.values():
                p.reset_ctx(ctx)

    save_params = save_parameters
    load_params = load_parameters

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def _call_imperative(self, *args):
        return self.forward(*args)

    def summary(self, *inputs):
        rows = [(k, tuple(p.shape or ())) for k, p in self._collect_params_with_prefix().items()]
        width = max([len(k) for k, _ in rows] + [9])
        lines = [f"{'Parameter':<{width}}  Shape"] + [f"{k:<{width}}  {s}" for k, s in rows]
        total = sum(int(__import__('numpy').prod(s)) for _, s in rows)
        lines.append(f"Total params: {total}")
        print("\n".join(lines))


class _Trace:
    """Binds tracers to parameters for the duration of one hybridized trace.

    ``marked``: the parameters that get a gradient in a recorded call (their values carry
    ``autograd.DEPENDS``); ``decay``: for each parameter updated as a running statistic
    (``update_running``), the product of the momenta applied, so that the update the program returns can be
    applied at backward to the parameter's value then (``_Compiled._apply_running``)."""

    def __init__(self, params, leaves, marked=()):
        self.values = dict(zip(params, leaves))
        self.params = params
        self.writes: dict = {}
        self.decay: dict = {}
        self.marked = set(marked)
        self.carried: dict = {}     # values cells keep between steps during this trace (rnn_cell._Carried)

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
    return hasattr(x, "shape") and hasattr(x, "dtype") and x.__class__ is not NDArray


def wrap_inputs(inputs):
    """Arrays (and the arrays in a list/tuple argument) as NDArrays; anything else as given.  A list that holds
    no raw array is passed on itself, not a copy: a ``hybrid_forward`` that writes into its list argument (GluonCV's
    IDAUp: ``layers[i] = ...``, read back by its caller) changes the caller's list, as in MXNet."""
    out = []
    for x in inputs:
        if _is_array(x):
            x = NDArray(x if not isinstance(x, np.ndarray) else _jnp().asarray(x))
        elif isinstance(x, (list, tuple)) and any(_is_array(v) for v in x):
            x = type(x)(NDArray(v) if _is_array(v) else v for v in x)
        out.append(x)
    return out


def wrap_outputs(out):
    """A forward's result with every array an NDArray (lists and tuples kept)."""
    if out.__class__ is NDArray or out is None:
        return out
    if isinstance(out, (list, tuple)):
        return type(out)(wrap_outputs(o) for o in out)
    return NDArray(out) if _is_array(out) else out


def strip(out):
    """A forward's result with every NDArray replaced by its jax array (what pure functions return)."""
    if out.__class__ is NDArray:
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
    return x.__class__ is NDArray and x._ag is not None


def _first_array(out):
    if out.__class__ is NDArray:
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
    ``{index: (new value, decay)}`` (``_Trace``).

    ``key`` feeds every random op inside (``None``: the program has no key, and a random op raises
    ``rng.KeyNeeded``).  ``needs``: None for a call that is not recorded (no backward, so no
    running-statistics update, as in MXNet), else one flag per parameter then per input: whether it gets a
    gradient.  The trace then runs recording, with those values marked ``autograd.DEPENDS``, and the
    ``on_backward`` actions of the ops whose inputs depend on them run at its end, in reverse order (the
    order of MXNet's backward)."""
    recording = needs is not None
    marked = [p for p, n in zip(params, needs or ()) if n]
    trace = _Trace(params, leaves, marked)
    with trace.bound(), autograd.mode_scope(recording, training), rng.key_scope(key), \
            autograd.program_effects() as effects:
        xs = wrap_inputs(inputs)
        if recording:
            for x, n in zip(xs, needs[len(params):]):
                for v in (x if isinstance(x, (list, tuple)) else (x,)):
                    if n and v.__class__ is NDArray:
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


_HYBRID_VJP = []     # [jitted _pullback_call, the custom_vjp of _hybrid_node], made at the first use


def _hybrid_vjp():
    import jax

    if not _HYBRID_VJP:
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
            return (None, None, leaves, *[next(it[1]) if k else None for k in needs[n_params:]])

        f = jax.custom_vjp(node, nondiff_argnums=(0,))
        f.defvjp(fwd, bwd)
        _HYBRID_VJP.append(f)
    return _HYBRID_VJP[0]


def _hybrid_node(leaves, *xs, out, pullback, needs):
    # needs: (the number of parameters, one flag per parameter then per input)
    """A recorded hybridized call as a tape node: its value is ``out`` (computed at the forward, for these
    same inputs) and its gradient ``pullback`` run as one compiled program, the cotangents placed where
    ``needs`` says (None: zero, for what gets no gradient).  One function for every call, so that
    ``autograd`` recognises the same tape from step to step and compiles its backward once."""
    return _hybrid_vjp()(needs, out, pullback, leaves, *xs)


class _Compiled:
    """What a hybridized block caches: its parameters, their leaves and the jitted programs.

    ``predict(leaves, *xs)`` and ``train(leaves, base_key, count, *xs)`` return NDArrays (a pytree node,
    rebuilt by jax on the way out) and the parameter writes (a predict program's: a custom op's aux states,
    which MXNet keeps; ``_written`` applies them); ``train`` also returns the running-statistics updates
    for backward.  A predict program
    that turns out to need randomness is replaced by ``predict_keyed`` (the ``keyed`` flag)."""

    def __init__(self, block, inputs):
        import jax

        self.params = list(block.collect_params().values())
        self.leaves = tuple(p._data for p in self.params)
        self.input_specs = [jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), strip(x))
                            for x in inputs]
        self.keyed = False
        params = self.params

        def predict(leaves, *xs):
            return run_bound(block, params, leaves, None, False, xs)[:2]

        def predict_keyed(leaves, base, count, *xs):
            return run_bound(block, params, leaves, jax.random.fold_in(base, count), False, xs)[:2]

        def train(leaves, base, count, *xs, needs=None):
            return run_bound(block, params, leaves, jax.random.fold_in(base, count), True, xs, needs)

        def recorded(leaves, base, count, *xs, needs=None, training=True):
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

            out, pullback, (writes, running) = jax.vjp(forward, diff, has_aux=True)
            return out, writes, running, pullback

        self.predict_raw = lambda leaves, *xs: predict(leaves, *xs)[0]
        # predict mode, not recording: read from disk in a second process (gluon/program_cache.py)
        from ast_hybrid.gluon import program_cache

        from ast_hybrid.ops import channel_last

        # convolutions channel-last inside the program, kernels transposed once (ops/channel_last.py)
        program = channel_last.Program(predict) if channel_last.enabled() else jax.jit(predict)
        self.predict = program_cache.predict_program(block, self.params, program)
        self.predict_keyed = jax.jit(predict_keyed)
        self.train = jax.jit(train, static_argnames=("needs",))
        self.recorded = jax.jit(recorded, static_argnames=("needs", "training"))

    def __call__(self, args):
        state = autograd.STATE
        if state.recording or state.training or self.keyed:
            return self._call_slow(args)
        try:
            return self._written(self.predict(self.leaves, *[a._arr if a.__class__ is NDArray else a for a in args]))
        except rng.KeyNeeded:
            self.keyed = True
            return self._call_slow(args)

    def _call_slow(self, args):
        xs = [a._arr if a.__class__ is NDArray else a for a in args]
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
        """Take the parameters' current values as leaves; False if a shape or dtype changed."""
        leaves = tuple(p._data for p in self.params)
        for new, old in zip(leaves, self.leaves):
            if new is None or new.shape != old.shape or new.dtype != old.dtype:
                return False
        self.leaves = leaves
        return True

    def _write_back(self, writes):
        if writes:
            for i, v in writes.items():
                self.params[i]._data = v
            self.leaves = tuple(p._data for p in self.params)

    def _call_recorded(self, args, xs):
        """Under ``autograd.record()``: run the forward program, which also returns its pullback (the
        residuals), and put it on the tape as one node whose gradient is the compiled backward program
        (``_pullback``) on those residuals: the backward neither runs the forward again nor compiles anything
        after the first step."""
        tracked = tuple(p.data() for p in self.params)
        nd_args = [a if a.__class__ is NDArray else NDArray(a) if _is_array(a) else a for a in args]
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
            now, then = self.params[i]._data, at_forward[i]
            new[i] = value if now is then else (value + (now - then) * decay).astype(value.dtype)
        self._write_back(new)


class HybridBlock(Block):
    """A block whose ``hybrid_forward(F, x, *args, **params)`` can be compiled by ``hybridize()``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        self._active = False
        self._flags = {}
        self._compiled = None

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, Parameter):
            value._listeners.append(self._param_changed)

    def _invalidate(self):
        object.__setattr__(self, "_compiled", None)

    def _param_changed(self):
        """A parameter got a new value: the program keeps it as an argument, so only its leaves are refreshed
        (a new shape or dtype needs a new program)."""
        c = self._compiled
        if c is not None and not c.refresh():
            object.__setattr__(self, "_compiled", None)

    def hybridize(self, active=True, **kwargs):
        self._active = bool(active)
        self._flags = kwargs
        self._compiled = None
        for p in self.collect_params().values():
            if self._param_changed not in p._listeners:
                p._listeners.append(self._param_changed)
        super().hybridize(active, **kwargs)

    def cast(self, dtype):
        self._compiled = None
        super().cast(dtype)

    def __call__(self, *args):
        if data_parallel.PLACEMENT.active and not FRAMES.traces:    # parameters on several devices: the batch
            args = data_parallel.place_inputs(self, args)          # is split over them (gluon/data_parallel.py)
        c = self._compiled                  # set only while hybridized
        if FRAMES.traces or (c is None and not self._active):
            return self._call_imperative(*args)
        try:
            if c is None:
                if symbolic.is_symbolic(args):      # net(sym.var('data')): a Symbol (gluon/symbolic.py)
                    return symbolic.apply(self, args)
                return self._build(args)(args)
            state = STATE
            if not (state.recording or state.training or c.keyed) and len(args) == 1:   # the fast path: at batch 1 any
                # per-call Python work shows directly (a jitted call costs 5-8 us however small)
                x = args[0]
                try:
                    return c._written(c.predict(c.leaves, x._arr if x.__class__ is NDArray else x))
                except rng.KeyNeeded:
                    c.keyed = True
            return c(args)
        except Exception as exc:    # a custom op's error from inside the program, as it was raised (clean_error)
            if not FRAMES.traces and symbolic.is_symbolic(args):    # placeholders given to a built program
                return symbolic.apply(self, args)
            from ast_hybrid.core.errors import clean_error

            err = clean_error(exc)
            if err is None:
                raise
            raise err from err.__cause__

    forward = __call__

    def _build(self, args):
        compile_cache.ensure()      # JAX's persistent cache, before the deferred pass's ops compile (compile_cache.py)
        params = list(self.collect_params().values())
        if any(p._data is None for p in params):
            from ast_hybrid.gluon.deferred import first_pass

            first_pass(self, args)      # deferred shape inference, once, on shapes only (gluon/deferred.py)
            missing = [p.name for p in params if p._data is None]
            if missing:
                raise RuntimeError(f"Parameter {missing[0]!r} has not been initialized; call "
                                   "initialize() before running the block")
        c = _Compiled(self, args)
        object.__setattr__(self, "_compiled", c)
        return c

    def _call_imperative(self, *args):
        if not FRAMES.traces and symbolic.is_symbolic(args):      # net(sym.var('data')), not hybridized
            return symbolic.apply(self, args)
        args = wrap_inputs(args)
        try:
            params = {k: p.data() for k, p in self._reg_params.items()}
        except DeferredInitializationError:
            if type(self).infer_shape is HybridBlock.infer_shape:    # no rule of its own: the ops infer them
                return self._call_deferred(args)
            self.infer_shape(*args)
            for p in self._reg_params.values():
                p._finish_deferred_init()
            params = {k: p.data() for k, p in self._reg_params.items()}
        hf = self._converted() if FRAMES.traces else self.hybrid_forward
        with imperative((params, self._reg_params)):
            return wrap_outputs(hf(nd, *args, **params))

    def _call_deferred(self, args):
        """The first call with parameters of unknown shape: each reaches ``hybrid_forward`` as a stand-in
        whose shape the first operator using it fills in (``gluon.deferred``)."""
        from ast_hybrid.gluon.deferred import Deferred, inferring

        params = {}
        for k, p in self._reg_params.items():
            if p._data is None and p._deferred_init and shape_known(p.shape):
                p._finish_deferred_init()
            params[k] = Deferred(p) if p._data is None and p._deferred_init else p.data()
        with inferring(), imperative((params, self._reg_params)):
            out = self.hybrid_forward(nd, *args, **params)
        unused = [p.name for p in self._reg_params.values() if p._data is None]
        if unused:
            raise DeferredInitializationError(
                f"{type(self).__name__}'s first call did not pass {', '.join(map(repr, unused))} to an operator that "
                "can infer its shape; give the full shape at construction, or an infer_shape(self, *inputs)")
        return wrap_outputs(out)

    def _converted(self):
        fn = self.__dict__.get("_ah_converted")
        if fn is None:
            try:
                from ast_hybrid.transpiler.api import convert
            except ImportError:   # the transpiler is not there: trace the forward as written
                fn = self.hybrid_forward
            else:
                fn = convert(self.hybrid_forward)
            object.__setattr__(self, "_ah_converted", fn)
        return fn

    def infer_shape(self, *args):
        """Fill in unknown (0) parameter shapes from the inputs; layers with deferred shapes override it."""
        unknown = [p.name for p in self._reg_params.values() if p._data is None]
        raise DeferredInitializationError(
            f"{type(self).__name__} cannot infer the shapes of {', '.join(unknown)}; give them at construction")

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward()")

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.stablehlo`` (the predict program, jax.export), ``path-symbol.json``
        (its manifest) and ``path-%04d.params`` (``arg:``/``aux:`` names, MXNet's format)."""
        from ast_hybrid.gluon import export as _export

        return _export.export_block(self, path, epoch)
