"""``mxnet.contrib``: ``amp`` (an error naming each API), ``onnx`` (the export); MXNet's other contrib modules
(quantization, text, svrg_optimization, tensorboard...) are not here.  The contrib *operators* are ``mx.nd.contrib``."""

from ast_hybrid import nd as _nd
from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.mxnet.contrib import amp, onnx  # noqa: F401

ndarray = nd = _nd.contrib

__getattr__ = module_getattr("mxnet.contrib", __name__)
