"""``mxnet.onnx``: MXNet 1.9.1's ONNX export, ``export_model`` and ``get_operator_support``
(``ast_hybrid.onnx``)."""

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.onnx import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]

__getattr__ = module_getattr("mxnet.onnx", __name__)
