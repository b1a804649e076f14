"""``mxnet.optimizer``: MXNet's optimizer objects (``SGD``, ``NAG``, ``Adam``, ``RMSProp``, ``AdaGrad``, ``create``, ``register``).

The implementation is ``ast_hybrid.optimizer.optimizer`` (a room of its own); this door makes ``mxnet.optimizer`` that module itself, with
the error naming MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.optimizer import optimizer as _implementation

_missing.door(__name__, _implementation, "mxnet.optimizer")
