"""``mxnet.image``: MXNet 1.9.1's image helpers on NDArrays (``image`` and ``detection``, re-exported here as in
MXNet).  The implementation is ``ast_hybrid.image`` (``image.py`` says what is implemented and how it compares
with MXNet's OpenCV)."""

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.mxnet.image import detection, image  # noqa: F401
from ast_hybrid.image.detection import *  # noqa: F401,F403
from ast_hybrid.image.image import *  # noqa: F401,F403
from ast_hybrid.image.image import Number  # noqa: F401  (MXNet's star import brings it)

det = detection

__getattr__ = module_getattr("mxnet.image", __name__)
