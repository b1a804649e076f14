"""``mxnet.model``: MXNet's checkpoint files (``save_checkpoint``, ``load_checkpoint``, ``load_params``) and
``BatchEndParam``; the implementation is ``ast_hybrid.module.model``."""

from ast_hybrid.module import model as _implementation
from ast_hybrid.mxnet import _missing

_missing.door(__name__, _implementation, "mxnet.model")
