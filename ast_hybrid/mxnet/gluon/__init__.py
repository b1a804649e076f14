"""``mxnet.gluon``: ast-hybrid's Gluon (``ast_hybrid.gluon``) under MXNet's module paths.

``nn``, ``rnn``, ``loss``, ``contrib``, ``block``, ``parameter``, ``trainer``, ``data`` and the classes are
``ast_hybrid.gluon``'s own module objects and classes; ``utils`` and ``model_zoo`` (with ``model_store``)
are this package's, and so is ``data.vision.ImageRecordDataset`` (put on ``data.vision`` here).
"""

from ast_hybrid.gluon import (Block, Constant, DeferredInitializationError, HybridBlock, Parameter,  # noqa: F401
                              ParameterDict, SymbolBlock, Trainer, block, contrib, data, loss, nn, parameter, rnn,
                              trainer)
from ast_hybrid.gluon.contrib import cnn as _contrib_cnn
from ast_hybrid.gluon.contrib import nn as _contrib_nn
from ast_hybrid.gluon.contrib import rnn as _contrib_rnn
from ast_hybrid.mxnet._missing import module_getattr, serve
from ast_hybrid.mxnet.gluon import model_zoo, utils  # noqa: F401
from ast_hybrid.mxnet.gluon._vision import ImageRecordDataset
from ast_hybrid.mxnet.symbol import Symbol as _Symbol
from ast_hybrid.core.ndarray import NDArray as _NDArray

tensor_types = (_Symbol, _NDArray)

serve(__name__, {name: (module, f"mxnet.gluon.{name}") for name, module in (
    ("nn", nn), ("rnn", rnn), ("loss", loss), ("contrib", contrib), ("block", block), ("parameter", parameter),
    ("trainer", trainer), ("data", data))})
# MXNet's transforms that are not here (the generated _api lists no names for this module)
_transforms = data.vision.transforms
_transforms.__getattr__ = module_getattr("mxnet.gluon.data.vision.transforms", _transforms.__name__, {
    name: "the rotations and CropResize are not implemented yet" for name in ("Rotate", "RandomRotation",
                                                                             "CropResize")})
# MXNet's ImageRecordDataset decodes through mxnet.recordio/mxnet.image, which live in this package: it is put
# where MXNet has it
data.vision.ImageRecordDataset = data.vision.datasets.ImageRecordDataset = ImageRecordDataset
serve(f"{__name__}.data", {name: (getattr(data, name), f"mxnet.gluon.data.{name}")
                           for name in ("dataset", "sampler", "dataloader", "vision")})
serve(f"{__name__}.data.vision", {name: (getattr(data.vision, name), f"mxnet.gluon.data.vision.{name}")
                                  for name in ("datasets", "transforms")})
serve(f"{__name__}.contrib", {"cnn": (_contrib_cnn, "mxnet.gluon.contrib.cnn"),
                              "nn": (_contrib_nn, "mxnet.gluon.contrib.nn"),
                              "rnn": (_contrib_rnn, "mxnet.gluon.contrib.rnn")})

__getattr__ = module_getattr("mxnet.gluon", __name__)
