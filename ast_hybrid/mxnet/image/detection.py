"""``mxnet.image.detection``: MXNet's detection iterator and augmenters (names only).

The implementation is ``ast_hybrid.image.detection`` (a room of its own); this door makes ``mxnet.image.detection`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.image import detection as _implementation

_missing.door(__name__, _implementation, "mxnet.image.detection")
