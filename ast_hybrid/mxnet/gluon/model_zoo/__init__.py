"""``mxnet.gluon.model_zoo``: ``vision`` is ``ast_hybrid.gluon.model_zoo.vision``; ``model_store`` says
clearly that pretrained weights are not downloaded."""

from ast_hybrid.gluon.model_zoo import vision
from ast_hybrid.mxnet._missing import module_getattr, serve
from ast_hybrid.mxnet.gluon.model_zoo import model_store  # noqa: F401

serve(__name__, {"vision": (vision, "mxnet.gluon.model_zoo.vision")})

__getattr__ = module_getattr("mxnet.gluon.model_zoo", __name__)
