"""``mxnet.contrib.onnx``: the ONNX import (``import_model``, ``get_model_metadata``, ``import_to_gluon``) and the
older path of the export (``export_model``); each prints MXNet 1.9.1's notice of its deprecation, then works."""

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.onnx import export_model as _export_model
from ast_hybrid.onnx import importer as _importer

__all__ = ["export_model", "import_model", "get_model_metadata", "import_to_gluon"]

_IMPORT_NOTICE = ("Please be advised that importing ONNX models into MXNet is going to be deprecated in the upcoming "
                  "MXNet v1.10 release. The following apis will be deleted: "
                  "mxnet.contrib.onnx.import_model/get_model_metadata/import_to_gluon.")


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of an ONNX model file."""
    print("Calling mxnet.contrib.onnx.import_model...")
    print(_IMPORT_NOTICE)
    return _importer.import_model(model_file)


def get_model_metadata(model_file):
    """The names and shapes of an ONNX model's inputs and outputs."""
    print("Calling mxnet.contrib.onnx.get_model_metadata...")
    print(_IMPORT_NOTICE)
    return _importer.get_model_metadata(model_file)


def import_to_gluon(model_file, ctx):
    """An ONNX model as a ``gluon.SymbolBlock`` with its parameters loaded."""
    print("Calling mxnet.contrib.onnx.import_to_gluon...")
    print(_IMPORT_NOTICE)
    from ast_hybrid.gluon import SymbolBlock
    from ast_hybrid.symbol.graph import variable

    sym, arg_params, aux_params = _importer.import_model(model_file)
    names = [t[0] for t in _importer.get_model_metadata(model_file)["input_tensor_data"]]
    net = SymbolBlock(outputs=sym, inputs=[variable(n) for n in names])
    from ast_hybrid.gluon.parameter import assign_loaded

    loaded = {**arg_params, **aux_params}
    params = {k: p for k, p in net.collect_params().items() if k in loaded}
    assign_loaded(params, loaded, str(model_file), allow_missing=False, ignore_extra=True, dtype_source="saved")
    return net


def export_model(*args, **kwargs):
    print("Calling mxnet.contrib.onnx.export_model...")
    print("Please be advised that the ONNX module has been moved to mxnet.onnx and mxnet.onnx.export_model is the "
          "preferred path. The current path will be deprecated in the upcoming MXNet v1.10 release.")
    return _export_model(*args, **kwargs)


__getattr__ = module_getattr("mxnet.contrib.onnx", __name__)
