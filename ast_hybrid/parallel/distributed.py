"""``ast_hybrid.distributed``: training over several processes and hosts on JAX's distributed runtime.

MXNet's key-value store (``mx.kv.create``, ``Trainer(..., kvstore=...)``) over ``jax.distributed``:

    import ast_hybrid.distributed
    ast_hybrid.distributed.initialize()       # on a cluster; ``ast-hybrid launch`` does it for you
    kv = mx.kv.create('dist_sync')           # kv.rank, kv.num_workers, kv.barrier()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {...}, kvstore=kv)

``initialize()`` is ``jax.distributed.initialize`` (which reads SLURM, Open MPI, Kubernetes and the like
itself when given no arguments) with CPU collectives over gloo, so that processes without an accelerator can
all-reduce.  A ``'dist_sync'`` store sums the gradients of every process inside one compiled program at each
``trainer.step`` (``parallel/data_parallel.py``); ``'device'``/``'local'`` stores sum over the devices of one
process, which the compiled SPMD programs already do.  ``'dist_async'`` is refused: see ``REFUSED``.

By default only process 0 writes files through ``Block.save_parameters`` (``writes_files()``); call
``set_all_processes_write(True)`` to let every process write.
"""

from __future__ import annotations

__all__ = ["initialize", "is_initialized", "rank", "num_workers", "barrier", "writes_files",
           "set_all_processes_write", "KVStoreBase", "KVStore", "create", "KINDS", "REFUSED"]

# kvstore kind -> whether it sums over processes
KINDS = {"local": False, "device": False, "nccl": False,
         "dist_sync": True, "dist_device_sync": True, "dist_sync_device": True}

_ASYNC = ("is not supported by ast-hybrid: its workers sum gradients with JAX's collectives inside a compiled "
          "program, which every worker runs in step; there is no parameter server to apply one worker's "
          "update while the others compute. Use kvstore='dist_sync' (or 'dist_device_sync'): the same "
          "training with synchronous updates")
REFUSED = {"dist_async": _ASYNC, "dist_device_async": _ASYNC,
           "horovod": "is not available in ast-hybrid; use kvstore='dist_sync' with `ast-hybrid launch` or "
                      "ast_hybrid.distributed.initialize(), which use JAX's own collectives",
           "byteps": "is not available in ast-hybrid; use kvstore='dist_sync' with `ast-hybrid launch` or "
                     "ast_hybrid.distributed.initialize(), which use JAX's own collectives"}

_WRITERS = {"all": False}


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None,
               cpu_collectives="gloo", **kwargs):
    """Join this process to the others: ``jax.distributed.initialize`` with the same arguments (none: read
    from the cluster's environment), CPU collectives over ``cpu_collectives`` first.  Call it before any
    array is made; a second call with the same arguments does nothing."""
    import jax

    if is_initialized():
        if num_processes not in (None, jax.process_count()) or process_id not in (None, jax.process_index()):
            raise RuntimeError(f"ast_hybrid.distributed.initialize: already initialized as process "
                               f"{jax.process_index()} of {jax.process_count()}; it can be called once")
        return
    if cpu_collectives:
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id, local_device_ids, **kwargs)
    except RuntimeError as exc:
        if "must be called before any JAX" in str(exc):
            raise RuntimeError("ast_hybrid.distributed.initialize() must run before anything uses jax (before "
                               "the first array or parameter is made): call it at the top of the script") from exc
        raise


def is_initialized():
    """Whether ``jax.distributed`` has been initialized in this process."""
    import jax

    return jax.distributed.is_initialized()


def rank():
    """This process's number, 0 to ``num_workers() - 1``."""
    import jax

    return jax.process_index()


def num_workers():
    """How many processes train together."""
    import jax

    return jax.process_count()


def barrier(name="ast_hybrid.barrier"):
    """Wait until every process has reached a barrier of this name."""
    if num_workers() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


def writes_files():
    """Whether this process writes checkpoints: process 0, or every one after ``set_all_processes_write``."""
    return _WRITERS["all"] or not is_initialized() or rank() == 0


def set_all_processes_write(flag=True):
    """Let every process (``True``) or only process 0 (``False``, the default) write checkpoints."""
    _WRITERS["all"] = bool(flag)


class KVStoreBase:
    """MXNet's ``mx.kv.KVStoreBase``: the interface of a key-value store, and the registry of user-defined
    ones (``@KVStoreBase.register`` on a subclass, then ``mx.kv.create(its lower-cased name)``).  A
    ``gluon.Trainer`` given a registered store of one worker trains as with 'device' (the compiled programs
    sum over the contexts); across workers, use 'dist_sync'."""

    OPTIMIZER = "optimizer"
    kv_registry: dict = {}

    def broadcast(self, key, value, out, priority=0):
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def is_capable(self, capability):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()

    @property
    def type(self):
        raise NotImplementedError()

    @property
    def rank(self):
        raise NotImplementedError()

    @property
    def num_workers(self):
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register ``klass`` (a KVStoreBase subclass) under its lower-cased class name for ``create``."""
        import warnings

        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"WARNING: New kvstore {klass.__module__}.{klass.__name__} is overriding existing "
                          f"kvstore {old.__module__}.{old.__name__}")
        KVStoreBase.kv_registry[name] = klass
        return klass


class KVStore(KVStoreBase):
    """MXNet's ``mx.kv.KVStore`` for data-parallel training: ``type``, ``rank``, ``num_workers``, ``barrier()``,
    and ``init``/``push``/``pull``/``pushpull`` of NDArrays (a push sums the values given, over the processes
    too for a ``dist_*`` store; with ``set_optimizer``, a push updates the stored value with the optimizer,
    as MXNet's local store does).  ``gluon.Trainer(..., kvstore=kv)`` sums gradients through it."""

    def __init__(self, kind="local"):
        self._type = check_kind(kind)
        self._store = {}
        self._updater = None

    def is_capable(self, capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"Unknown capability: {capability}")

    def set_optimizer(self, optimizer):
        """Pushes from now on update the stored values with ``optimizer`` (an ``mx.optimizer`` object), as
        MXNet's local store does; on a ``dist_*`` store every worker applies the same summed update."""
        self._updater = optimizer._make_updater()      # (mx.optimizer's Updater; this room does not import it)

    def _set_updater(self, updater):
        self._updater = updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        assert self._updater is not None, "Cannot save states for distributed training"
        with open(fname, "wb") as f:
            f.write(self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        assert self._updater is not None, "Cannot load states for distributed training"
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    def __repr__(self):
        return f"<KVStore {self._type!r}: worker {self.rank} of {self.num_workers}>"

    @property
    def type(self):
        return self._type

    @property
    def is_distributed(self):
        return KINDS[self._type]

    @property
    def rank(self):
        return rank() if self.is_distributed else 0

    @property
    def num_workers(self):
        return num_workers() if self.is_distributed else 1

    def barrier(self):
        if self.is_distributed:
            barrier(f"ast_hybrid.kvstore.{self._type}")

    _barrier = barrier      # MXNet 1.9.1's KVStore has this name

    # --- keys and values ------------------------------------------------------------------------------
    def init(self, key, value):
        """Store each key's value; on a ``dist_*`` store process 0's value, as MXNet's server keeps the
        value rank 0 pushed."""
        pairs = _pairs(key, value)
        for (k, _), v in zip(pairs, self._from_first([_first(v)._arr for _, v in pairs])):
            self._store[k] = v

    def push(self, key, value, priority=0):
        pairs = _pairs(key, value)
        sums = [sum(v._arr for v in (vs if isinstance(vs, (list, tuple)) else [vs])) for _, vs in pairs]
        for (k, _), total in zip(pairs, self._summed(sums)):
            if k not in self._store:
                raise KeyError(f"KVStore.push: key {k!r} was not initialized; call kv.init({k!r}, value) first")
            if self._updater is not None and callable(self._updater):     # MXNet: updater(key, grad, stored)
                from ast_hybrid.core.ndarray import NDArray

                stored = NDArray(self._store[k])
                self._updater(k, NDArray(total), stored)
                total = stored._arr
            self._store[k] = total

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        for k, outs in _pairs(key, out):
            if k not in self._store:
                raise KeyError(f"KVStore.pull: key {k!r} was not initialized; call kv.init({k!r}, value) first")
            for o in (outs if isinstance(outs, (list, tuple)) else [outs]):
                o._arr = self._store[k].astype(o._arr.dtype)

    def pushpull(self, key, value, out=None, priority=0):
        pairs = _pairs(key, value)
        sums = self._summed([sum(v._arr for v in (vs if isinstance(vs, (list, tuple)) else [vs]))
                             for _, vs in pairs])
        targets = [vs for _, vs in pairs] if out is None else [o for _, o in _pairs(key, out)]
        for total, outs in zip(sums, targets):
            for o in (outs if isinstance(outs, (list, tuple)) else [outs]):
                o._arr = total.astype(o._arr.dtype)

    def _summed(self, arrays):
        from ast_hybrid.parallel import data_parallel

        if not self.is_distributed:
            return list(arrays)
        return data_parallel.allreduce_across_processes(arrays)

    def _from_first(self, arrays):
        """Process 0's values of ``arrays`` in every process (a sum in which the others give zeros)."""
        import jax.numpy as jnp

        if not self.is_distributed or self.num_workers == 1:
            return list(arrays)
        mine = list(arrays) if self.rank == 0 else [jnp.zeros_like(a) for a in arrays]
        return self._summed(mine)

    def broadcast_params(self, params):
        """Every process takes process 0's values of the parameters not broadcast before, as MXNet's
        Trainer does at its first step (``kvstore.broadcast`` in ``_init_params``): without it, workers
        whose initializers drew different values would train different models."""
        if not self.is_distributed or self.num_workers == 1:
            return
        seen = self.__dict__.setdefault("_broadcast", set())
        todo = [p for p in params if id(p) not in seen and p._value is not None]
        for p, value in zip(todo, self._from_first([p._value for p in todo])):
            p._set(value)
            seen.add(id(p))

    def allreduce_grads(self, params):
        """Sum the fresh gradients of ``params`` over the processes (a ``dist_*`` store with several); the
        first time, each parameter's value is process 0's first (``broadcast_params``)."""
        if self.num_workers == 1:
            return
        self.broadcast_params(params)
        leaves = [p._leaf for p in params if p._leaf is not None and p._leaf.grad is not None]
        for leaf, total in zip(leaves, self._summed([leaf.grad for leaf in leaves])):
            leaf.grad = total


def _first(v):
    return v[0] if isinstance(v, (list, tuple)) else v


def _pairs(key, value):
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise ValueError(f"KVStore: {len(key)} keys need a list of {len(key)} values")
        return list(zip(key, value))
    return [(key, value)]


def check_kind(kind):
    """``kind`` if ast-hybrid has that kvstore, else a ValueError saying why not and what to use."""
    if not isinstance(kind, str):
        raise TypeError(f"kvstore must be a string such as 'device' or 'dist_sync', a KVStore or None; "
                        f"got {type(kind).__name__}")
    if kind in REFUSED:
        raise ValueError(f"kvstore={kind!r} {REFUSED[kind]}")
    if kind not in KINDS:
        raise ValueError(f"unknown kvstore {kind!r}; ast-hybrid has {', '.join(map(repr, KINDS))} (or None)")
    return kind


def create(name="local"):
    """``mx.kv.create(name)``: a registered store of that name (``KVStoreBase.register``), else a
    :class:`KVStore`."""
    if isinstance(name, str) and name.lower() in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name.lower()]()
    return KVStore(name)


def for_trainer(kvstore):
    """What ``gluon.Trainer`` keeps for its ``kvstore=`` argument: a store (ours or a registered one), or None
    for None."""
    if kvstore is None or isinstance(kvstore, KVStoreBase):
        return kvstore
    return create(kvstore)
