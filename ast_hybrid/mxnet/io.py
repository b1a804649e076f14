"""``mxnet.io``: not here yet; each name is an error naming the API."""

from ast_hybrid.mxnet._missing import module_getattr

__getattr__ = module_getattr("mxnet.io", __name__)
