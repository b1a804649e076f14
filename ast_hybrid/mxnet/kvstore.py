"""``mxnet.kvstore``/``mxnet.kv``: ``create``, ``KVStore`` and ``KVStoreBase`` (``ast_hybrid.distributed``'s),
and MXNet's ``TestStore``.

``mx.kv.create('device')``/``'local'`` sum over one process's devices, ``'dist_sync'``/``'dist_device_sync'``
over the processes started by ``ast-hybrid launch`` (or joined by ``ast_hybrid.distributed.initialize()``);
``'dist_async'`` is an error saying why; a store registered with ``KVStoreBase.register`` is made by its
lower-cased class name, as MXNet's.  Names MXNet has and this module lacks are errors naming the API.
"""

from ast_hybrid.distributed import KVStore, KVStoreBase, create
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["KVStore", "KVStoreBase", "create"]     # (TestStore: mxnet.kvstore.base's, registered)


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's key-value store for testing (``mx.kv.create('teststore')``): one worker, ``broadcast`` copies,
    ``pushpull`` sums the values given; it takes no optimizer (``is_capable('optimizer')`` is False)."""

    def broadcast(self, key, value, out, priority=0):
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        if not isinstance(value, (list, tuple)):
            if out is not None:
                for o in out if isinstance(out, list) else [out]:
                    o[:] = value
            return
        ctx = value[0].context
        total = sum(v.as_in_context(ctx) for v in value)
        for o in (value if out is None else out if isinstance(out, list) else [out]):
            o[:] = total

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"Unknown capability: {capability}")

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1


__getattr__ = module_getattr("mxnet.kvstore", __name__)
