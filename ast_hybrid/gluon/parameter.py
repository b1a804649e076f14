"""Gluon's ``Parameter``, ``Constant`` and ``ParameterDict`` (MXNet 1.x semantics).

A ``Parameter`` holds one jax array.  A shape with 0 entries is unknown
(MXNet's convention): ``initialize`` is then deferred until the owning block
sees its first input and fills the shape in (``Dense(256)`` learns in_units).

    >>> p = Parameter('dense0_weight', shape=(4, 0), allow_deferred_init=True)
    >>> p.initialize()
    >>> p.shape = (4, 3)
    >>> p._finish_deferred_init(); p.data().shape
    (4, 3)

Inside a hybridized program the block swaps tracers in for the arrays
(``_bind``) and collects the writes made during the trace (BatchNorm's running
statistics) as outputs of the program.
"""

from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np

from ast_hybrid import init as _init
from ast_hybrid.core.autograd import _Leaf
from ast_hybrid.core.storage import Storage, grad_storage
from ast_hybrid.core.errors import DeferredInitializationError  # noqa: F401  (gluon.parameter's name)
from ast_hybrid.core.ndarray import NDArray, ndarray
from ast_hybrid.core.npmode import MODE as NP_MODE
from ast_hybrid.ops._core import raw
from ast_hybrid.ops.normalization import running_update
from .parameter_private import MXNetPrivateFields

__all__ = ["Parameter", "Constant", "ParameterDict", "DeferredInitializationError"]


def shape_known(shape) -> bool:
    return shape is not None and all(int(s) > 0 for s in shape)


def _shown(shape):
    """A shape as MXNet prints it: an unknown dimension is 0, or -1 under ``npx.set_np()`` (numpy shapes)."""
    if shape is None or not NP_MODE.shape:
        return shape
    return tuple(-1 if d == 0 else d for d in shape)


class Parameter(MXNetPrivateFields):
    _cls = NDArray      # the class of data() and grad(): ndarray once initialised under npx.set_np()
    _copies = 1         # several contexts on this process's one CPU device: how many (list_data)

    def __init__(self, name, grad_req="write", shape=None, dtype="float32", lr_mult=1.0, wd_mult=1.0,
                 init=None, allow_deferred_init=False, differentiable=True, stype="default",
                 grad_stype="default"):
        for what, given in (("grad_stype", grad_stype), ("stype", stype)):
            assert given in ("default", "row_sparse", "csr"), \
                f"{what} for Parameter '{name}' must be one of 'default', 'row_sparse', or 'csr', but got '{given}'"
        self.name = name
        self._stype, self._grad_stype = stype, grad_stype
        self._shape = tuple(shape) if isinstance(shape, (tuple, list)) else ((shape,) if shape else None)
        self.dtype = np.dtype(dtype).name
        self.init = init
        self.lr_mult, self.wd_mult = lr_mult, wd_mult
        self.allow_deferred_init = allow_deferred_init
        self._grad_req = grad_req if differentiable else "null"
        self._value = None
        self._deferred_init = ()
        self._listeners = []      # callables run when the array is replaced (hybridize caches)
        self._trace = None        # the trace the parameter is bound into, during a hybridized trace
        self._leaf = None         # its autograd leaf (gradient buffer), when grad_req is not 'null'
        self._ctx = None          # the contexts given to initialize/reset_ctx (None: the current context's)
        self._mesh = None         # several contexts: the mesh the value is replicated over (parallel.data_parallel)
        self._copies = 1          # several contexts on this process's one CPU device: how many (list_data)
        # MXNet's private fields that Parameter subclasses copy from another parameter (see "MXNet's private
        # protocol" below): kept as MXNet names them, with nothing of ours behind them
        self._differentiable = differentiable
        self._var = None
        self._ctx_map = None
        self._trainer = None

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ("write", "add", "null"):
            raise ValueError(f"Parameter {self.name!r}: grad_req must be 'write', 'add' or 'null', got {req!r}")
        self._grad_req = req
        if req == "null":
            self._leaf = None
        elif self._leaf is not None:
            self._leaf.grad_req = req
        elif self._value is not None:
            self._leaf = _Leaf(req)

    def _set_trainer(self, trainer):
        """The trainer this parameter is updated by (MXNet's ``Trainer`` sets it for each of its parameters)."""
        # as MXNet's: a sparse parameter is updated by one trainer (its rows are pulled from that trainer's store)
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' because it was already set. "
                               f"More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    def _check_and_get(self, arr_list, ctx):
        """``arr_list`` (this parameter's ``_value`` or ``_data``, or another's) as an NDArray, as ``data(ctx)``
        gives it; inside a hybridized trace, the value bound to this parameter.  MXNet's errors when
        uninitialised."""
        trace = self._trace
        if trace is not None:
            return self._cls(trace.read(self), trace.marker(self))
        if arr_list is None:
            if self._deferred_init:
                raise DeferredInitializationError(
                    f"Parameter {self.name!r} has not been initialized yet because initialization was "
                    "deferred. Actual initialization happens during the first forward pass.")
            raise RuntimeError(f"Parameter {self.name!r} has not been initialized. Note that you should "
                               "initialize parameters and create Trainer with Block.collect_params() "
                               "instead of Block.params because the later does not include Parameters "
                               "of nested child Blocks")
        if isinstance(arr_list, (list, tuple)):      # MXNet's per-context list: ours holds one replicated value
            arr_list = arr_list[0]
            if isinstance(arr_list, NDArray) and raw(arr_list) is self._value:
                arr_list = self._value                  # this parameter's own (``self._data``): its memory
        if arr_list is not self._value:
            return self._cls(raw(arr_list))
        out = self._cls(raw(arr_list), self._leaf)
        out._base = (Storage(self._read_data, self.set_data), None)     # MXNet's data() is the parameter's memory
        return out

    # shape ------------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(int(s) for s in new_shape)
        if self._shape is not None:
            if len(self._shape) != len(new_shape) or any(
                    o != 0 and o != n for o, n in zip(self._shape, new_shape)):
                raise ValueError(f"Expected shape {new_shape} is incompatible with given shape "
                                 f"{self._shape} for Parameter {self.name!r}")
        self._shape = new_shape

    def __repr__(self):
        return f"Parameter {self.name} (shape={_shown(self._shape)}, dtype={self.dtype})"

    # initialisation ---------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        if self._value is not None and not force_reinit:
            return
        if ctx is not None:
            self._set_ctx(ctx)
        default_init = _init.create(default_init) if default_init is not None else _init.Uniform()
        explicit = init if init is not None else self.init     # MXNet: an init given here wins over the parameter's
        if not shape_known(self._shape):
            if self.allow_deferred_init:
                self._deferred_init = (explicit, default_init)
                return
            raise ValueError(f"Cannot initialize Parameter {self.name!r} because it has invalid shape: "
                             f"{self._shape}. Please specify in_units, in_channels, etc for `Block`s.")
        self._deferred_init = (explicit, default_init)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        if not shape_known(self._shape):
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialized yet because initialization was "
                f"deferred; its shape {self._shape} is still unknown")
        explicit, default_init = self._deferred_init
        self._deferred_init = ()
        # initialised under npx.set_np(): its data and gradient are mx.np arrays (MXNet's _init_impl)
        self._cls = ndarray if NP_MODE.array else NDArray
        # Gluon's rule (not the name patterns of Initializer.__call__): the parameter's own initializer,
        # else the one given to initialize(), fills it whatever its name ends in
        chosen = explicit if isinstance(explicit, (_init.Initializer, str)) else default_init
        import jax

        with jax.ensure_compile_time_eval():    # a value, even inside a trace (the abstract deferred-shape pass)
            self._set(_init.create(chosen)._init_weight(self.name, self._shape, self.dtype))

    def _set_ctx(self, ctx):
        from ast_hybrid.parallel import data_parallel
        from ast_hybrid.core.context import Context

        self._ctx = [Context(c) for c in (ctx if isinstance(ctx, (list, tuple)) else [ctx])]
        self._mesh = data_parallel.mesh_for(self._ctx)
        self._copies = len(self._ctx) if self._mesh is None else 1     # several contexts on one CPU device

    def reset_ctx(self, ctx=None):
        """Move the value to ``ctx`` (a context or a list: several replicate it over their devices)."""
        from ast_hybrid.core.context import current_context

        self._set_ctx(current_context() if ctx is None else ctx)
        if self._value is not None:
            self._set(self._value)

    def list_ctx(self):
        """The contexts the parameter lives on."""
        from ast_hybrid.core.context import current_context

        return list(self._ctx) if self._ctx else [current_context()]

    # data -------------------------------------------------------------------
    def data(self, ctx=None):
        """The value as an NDArray (inside a hybridized trace: the tracer bound to this parameter)."""
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via data() because "
                               f"its storage type is {self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._value, ctx)

    def row_sparse_data(self, row_id):
        """A row_sparse parameter's rows ``row_id`` (MXNet pulls them from the trainer's store), on
        ``row_id``'s context."""
        return self._row_sparse("row_sparse_data", row_id)

    def list_row_sparse_data(self, row_id):
        """``row_sparse_data(row_id)``, one per context."""
        return self._per_context(self._row_sparse("list_row_sparse_data", row_id))

    def _row_sparse(self, what, row_id):
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name} via row_sparse_data() because its "
                               f"storage type is {self._stype}. Please use data() instead." if what == "row_sparse_data"
                               else f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                               f"list_row_sparse_data() because its storage type is {self._stype}. Please use "
                               "data() instead.")
        if self._trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when no Trainer is "
                               "created with it.")
        from ast_hybrid.core.sparse import RowSparseNDArray

        value = RowSparseNDArray(self._check_and_get(self._value, None)._arr).retain(row_id)
        if isinstance(row_id, NDArray):
            value = value.as_in_context(row_id.context)
        value._ag = self._leaf      # recorded as the parameter: its gradient is the parameter's
        return value

    def _read_data(self):
        return self._value

    def grad(self, ctx=None):
        """The gradient written by the last ``backward()`` (zeros before any)."""
        import jax.numpy as jnp

        if self._leaf is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter {self.name!r} because grad_req='null'")
        if self._leaf.grad is None:
            self._leaf.grad = jnp.zeros_like(self._value)
        if ctx is not None and self._copies > 1:
            from ast_hybrid.core.context import Context

            parts = self._per_context_grads()
            if parts and Context(ctx) in self._ctx:
                return parts[self._ctx.index(Context(ctx))]
        if self._grad_stype != "default":
            from ast_hybrid.core.sparse import to_stype

            out = to_stype(NDArray(self._leaf.grad), self._grad_stype)
        else:
            out = self._cls(self._leaf.grad)
        if type(self._leaf) is _Leaf:        # writes into it set the gradient (MXNet's grad() is its memory)
            out._base = (grad_storage(self._leaf), None)
        return out

    def list_grad(self):
        """One gradient per context: on a mesh the summed gradient on each device; on one CPU device, each
        context's backward's own when there was one per context since the last step (MXNet's per-context
        gradients, which ``Trainer.step`` sums), else the sum for each."""
        return self._per_context_grads() or self._per_context(self.grad())

    def _per_context_grads(self):
        parts = getattr(self._leaf, "parts", ())
        if self._mesh is None and self._copies > 1 and len(parts) == self._copies:
            return [self._cls(g) for g in parts]
        return []

    def list_data(self):
        """One value per context, each on its context's device."""
        if self._stype != "default":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts via list_data() "
                               f"because its storage type is {self._stype}. Please use row_sparse_data() instead.")
        return self._per_context(self.data())

    def _per_context(self, value):
        if self._mesh is None:      # one device: the same value (and gradient) for each context
            return [value] + [type(value)(value._arr, value._ag) for _ in range(self._copies - 1)]
        by_device = {s.device: s.data for s in value._arr.addressable_shards}
        return [NDArray(by_device[c.jax_device()]) for c in self._ctx]

    def set_data(self, data):
        trace = self._trace
        if trace is not None:
            trace.write(self, data)
            return
        import jax.numpy as jnp

        arr = jnp.asarray(raw(data), dtype=self.dtype)
        if self._shape is not None and shape_known(self._shape) and tuple(arr.shape) != tuple(self._shape):
            raise ValueError(f"Parameter {self.name!r}: cannot set data of shape {tuple(arr.shape)}, "
                             f"expected shape {tuple(self._shape)}")
        self._deferred_init = ()
        trainer = self._trainer     # MXNet's: a store that updates holds the values; it is made again
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore \
                and self not in trainer._params_to_init:
            trainer._reset_kvstore()
        self._set(arr)

    def update_running(self, batch, momentum):
        """``value * momentum + batch * (1 - momentum)``: a running statistic's update (BatchNorm's, made at
        backward); inside a hybridized trace, one of the writes the program returns for the backward."""
        trace = self._trace
        if trace is not None:
            trace.update_running(self, batch, momentum)
            return
        self.set_data(running_update(self._value, raw(batch), momentum, 1 - momentum))

    def _set(self, value):
        import jax.numpy as jnp

        value = jnp.asarray(raw(value), dtype=self.dtype)
        self._shape = tuple(value.shape)
        if self._grad_req != "null" and self._leaf is None:
            self._leaf = _Leaf(self._grad_req)
        if self._mesh is not None or self._copies > 1:
            from ast_hybrid.parallel import data_parallel

            if self._mesh is not None:
                value = data_parallel.replicate(value, self._mesh)
            if self._leaf is not None and type(self._leaf) is _Leaf:
                self._leaf = data_parallel.SummedLeaf(self._leaf.grad_req, self._leaf.grad)
        elif self._ctx:         # one context: its device (core.context.place's rule)
            from ast_hybrid.core.context import place

            value = place(value, self._ctx[0])
        self._value = value
        for notify in list(self._listeners):
            notify()

    def cast(self, dtype):
        self.dtype = np.dtype(dtype).name
        if self._value is not None:
            self._set(self._value.astype(self.dtype))

    def zero_grad(self):
        if self._leaf is not None:
            self._leaf.grad = None
            if hasattr(self._leaf, "parts"):
                self._leaf.parts = []

    def var(self):
        """The parameter's variable in a symbolic graph (one per parameter, as MXNet's)."""
        from ast_hybrid.symbol.recorder import param_variable

        return param_variable(self)


class Constant(Parameter):
    """A parameter that is never trained (``grad_req='null'``) with a fixed value."""

    def __init__(self, name, value):
        from ast_hybrid import nd

        if not isinstance(value, NDArray):    # MXNet: nd.array(value), float32 whatever the value's dtype
            value = nd.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_init.Constant(value))


def _merge_shapes(param, wanted):
    """A shared parameter asked for again (MXNet's rule): an unknown (0 or -1) dimension on either side
    takes the other's; known dimensions must agree."""
    have = param.shape
    if have is None or len(have) != len(wanted):
        return wanted
    merged = []
    for w, h in zip(wanted, have):
        if w != h and w > 0 and h > 0:
            raise ValueError(f"Cannot retrieve Parameter {param.name!r}: asked for shape {tuple(wanted)}, "
                             f"it has {tuple(have)}")
        merged.append(h if w in (0, -1) else w)
    return tuple(merged)


class ParameterDict:
    """An ordered dict of parameters sharing a name prefix (``params.get('weight')``)."""

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    @property
    def prefix(self):
        return self._prefix

    def __repr__(self):
        body = "\n".join(f"  {v!r}" for v in self._params.values())
        return f"{self._prefix} (\n{body}\n)" if self._prefix else f"(\n{body}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self._params[full] = param
        else:
            for k, v in kwargs.items():
                if k == "shape" and v is not None:
                    param.shape = _merge_shapes(param, v if isinstance(v, (tuple, list)) else (v,))
                elif k == "init" and param.init is None:
                    param.init = v
        return param

    def get_constant(self, name, value=None):
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named {full!r}; give a value to create it")
            param = Constant(full, value)
            self._params[full] = param
        return param

    def update(self, other):
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ValueError(f"Cannot update self with other because they have different "
                                 f"Parameters with the same name {k!r}")
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        default = _init.create(init) if init is not None else _init.Uniform()
        for p in self.values():
            p.initialize(None, ctx, default, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """The contexts of the parameters (of the first one, as MXNet)."""
        return next(iter(self.values())).list_ctx() if len(self) else []

    def setattr(self, name, value):
        for p in self.values():
            setattr(p, name, value)

    def select(self, pattern):
        out = ParameterDict(self._prefix)
        regex = re.compile(pattern)
        for k, v in self.items():
            if regex.match(k):
                out._params[k] = v
        return out

    def save(self, filename, strip_prefix=""):
        from ast_hybrid.io import params_file as params_io

        arrays = {}
        for p in self.values():
            if strip_prefix and not p.name.startswith(strip_prefix):
                raise ValueError(f"Prefix {strip_prefix!r} is to be striped before saving, but Parameter's "
                                 f"name {p.name!r} does not start with it")
            arrays[p.name[len(strip_prefix):]] = p._check_and_get(p._value, None)    # (a row_sparse one too)
        params_io.save(filename, arrays)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False, restore_prefix="", cast_dtype=False,
             dtype_source="current"):
        """Set the parameters from an MXNet ``.params`` file (``cast_dtype=True, dtype_source='saved'``: each
        takes the dtype saved)."""
        from ast_hybrid.io import params_file as params_io

        if dtype_source not in ("current", "saved"):
            raise ValueError(f"ParameterDict.load: dtype_source must be 'current' or 'saved', got {dtype_source!r}")
        loaded = params_io.load(filename)
        loaded = {restore_prefix + k.split(":", 1)[-1] if k.startswith(("arg:", "aux:")) else restore_prefix + k: v
                  for k, v in loaded.items()}
        assign_loaded(self._params, loaded, str(filename), allow_missing, ignore_extra,
                      dtype_source if cast_dtype else "current")


def assign_loaded(params, loaded, where, allow_missing, ignore_extra, dtype_source="current"):
    """Set ``params`` (name -> Parameter) from ``loaded`` (name -> array), with clear errors.  A saved dtype
    other than the parameter's: the value is cast to the parameter's, or with ``dtype_source='saved'`` (MXNet's
    ``load_parameters(cast_dtype=True, dtype_source='saved')``) the parameter takes the saved dtype."""
    if not allow_missing:
        # a parameter shared under several names is saved once (save_parameters(deduplicate=True), MXNet
        # 1.6+): any of its names in the file will do
        aliases = {}
        for k, p in params.items():
            aliases.setdefault(id(p), []).append(k)
        missing = [k for k, p in params.items() if not any(a in loaded for a in aliases[id(p)])]
        if missing:
            raise ValueError(f"Parameter {missing[0]!r} is missing in file {where!r}, which contains "
                             f"parameters: {_brief(loaded)}. Set allow_missing=True to ignore missing "
                             "parameters." + (f" (also missing: {', '.join(missing[1:])})" if missing[1:] else ""))
    if not ignore_extra:
        extra = [k for k in loaded if k not in params]
        if extra:
            raise ValueError(f"Parameter {extra[0]!r} loaded from file {where!r} is not present in the "
                             f"block, which contains parameters: {_brief(params)}. Set ignore_extra=True "
                             "to ignore.")
    for name, value in loaded.items():
        p = params.get(name)
        if p is None:
            continue
        if p.shape is not None and len(p.shape) == value.ndim and all(
                s in (0, v) for s, v in zip(p.shape, value.shape)):
            p.shape = value.shape
        elif p.shape is not None and tuple(p.shape) != tuple(value.shape):
            raise ValueError(f"Parameter {name!r}: shape mismatch loading from {where!r}: expected "
                             f"{tuple(p.shape)}, found {tuple(value.shape)} in the file")
        if dtype_source == "saved" and np.dtype(value.dtype) != np.dtype(p.dtype):
            p.dtype = np.dtype(value.dtype).type      # (MXNet keeps the scalar type here)
        p.set_data(value.astype(p.dtype) if value.dtype != np.dtype(p.dtype) else value)
        p._cls = ndarray if NP_MODE.array else NDArray     # loaded under npx.set_np(): mx.np arrays (MXNet's)


def _brief(names, limit=8):
    names = list(names)
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
