"""Vision models mirroring ``mxnet.gluon.model_zoo.vision`` (MXNet 1.9.1): each family in its module, with
MXNet's structure, block prefixes and parameter names (MXNet's saved ``.params`` files load unchanged), and
``get_model(name, **kwargs)`` over MXNet's table of names."""

from ast_hybrid.gluon.model_zoo.vision import resnet
from ast_hybrid.gluon.model_zoo.vision.resnet import *  # noqa: F401,F403

# MXNet 1.9.1's get_model table: name -> constructor
_models = {
    "resnet18_v1": resnet.resnet18_v1, "resnet34_v1": resnet.resnet34_v1, "resnet50_v1": resnet.resnet50_v1,
    "resnet101_v1": resnet.resnet101_v1, "resnet152_v1": resnet.resnet152_v1,
    "resnet18_v2": resnet.resnet18_v2, "resnet34_v2": resnet.resnet34_v2, "resnet50_v2": resnet.resnet50_v2,
    "resnet101_v2": resnet.resnet101_v2, "resnet152_v2": resnet.resnet152_v2,
}


def get_model(name, **kwargs):
    """The model ``name`` (case-insensitive), built with ``kwargs`` (``classes``, ``pretrained``, ``ctx``,
    ``root``...); an unknown name is MXNet's ``ValueError`` listing the names."""
    name = name.lower()
    if name not in _models:
        raise ValueError("Model %s is not supported. Available options are\n\t%s"
                         % (name, "\n\t".join(sorted(_models))))
    return _models[name](**kwargs)
