"""``mxnet.lr_scheduler``: MXNet's learning-rate schedulers.

The implementation is ``ast_hybrid.optimizer.lr_scheduler`` (a room of its own); this door makes ``mxnet.lr_scheduler`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.optimizer import lr_scheduler as _implementation

_missing.door(__name__, _implementation, "mxnet.lr_scheduler")
