"""``mxnet.image.image``: MXNet 1.9.1's image helpers on NDArrays.

The implementation is ``ast_hybrid.image.image`` (a room of its own); this door makes ``mxnet.image.image`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.image import image as _implementation

_missing.door(__name__, _implementation, "mxnet.image.image")
