"""``mxnet.metric``: MXNet's evaluation metrics (``create``, ``Accuracy``, ``TopKAccuracy``, ``F1``, ``MAE``, ...).

The implementation is ``ast_hybrid.metric.metrics`` (a room of its own); this door makes ``mxnet.metric`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.metric import metrics as _implementation

_missing.door(__name__, _implementation, "mxnet.metric")
