"""``mxnet.ndarray.image``: MXNet 1.9.1's image operators (``mx.nd.image``), put on ``ast_hybrid.nd`` as ``image`` by the compatibility package.

The implementation is ``ast_hybrid.image.nd_image`` (a room of its own); this door makes ``mxnet.ndarray.image`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.image import nd_image as _implementation

_WHY = ("MXNet's random image operators are not implemented in ast-hybrid; gluon.data.vision.transforms' "
        "Random* blocks (RandomFlipLeftRight, RandomBrightness, RandomColorJitter, RandomLighting...) are")
_RANDOM = ("random_brightness", "random_color_jitter", "random_contrast", "random_flip_left_right",
           "random_flip_top_bottom", "random_hue", "random_lighting", "random_saturation")

_missing.door(__name__, _implementation, "mxnet.ndarray.image", {name: _WHY for name in _RANDOM})
