"""``mxnet.module`` (``mx.mod``): MXNet's Module API.

The implementation is ``ast_hybrid.module.module`` (a room of its own); this door makes ``mxnet.module`` that module
itself, with the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.module import module as _implementation
from ast_hybrid.mxnet import _missing

_missing.door(__name__, _implementation, "mxnet.module")
