"""``mxnet.contrib.onnx``: the older path of the ONNX export (``export_model``, which in MXNet 1.9.1 prints that
``mxnet.onnx.export_model`` is preferred, then exports)."""

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.onnx import export_model as _export_model

__all__ = ["export_model"]


def export_model(*args, **kwargs):
    print("Calling mxnet.contrib.onnx.export_model...")
    print("Please be advised that the ONNX module has been moved to mxnet.onnx and mxnet.onnx.export_model is the "
          "preferred path. The current path will be deprecated in the upcoming MXNet v1.10 release.")
    return _export_model(*args, **kwargs)


__getattr__ = module_getattr("mxnet.contrib.onnx", __name__)
