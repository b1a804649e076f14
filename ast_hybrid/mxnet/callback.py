"""``mxnet.callback``: MXNet's training callbacks (``Speedometer``, ``do_checkpoint``...); the implementation
is ``ast_hybrid.module.callback``."""

from ast_hybrid.module import callback as _implementation
from ast_hybrid.mxnet import _missing

_missing.door(__name__, _implementation, "mxnet.callback")
