"""``mxnet.io``: ``NDArrayIter``, ``DataIter``, ``DataBatch``, ``DataDesc``.

The implementation is ``ast_hybrid.io.iterators`` (a room of its own); this door makes ``mxnet.io`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.io import iterators as _implementation

_missing.door(__name__, _implementation, "mxnet.io")
