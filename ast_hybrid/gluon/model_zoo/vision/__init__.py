"""Vision models mirroring ``mxnet.gluon.model_zoo.vision`` (MXNet 1.9.1): each family in its module, with
MXNet's structure, block prefixes and parameter names (MXNet's saved ``.params`` files load unchanged), and
``get_model(name, **kwargs)`` over MXNet's table of names."""

from ast_hybrid.gluon.model_zoo.vision import alexnet, densenet, inception, mobilenet, resnet, squeezenet, vgg
from ast_hybrid.gluon.model_zoo.vision.alexnet import *  # noqa: F401,F403
from ast_hybrid.gluon.model_zoo.vision.densenet import *  # noqa: F401,F403
from ast_hybrid.gluon.model_zoo.vision.inception import *  # noqa: F401,F403
from ast_hybrid.gluon.model_zoo.vision.mobilenet import *  # noqa: F401,F403
from ast_hybrid.gluon.model_zoo.vision.resnet import *  # noqa: F401,F403
from ast_hybrid.gluon.model_zoo.vision.squeezenet import *  # noqa: F401,F403
from ast_hybrid.gluon.model_zoo.vision.vgg import *  # noqa: F401,F403

# MXNet 1.9.1's get_model table: name -> constructor
_models = {
    "resnet18_v1": resnet.resnet18_v1, "resnet34_v1": resnet.resnet34_v1, "resnet50_v1": resnet.resnet50_v1,
    "resnet101_v1": resnet.resnet101_v1, "resnet152_v1": resnet.resnet152_v1,
    "resnet18_v2": resnet.resnet18_v2, "resnet34_v2": resnet.resnet34_v2, "resnet50_v2": resnet.resnet50_v2,
    "resnet101_v2": resnet.resnet101_v2, "resnet152_v2": resnet.resnet152_v2,
    "vgg11": vgg.vgg11, "vgg13": vgg.vgg13, "vgg16": vgg.vgg16, "vgg19": vgg.vgg19,
    "vgg11_bn": vgg.vgg11_bn, "vgg13_bn": vgg.vgg13_bn, "vgg16_bn": vgg.vgg16_bn, "vgg19_bn": vgg.vgg19_bn,
    "alexnet": alexnet,   # the function: as in MXNet, the star import rebinds the submodule's name
    "densenet121": densenet.densenet121, "densenet161": densenet.densenet161,
    "densenet169": densenet.densenet169, "densenet201": densenet.densenet201,
    "squeezenet1.0": squeezenet.squeezenet1_0, "squeezenet1.1": squeezenet.squeezenet1_1,
    "inceptionv3": inception.inception_v3,
    "mobilenet1.0": mobilenet.mobilenet1_0, "mobilenet0.75": mobilenet.mobilenet0_75,
    "mobilenet0.5": mobilenet.mobilenet0_5, "mobilenet0.25": mobilenet.mobilenet0_25,
    "mobilenetv2_1.0": mobilenet.mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet.mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet.mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet.mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """The model ``name`` (case-insensitive), built with ``kwargs`` (``classes``, ``pretrained``, ``ctx``,
    ``root``...); an unknown name is MXNet's ``ValueError`` listing the names."""
    name = name.lower()
    if name not in _models:
        raise ValueError("Model %s is not supported. Available options are\n\t%s"
                         % (name, "\n\t".join(sorted(_models))))
    return _models[name](**kwargs)
