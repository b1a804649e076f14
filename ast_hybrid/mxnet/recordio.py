"""``mxnet.recordio``: MXNet's RecordIO files (``MXRecordIO``, ``MXIndexedRecordIO``, ``pack``/``unpack``...).

The implementation is ``ast_hybrid.io.recordio`` (a room of its own); this door makes ``mxnet.recordio`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.io import recordio as _implementation

_missing.door(__name__, _implementation, "mxnet.recordio")
