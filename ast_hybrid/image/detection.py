"""``mxnet.image.detection``: MXNet's detection data iterator and its augmenters are not implemented in
ast-hybrid.  The names exist (so that code importing or subclassing them loads); constructing one raises
``NotSupported`` naming the MXNet API.  GluonCV's own detection transforms (``gluoncv.data.transforms``) work."""

from ast_hybrid.core.errors import refusing_function, unsupported

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug",
           "DetRandomPadAug", "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]

_WHY = ("MXNet's detection iterator and augmenters are not implemented in ast-hybrid; GluonCV's transforms "
        "(gluoncv.data.transforms.presets) with gluon.data.DataLoader do the same work")


def _refusing(name):
    def __init__(self, *args, **kwargs):
        raise unsupported("mxnet.image", name, _WHY)

    return type(name, (), {"__init__": __init__, "__doc__": f"MXNet's ``image.{name}``: not supported here.",
                           "__module__": __name__})


def _refusing_function(name):
    return refusing_function("mxnet.image", name, _WHY)


DetAugmenter = _refusing("DetAugmenter")
DetBorrowAug = _refusing("DetBorrowAug")
DetRandomSelectAug = _refusing("DetRandomSelectAug")
DetHorizontalFlipAug = _refusing("DetHorizontalFlipAug")
DetRandomCropAug = _refusing("DetRandomCropAug")
DetRandomPadAug = _refusing("DetRandomPadAug")
ImageDetIter = _refusing("ImageDetIter")
CreateMultiRandCropAugmenter = _refusing_function("CreateMultiRandCropAugmenter")
CreateDetAugmenter = _refusing_function("CreateDetAugmenter")
