"""``mxnet.kvstore``/``mxnet.kv``: ``create`` and ``KVStore``, ``ast_hybrid.distributed``'s.

``mx.kv.create('device')``/``'local'`` sum over one process's devices, ``'dist_sync'``/``'dist_device_sync'``
over the processes started by ``ast-hybrid launch`` (or joined by ``ast_hybrid.distributed.initialize()``);
``'dist_async'`` is an error saying why.  Names MXNet has and this module lacks are errors naming the API.
"""

from ast_hybrid.distributed import KVStore, create
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["KVStore", "create"]

__getattr__ = module_getattr("mxnet.kvstore", __name__)
