"""``mxnet.kvstore``/``mxnet.kv``: not here.  ast-hybrid runs on one device; ``gluon.Trainer`` accepts and
ignores its ``kvstore=`` argument, and ``mx.kv.create(...)`` is an error naming the API."""

from ast_hybrid.mxnet._missing import module_getattr

_WHY = "ast-hybrid trains on one device without a key-value store; gluon.Trainer ignores kvstore="

__getattr__ = module_getattr("mxnet.kvstore", __name__, {"create": _WHY, "KVStore": _WHY})
