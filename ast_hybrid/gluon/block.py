"""``Block`` and ``HybridBlock`` (MXNet 1.x Gluon API): naming, children, parameters, calls.

Without ``hybridize()`` a ``HybridBlock`` runs ``hybrid_forward(F, x, **params)``
op by op.  With it, the whole block tree becomes ONE jitted program, which the
block keeps (``gluon/programs.py``: ``Compiled``, the programs and how they are
traced).  ``hybrid_forward`` goes through the transpiler's ``convert`` when it is
available, so tensor-dependent Python control flow becomes ``lax``.  A block
called with ``sym.var`` placeholders builds a Symbol graph (``symbol/recorder.py``: ``apply``).

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
import warnings
from collections import OrderedDict


from ast_hybrid import nd
from ast_hybrid.core.autograd import STATE, live
from ast_hybrid.core.errors import refusing_function
from ast_hybrid.core.ndarray import ARRAYS, as_np
from ast_hybrid.core.npmode import MODE as NP_MODE
from ast_hybrid.core.trace import FRAMES
from ast_hybrid.parallel import data_parallel
from ast_hybrid.symbol import graph as symbolic
from ast_hybrid.symbol import recorder as symbol_recorder
from ast_hybrid.gluon.parameter import DeferredInitializationError, Parameter, ParameterDict, assign_loaded, shape_known
from ast_hybrid.gluon import whole
from ast_hybrid.gluon.programs import Compiled, imperative, wrap_inputs, wrap_outputs
from ast_hybrid.ops import rng
from ast_hybrid.xla import compile_cache

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

    _hooks = None       # (pre-hooks, hooks), made by the first register_forward_(pre_)hook

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
        old = self.__dict__.get(name)
        if isinstance(old, (Parameter, Block)) and not isinstance(value, type(old)):
            raise TypeError(f"Changing attribute type for {name} from {type(old)} to {type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError(f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                                     "parameters between blocks, please set 'params' at Block construction instead.")
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _check_container_with_block(self):
        """MXNet's warning for Blocks kept in a list, tuple or dict attribute: they are not children (their
        parameters are not collected)."""
        children = set(map(id, self._children.values()))

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(v) for v in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children") and unregistered(v):
                warnings.warn(f'"{type(self).__name__}.{k}" is an unregistered container with Blocks. Note that '
                              "Blocks inside the list, tuple or dict will not be registered automatically. Make sure "
                              "to register them using register_child() or switching to nn.Sequential/"
                              "nn.HybridSequential instead. ", stacklevel=3)

    def register_forward_pre_hook(self, hook):
        """``hook(block, args)`` runs before each call of this block; returns a ``HookHandle`` (``detach()``)."""
        return self._attach_hook(0, hook)

    def register_forward_hook(self, hook):
        """``hook(block, args, output)`` runs after each call of this block; returns a ``HookHandle``."""
        return self._attach_hook(1, hook)

    register_op_hook = refusing_function("mxnet.gluon", "Block.register_op_hook", "a hybridized block runs as one "
                                         "XLA program, whose operators' outputs are not kept; register_forward_hook"
                                         "(hook) on the blocks inside gives each block's output")

    def _attach_hook(self, which, hook):
        from ast_hybrid.gluon.utils import HookHandle

        if self._hooks is None:
            object.__setattr__(self, "_hooks", (OrderedDict(), OrderedDict()))
        handle = HookHandle()
        handle.attach(self._hooks[which], hook)
        return handle

    def _call_hooked(self, args, kwargs):
        pre, post = self._hooks
        for hook in list(pre.values()):
            hook(self, args)
        out = self._unhooked(*args, **kwargs)
        for hook in list(post.values()):
            hook(self, args, out)
        return out

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
        run = self.__dict__.get("_whole")
        if run is not None:
            run.compiled = None

    def collect_params(self, select=None):
        self._check_container_with_block()
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
        if not isinstance(self, HybridBlock):       # its own forward too: one program (gluon/whole.py)
            object.__setattr__(self, "_whole", whole.Whole(self) if active else None)

    def cast(self, dtype):
        for child in self._children.values():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def save_parameters(self, filename, deduplicate=False):
        from ast_hybrid.parallel import distributed
        from ast_hybrid.io import params_file as params_io

        if not distributed.writes_files():      # several processes: process 0 writes (distributed.writes_files)
            return
        params = self._collect_params_with_prefix()
        if deduplicate:     # MXNet: one name per shared parameter, the last it is registered under
            last = {id(p): k for k, p in params.items()}
            params = OrderedDict((k, p) for k, p in params.items() if last[id(p)] == k)
        params_io.save(filename, OrderedDict((k, p.data()) for k, p in params.items()))

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        from ast_hybrid.io import params_file as params_io

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
            candidates = [(structural, loaded), (full, loaded), (full, {self.prefix + k: v for k, v in loaded.items()})]
            params, loaded = max(candidates, key=lambda c: len(set(c[0]) & set(c[1])))
        if dtype_source not in ("current", "saved"):
            raise ValueError(f"load_parameters: dtype_source must be 'current' or 'saved', got {dtype_source!r}")
        assign_loaded(params, loaded, where, allow_missing, ignore_extra, dtype_source if cast_dtype else "current")
        if ctx is not None:     # several contexts: replicated over their devices (parallel/data_parallel.py)
            for p in params.values():
                p.reset_ctx(ctx)

    def save_params(self, filename):
        """MXNet's deprecated ``save_params``: the parameters under their full names less this block's prefix
        (``collect_params().save(filename, strip_prefix=prefix)``), what a SymbolBlock's ``load_params``
        reads; ``save_parameters`` writes the structural names instead."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you want load from "
                      "SymbolBlock later, please use export instead. For details, see "
                      "https://mxnet.apache.org/tutorials/gluon/save_load_params.html", stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def __call__(self, *args, **kwargs):
        if "_ah_auto" not in self.__dict__:      # ast-hybrid run --hybridize (gluon/whole.py)
            whole.auto_hybridize(self)
        if "_ah_shapes" in self.__dict__:
            whole.watch_shapes(self, args)
        if self._hooks is not None:
            return self._call_hooked(args, kwargs)
        return self._unhooked(*args, **kwargs)

    def _unhooked(self, *args, **kwargs):
        run = self.__dict__.get("_whole")       # hybridized (gluon/whole.py)
        if FRAMES.traces:                       # inside a program: its forward converted
            out = whole.converted(self)(*args, **kwargs)
        else:
            out = run(args, kwargs) if run is not None else self.forward(*args, **kwargs)
        return as_np(out) if NP_MODE.array else out   # npx.set_np(): mx.np arrays, as MXNet's np operators give

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def _call_imperative(self, *args):
        return whole.converted(self)(*args) if FRAMES.traces else self.forward(*args)

    def summary(self, *inputs):
        """MXNet's summary: the network run once on ``inputs`` (initialised, not hybridized), each layer's
        output shape and parameter count printed as MXNet prints them (``gluon/summary.py``)."""
        from ast_hybrid.gluon.summary import summary

        summary(self, *inputs)


def _check_hybrid_input(x):
    """MXNet's rule for a hybridized block's arguments: arrays, (nested) lists of them, or None."""
    if x is None or x.__class__ in ARRAYS or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return
    if isinstance(x, (list, tuple)):
        for v in x:
            _check_hybrid_input(v)
        return
    raise ValueError("When hybridized, the input of HybridBlock input must be (nested) list of Symbol or NDArray, "
                     f"but got {x!r} of type {type(x)}")


def _has_array(x):
    if isinstance(x, (list, tuple)):
        return any(_has_array(v) for v in x)
    return x is not None and (x.__class__ in ARRAYS or hasattr(x, "shape") or isinstance(x, symbolic.Symbol))


def _check_some_array(args):
    """MXNet's ``HybridBlock.forward``: a call needs at least one NDArray or Symbol among its arguments."""
    if not _has_array(args):
        raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the input. "
                         "Please check the type of the args.\n")


class HybridBlock(Block):
    """A block whose ``hybrid_forward(F, x, *args, **params)`` can be compiled by ``hybridize()``.

    A subclass that defines ``forward`` itself (MXNet 1.9 allows it) is called as a ``Block``: its
    ``forward`` runs as written, ``hybridize()`` reaching only its children."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = [k for k in cls.__mro__ if k is not HybridBlock and issubclass(k, HybridBlock)
               and k.__dict__.get("forward") not in (None, k.__dict__.get("__call__"), HybridBlock.__call__)]
        if own:                 # (``forward = __call__``, HybridBlock's own alias, is no forward of the user's)
            if "__call__" not in cls.__dict__:
                cls.__call__ = Block.__call__
            cls._unhooked = Block._unhooked

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
        pre, post = self._hooks or ((), ())
        if (active and post) or pre:        # MXNet's condition, as written
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/pre-hook. If "{self}" is a '
                          "child of HybridBlock, the hooks will not take effect.")
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
        if "_ah_auto" not in self.__dict__:      # ast-hybrid run --hybridize (gluon/whole.py)
            whole.auto_hybridize(self)
        if "_ah_shapes" in self.__dict__:
            whole.watch_shapes(self, args)
        if self._hooks is not None:
            return self._call_hooked(args, {})
        if NP_MODE.array:       # npx.set_np() (Block.__call__)
            return as_np(self._call_hybrid(*args))
        return self._call_hybrid(*args)

    def _unhooked(self, *args):
        if NP_MODE.array:
            return as_np(self._call_hybrid(*args))
        return self._call_hybrid(*args)

    def _call_hybrid(self, *args):
        if data_parallel.PLACEMENT.active and not FRAMES.traces:    # parameters on several devices: the batch
            args = data_parallel.place_inputs(self, args)          # is split over them (parallel/data_parallel.py)
        c = self._compiled                  # set only while hybridized
        if FRAMES.traces or (c is None and not self._active) or (STATE.recording and _int_tracked(args)):
            # (an integer input that takes a gradient: MXNet gives one, XLA's autodiff does not; op by op,
            # autograd replays the tape on float values: core/autograd.py)
            return self._call_imperative(*args)
        try:
            if c is None:
                if symbolic.is_symbolic(args):      # net(sym.var('data')): a Symbol (symbol/graph.py)
                    return symbol_recorder.apply(self, args)
                return self._build(args)(args)
            state = STATE
            if not (state.recording or state.training or c.keyed) and len(args) == 1:   # the fast path: at batch 1 any
                # per-call Python work shows directly (a jitted call costs 5-8 us however small)
                x = args[0]
                try:
                    return c._written(c.predict(c.leaves, x._arr if x.__class__ in ARRAYS else x))
                except rng.KeyNeeded:
                    c.keyed = True
            return c(args)
        except Exception as exc:    # a custom op's error from inside the program, as it was raised (clean_error)
            if not FRAMES.traces and symbolic.is_symbolic(args):    # placeholders given to a built program
                return symbol_recorder.apply(self, args)
            from ast_hybrid.core.errors import clean_error

            err = clean_error(exc)
            if err is None:
                raise
            raise err from err.__cause__

    forward = __call__

    def _build(self, args):
        for a in args:
            _check_hybrid_input(a)
        _check_some_array(args)
        compile_cache.ensure()      # JAX's persistent cache, before the deferred pass's ops compile (compile_cache.py)
        params = list(self.collect_params().values())
        if any(p._value is None for p in params):
            from ast_hybrid.gluon.deferred import first_pass

            first_pass(self, args)      # deferred shape inference, once, on shapes only (gluon/deferred.py)
            missing = [p.name for p in params if p._value is None]
            if missing:
                raise RuntimeError(f"Parameter {missing[0]!r} has not been initialized; call "
                                   "initialize() before running the block")
        c = Compiled(self, args)
        object.__setattr__(self, "_compiled", c)
        return c

    def _call_imperative(self, *args):
        if not FRAMES.traces and symbolic.is_symbolic(args):      # net(sym.var('data')), not hybridized
            return symbol_recorder.apply(self, args)
        if not FRAMES.traces:       # (a traced child's arguments are the trace's arrays: no check per node)
            _check_some_array(args)
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
        from ast_hybrid.ops.deferred import Deferred, inferring

        params = {}
        for k, p in self._reg_params.items():
            if p._value is None and p._deferred_init and shape_known(p.shape):
                p._finish_deferred_init()
            params[k] = Deferred(p) if p._value is None and p._deferred_init else p.data()
        with inferring(), imperative((params, self._reg_params)):
            out = self.hybrid_forward(nd, *args, **params)
        unused = [p.name for p in self._reg_params.values() if p._value is None]
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
        unknown = [p.name for p in self._reg_params.values() if p._value is None]
        raise DeferredInitializationError(
            f"{type(self).__name__} cannot infer the shapes of {', '.join(unknown)}; give them at construction")

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward()")

    def export(self, path, epoch=0, remove_amp_cast=True, format=None):
        """Write ``path-symbol.stablehlo`` (the predict program, jax.export), ``path-symbol.json``
        (its manifest) and ``path-%04d.params`` (``arg:``/``aux:`` names, MXNet's format).  Returns None, as
        MXNet 1.9.1's does (a notebook cell ending in ``net.export(...)`` shows nothing).

        ``format='onnx'``: ``path.onnx`` instead, the block's graph and parameters as an ONNX model for the
        inputs of its last call (``mx.onnx.export_model``); returns its path."""
        from ast_hybrid.gluon import export as _export

        if format == "onnx":
            return _export.export_onnx(self, path)
        if format is not None:
            raise ValueError(f"export: format={format!r}; it takes None (MXNet's files) or 'onnx'")
        _export.export_block(self, path, epoch)


def _int_tracked(args):
    """Whether an argument is an integer (or bool) array in the autograd graph."""
    for a in args:
        for v in (a if isinstance(a, (list, tuple)) else (a,)):
            if v.__class__ in ARRAYS and v._arr.dtype.kind in "iub" and live(v):
                return True
    return False
