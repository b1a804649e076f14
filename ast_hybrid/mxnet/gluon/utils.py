"""``mxnet.gluon.utils``: ``split_data``, ``split_and_load``, ``clip_global_norm``, ``check_sha1``, ``download``...

The implementation is ``ast_hybrid.gluon.utils``; this door makes ``mxnet.gluon.utils`` that module itself, with the error naming
MXNet 1.9.1's API for a name it lacks.
"""

from ast_hybrid.mxnet import _missing
from ast_hybrid.gluon import utils as _implementation

_missing.door(__name__, _implementation, "mxnet.gluon.utils")
