"""Vision models mirroring ``mxnet.gluon.model_zoo.vision``."""

from ast_hybrid.gluon.model_zoo.vision.resnet import *  # noqa: F401,F403
