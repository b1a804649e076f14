"""``mxnet.gluon.model_zoo.model_store``: where MXNet keeps pretrained weights; ast-hybrid downloads none.

The implementation is ``ast_hybrid.gluon.model_zoo.model_store``; this door makes ``mxnet.gluon.model_zoo.model_store`` that module itself, with the error naming
MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.gluon.model_zoo import model_store as _implementation

_missing.door(__name__, _implementation, "mxnet.gluon.model_zoo.model_store")
