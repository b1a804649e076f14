"""``gluon.Trainer``: apply an optimizer to the parameters' gradients (``autograd`` + ``backward()``).

    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch_size)

The update rules (``ast_hybrid/optimizer/updates.py``) follow MXNet 1.9.1's update kernels (``sgd_update``/``sgd_mom_update``, ``nag_mom_update``,
``adam_update`` with the bias correction folded into the learning rate, ``rmsprop_update``, AdaGrad),
including ``rescale_grad = 1 / batch_size``, ``wd`` and ``clip_gradient`` (off for 0 and negative values,
except AdaGrad's, as MXNet); a step updates every parameter in one compiled call.  Each parameter's
``lr_mult`` and ``wd_mult`` scale its learning rate and weight decay as MXNet's ``Optimizer._get_lrs``/
``_get_wds`` do through the trainer's ``param_dict`` (the products taken in Python at every step, so a
multiplier changed between steps takes effect; they reach the program as two vectors, not as constants, so
changing one compiles nothing).  For fast training loops,
``ast_hybrid.functional(net)`` with optax keeps the
whole step in one program.

``load_states`` reads MXNet 1.9.1's ``.states`` files as well as ours (``gluon/states_io.py``); as MXNet, a
trainer given a dict of parameters indexes them by sorted name.
"""

from __future__ import annotations

import pickle
import warnings

from ast_hybrid.optimizer.updates import (  # noqa: F401
    OPTIMIZERS, _compiled_update, effective_clip, initial_states, lazy_update)

__all__ = ["Trainer", "OPTIMIZERS", "effective_clip"]


class Trainer:
    """MXNet's ``gluon.Trainer(params, optimizer, optimizer_params=None, ...)``.

    ``kvstore``: ``'device'``, ``'local'``, ``'nccl'``, None, or a ``'dist_sync'``/``'dist_device_sync'`` name or
    ``KVStore`` (``ast_hybrid.distributed``).  Parameters initialized on several contexts are replicated over
    their devices and the compiled programs sum the gradients over them (``parallel/data_parallel.py``); a
    ``dist_*`` store also sums them over the processes at ``step``.  ``compression_params`` is ignored."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device", compression_params=None,
                 update_on_kvstore=None):
        from ast_hybrid.parallel import distributed

        self._kvstore_arg = kvstore
        self._store = distributed.for_trainer(kvstore)     # checked first: 'dist_async' is refused
        # MXNet's _kvstore: None until the first step, then None where a store named by a string has nothing
        # to do (one process, one context), as MXNet's _init_kvstore decides
        self._kvstore, self._kv_initialized = None, False
        if hasattr(params, "values"):     # as MXNet: by sorted name (the indices save_states writes)
            params = [params[k] for k in sorted(params.keys())]
        elif not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got {type(params).__name__}.")
        seen, self._params = set(), []
        for p in params:
            if id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
                p._set_trainer(self)
        # MXNet's: None until the store is made at the first step, then whether the store "updates" (here
        # the trainer's compiled rules always do; the flag keeps MXNet's checks: update() refused when True)
        self._update_on_kvstore = None
        self._update_on_kvstore_arg = update_on_kvstore
        # MXNet's: the parameters not initialised yet (deferred), whose values the trainer takes at a step
        self._params_to_init = [p for p in self._params if p._value is None]
        self._use_optimizer(optimizer, optimizer_params)
        self._states = {}
        self._rates_cache = None
        self._t = 0

    def _use_optimizer(self, optimizer, optimizer_params):
        """Take the update rule and its settings from ``optimizer`` (a name with ``optimizer_params``, or an
        ``mx.optimizer`` object)."""
        obj = None
        if hasattr(optimizer, "_trainer_spec"):   # an mx.optimizer object (ast_hybrid/optimizer/optimizer.py)
            assert not optimizer_params, \
                "optimizer_params must be None if optimizer is an instance of Optimizer instead of str"
            obj = optimizer
            optimizer, optimizer_params = optimizer._trainer_spec(self)
        if not isinstance(optimizer, str) or optimizer.lower() not in OPTIMIZERS:
            raise ValueError(f"Trainer: unknown optimizer {optimizer!r}; supported: {', '.join(OPTIMIZERS)}")
        self._name = optimizer.lower()
        opts = dict(optimizer_params or {})
        lr = opts.pop("learning_rate", None)
        self._wd = float(opts.pop("wd", 0.0))
        self._scale = float(opts.pop("rescale_grad", 1.0))
        self._clip = effective_clip(self._name, opts.pop("clip_gradient", None))
        self._lr_scheduler = scheduler = opts.pop("lr_scheduler", None)
        # MXNet's Optimizer: a learning_rate given beside a scheduler becomes the scheduler's base_lr;
        # without either, the optimizer's default
        if scheduler is not None and lr is not None and scheduler.base_lr != lr:
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` "
                          "in optimizer.", UserWarning, stacklevel=3)
            scheduler.base_lr = lr
        self._lr = float(lr) if lr is not None else (None if scheduler is not None else OPTIMIZERS[self._name][2])
        opts.pop("multi_precision", None)
        self._lazy = bool(opts.pop("lazy_update", True))
        self._options = tuple(sorted(opts.items()))
        self._n_states = OPTIMIZERS[self._name][1](opts)
        self._rates_cache = None
        self._optimizer = obj if obj is not None else self._optimizer_object(optimizer, optimizer_params)

    def _optimizer_object(self, name, optimizer_params):
        """MXNet's ``Trainer._init_optimizer``: the ``mx.optimizer`` object ``create(name, **params)`` makes,
        bound to this trainer (its learning rate is the trainer's, its ``param_dict`` the parameters by
        index); None where the registry has no class of that name."""
        from ast_hybrid.optimizer.optimizer import Optimizer

        try:    # (a learning_rate beside a schedule: the trainer has warned and set its base_lr already)
            obj = Optimizer.create_optimizer(name, **dict(optimizer_params or {}))
        except (TypeError, ValueError):     # an option only the trainer's rule takes: no object to show
            return None
        obj._bind(self)
        return obj

    @property
    def optimizer(self):
        """The ``mx.optimizer.Optimizer`` this trainer updates with (MXNet's ``Trainer.optimizer``): its
        ``learning_rate``/``lr`` are the trainer's, a ``wd`` set on it applies from the next step, and
        ``num_update``/``rescale_grad`` follow the steps."""
        if self._optimizer is None:
            from ast_hybrid.core.errors import unsupported

            raise unsupported("mxnet.gluon", "Trainer.optimizer",
                              f"mx.optimizer has no {self._name!r} class taking these optimizer_params")
        return self._optimizer

    @property
    def _updaters(self):
        """MXNet's per-context ``Updater`` list (one here: the state is the trainer's, by parameter index)."""
        return [_TrainerUpdater(self)]

    @property
    def learning_rate(self):
        return self._lr_scheduler(self._t) if self._lr_scheduler is not None else self._lr

    def set_learning_rate(self, lr):
        if self._lr_scheduler is not None:      # as MXNet's Optimizer.set_learning_rate
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is undefined.")
        self._lr = float(lr)

    def _init_kvstore(self):
        """MXNet's ``Trainer._init_kvstore``: the store (None where one process and one context leave it
        nothing to do) and ``update_on_kvstore`` (with a store, MXNet's default True unless
        ``MXNET_UPDATE_ON_KVSTORE=0``; always with a row_sparse weight, never by default with only row_sparse
        gradients).  The updates are the trainer's compiled rules either way; the flag keeps MXNet's checks."""
        from ast_hybrid.core.settings import environ
        from ast_hybrid.parallel import distributed

        store, several = self._store, any(p._copies > 1 or p._mesh is not None for p in self._params)
        named = store is not None and isinstance(self._kvstore_arg, str)
        arg = self._update_on_kvstore_arg
        if any(p._stype != "default" for p in self._params):
            if store is None:       # MXNet's _create_sparse_kvstore: a sparse weight lives in a store
                store = self._store = distributed.KVStore("local")
            if arg is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are present.")
            self._kvstore, update = store, True
        else:
            self._kvstore = None if named and "dist" not in store.type and not several else store
            distributed_store = self._kvstore is not None and "dist" in self._kvstore.type
            if any(p._grad_stype != "default" for p in self._params):
                update = distributed_store if arg is None else bool(arg)
            else:
                update = bool(int(environ("MXNET_UPDATE_ON_KVSTORE", "1"))) if arg is None else bool(arg)
            if update and self._kvstore is not None and not self._kvstore.is_capable("optimizer"):
                if arg:
                    raise ValueError(f"Please set update_on_kvstore=False when training with {type(self._kvstore)}")
                update = False
        if self._kvstore is not None:
            self._update_on_kvstore = update
            if update:
                self._kvstore._updater = _TrainerUpdater(self)
        else:
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _reset_kvstore(self):
        """MXNet's: the parameters were given new values (``set_data``/``load`` while the store updates):
        the store is made again at the next step."""
        if self._kvstore is not None and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized, self._kvstore, self._update_on_kvstore = False, None, None
        self._params_to_init = list(self._params)

    def allreduce_grads(self):
        """Sum the gradients over the processes (a ``dist_*`` kvstore); over one process's devices the
        compiled programs have summed them already.  As MXNet's, refused where the store updates."""
        if not self._kv_initialized:
            self._init_kvstore()
        assert not (self._kvstore and self._update_on_kvstore), \
            "allreduce_grads() when parameters are updated on kvstore is not supported. Try setting " \
            "`update_on_kvstore` to False when creating trainer."
        self._allreduce_grads()

    def _allreduce_grads(self):
        from ast_hybrid.parallel import data_parallel, distributed

        if not self._kv_initialized:
            self._init_kvstore()
        if isinstance(self._store, distributed.KVStore):
            self._store.allreduce_grads(self._params)
        elif self._store is not None and self._store.num_workers > 1:
            from ast_hybrid.core.errors import unsupported

            raise unsupported("mxnet.kvstore", f"a registered kvstore ({type(self._store).__name__}) across "
                              "workers in gluon.Trainer", "use kvstore='dist_sync' with `ast-hybrid launch`")
        data_parallel.mark_taken(self._params)

    @property
    def kvstore(self):
        return self._store

    def step(self, batch_size, ignore_stale_grad=False):
        """One update of every trainable parameter, the gradients scaled by ``1 / batch_size``."""
        self._allreduce_grads()
        self._update(batch_size, ignore_stale_grad)

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of :meth:`step` (after :meth:`allreduce_grads`); as MXNet's, refused where the
        store updates."""
        if not self._kv_initialized:
            self._init_kvstore()
        assert not (self._kvstore and self._update_on_kvstore), \
            "update() when parameters are updated on kvstore is not supported. Try setting " \
            "`update_on_kvstore` to False when creating trainer."
        self._update(batch_size, ignore_stale_grad)

    def _update(self, batch_size, ignore_stale_grad=False):
        self._t += 1
        if self._params_to_init:
            self._params_to_init = [p for p in self._params_to_init if p._value is None]
        rescale = self._scale / batch_size
        todo, grads, states = [], [], []
        for p in self._params:
            if p.grad_req == "null" or p._value is None:
                continue
            leaf = p._leaf
            if leaf is None or leaf.grad is None or not leaf.fresh:
                if ignore_stale_grad:
                    continue
                raise UserWarning(f"Gradient of Parameter {p.name!r} has not been updated by backward since last "
                                  "step. Call step(batch_size, ignore_stale_grad=True) to skip it.")
            st = self._states.get(p)
            if st is None:
                st = self._states[p] = initial_states(self._name, p._value, self._n_states)
            todo.append(p)
            grads.append(leaf.grad)
            states.append(st)
        obj = self._optimizer
        if obj is not None:         # MXNet's optimizer sees the step's rescale_grad and counts it
            obj.rescale_grad, obj.num_update = rescale, max(obj.num_update, self._t)
        if not todo:
            return
        lazy = tuple(p._grad_stype == "row_sparse" and lazy_update(self._name, self._lazy, p._stype) for p in todo)
        update = _compiled_update(self._name, self._options, lazy if any(lazy) else ())
        lrs, wds = self._rates(todo)
        new_ws, new_states = update([p._value for p in todo], grads, states, lrs, wds, rescale, self._clip,
                                    self._t)
        listeners = {}
        for p, w, st in zip(todo, new_ws, new_states):
            p._value = w
            self._states[p] = st
            p._leaf.fresh = False       # MXNet: a gradient serves one update
            for notify in p._listeners:
                # a block's bound method is a new object per parameter it was taken for: keyed by its block
                listeners[id(getattr(notify, "__self__", notify)), getattr(notify, "__func__", None)] = notify
        for notify in listeners.values():     # each compiled program refreshes its arguments once
            notify()

    def _rates(self, params):
        """Every parameter's learning rate and weight decay, ``lr * p.lr_mult`` and ``wd * p.wd_mult`` in
        Python floats as MXNet's ``_get_lrs``/``_get_wds`` (float32 in the program, as MXNet's kernels take
        them), as two vectors; the last pair is kept while nothing in it changes (no transfer per step)."""
        import numpy as np

        lr, wd = self.learning_rate, (self._optimizer.wd if self._optimizer is not None else self._wd)
        key = (lr, wd, tuple((p.lr_mult, p.wd_mult) for p in params))
        if self._rates_cache is None or self._rates_cache[0] != key:
            import jax.numpy as jnp

            lrs = jnp.asarray(np.array([lr * m for m, _ in key[2]], dtype=np.float64))
            wds = jnp.asarray(np.array([wd * m for _, m in key[2]], dtype=np.float64))
            self._rates_cache = (key, lrs, wds)
        return self._rates_cache[1], self._rates_cache[2]

    def save_states(self, fname):
        """Pickle the update count and each parameter's optimizer states (by parameter name) to ``fname``.

        Our own format (``gluon/states_io.py``): ``load_states`` here reads it, MXNet does not.  The optimizer's
        settings are not saved: the trainer that loads the file keeps its own."""
        import numpy as np

        with open(fname, "wb") as f:
            pickle.dump({"t": self._t, "states": {p.name: [np.asarray(s) for s in st]
                                                  for p, st in self._states.items()}}, f)

    def load_states(self, fname):
        """Read the states ``save_states`` wrote, ours or MXNet 1.9.1's (``gluon/states_io.py``).

        From MXNet's file, as MXNet's ``load_states``: the states of the parameter at each index of this
        trainer's list, and the pickled optimizer, whose rule and settings (learning rate, ``wd``,
        ``momentum``...) and update count replace this trainer's; its ``lr_scheduler`` when it is one of
        ``mx.lr_scheduler``'s, else (a GluonCV schedule) this trainer's own is kept.  The trainer's
        ``rescale_grad`` stays its own, as in MXNet."""
        import jax.numpy as jnp

        from ast_hybrid.gluon import states_io

        kind, *read = states_io.read(fname)
        if kind == "mxnet":
            self._load_mxnet_states(fname, *read)
            return
        saved = read[0]
        by_name = {p.name: p for p in self._params}
        self._t = saved["t"]
        self._states = {by_name[k]: tuple(jnp.asarray(s) for s in v) for k, v in saved["states"].items()
                        if k in by_name}

    def _load_mxnet_states(self, fname, states, optimizer):
        import jax.numpy as jnp

        from ast_hybrid.gluon.states_io import StatesFileError, Unread
        from ast_hybrid.optimizer.optimizer import Optimizer

        if isinstance(optimizer, Optimizer):
            if isinstance(optimizer.lr_scheduler, Unread):
                if self._lr_scheduler is None:
                    warnings.warn(f"{fname}: the optimizer's lr_scheduler is a {optimizer.lr_scheduler.qualname}, "
                                  "which is not loaded; this trainer has none, so the learning rate stays "
                                  f"{optimizer._lr}", UserWarning, stacklevel=3)
                optimizer.lr_scheduler = self._lr_scheduler
            scale = self._scale
            self._use_optimizer(optimizer, None)
            self._scale = scale
            counts = set(optimizer._index_update_count.values())
            if len(counts) > 1:
                warnings.warn(f"{fname}: MXNet counted {sorted(counts)} updates for different parameters; this "
                              f"trainer keeps one count ({optimizer.num_update}) for Adam's bias correction and "
                              "the schedule", UserWarning, stacklevel=3)
            self._t = optimizer.num_update
        elif optimizer is not None:
            what = getattr(optimizer, "qualname", type(optimizer).__name__)
            warnings.warn(f"{fname}: the optimizer object it holds ({what}) is not one of "
                          "mx.optimizer's SGD, NAG, Adam, RMSProp, AdaGrad and is not loaded; only the states "
                          "are read, with this trainer's own optimizer settings and update count",
                          UserWarning, stacklevel=3)
        loaded = {}
        for index, arrays in states.items():
            if not isinstance(index, int) or not 0 <= index < len(self._params):
                raise StatesFileError(f"{fname}: a state for parameter index {index!r}; this trainer has "
                                      f"{len(self._params)} parameters (indices are positions in its list)")
            p = self._params[index]
            want = tuple(p.shape)
            if len(arrays) != self._n_states or any(a is None or tuple(a.shape) != want for a in arrays):
                raise StatesFileError(
                    f"{fname}: index {index} holds {len(arrays)} state arrays of shapes "
                    f"{[None if a is None else tuple(a.shape) for a in arrays]}, but parameter {p.name!r} "
                    f"(shape {want}) takes {self._n_states} for {self._name} with these options: the file was "
                    "written for another network, parameter order or optimizer (multi_precision states "
                    "are not read)")
            loaded[p] = tuple(jnp.asarray(a) for a in arrays)
        self._states = loaded


class _TrainerUpdater:
    """What MXNet's ``Trainer._updaters[i]`` / ``_kvstore._updater`` show: ``optimizer`` and ``states`` (each
    parameter's index to its state, MXNet's NDArray or tuple of them), read from the trainer's own."""

    def __init__(self, trainer):
        self._trainer = trainer

    @property
    def optimizer(self):
        return self._trainer._optimizer

    @property
    def states(self):
        from ast_hybrid.core.ndarray import NDArray

        t, index = self._trainer, {id(p): i for i, p in enumerate(self._trainer._params)}
        pack = t._optimizer._pack if t._optimizer is not None else (lambda s: s)
        return {index[id(p)]: pack(tuple(NDArray(s) for s in st)) for p, st in t._states.items()}

    def get_states(self, dump_optimizer=False):
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)
