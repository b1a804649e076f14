"""``mxnet.contrib.amp``: automatic mixed precision is not here.

As in MXNet 1.9.1 the package re-exports its ``amp`` module (``from .amp import *``): the functions exist,
so that code importing them runs, and each raises :class:`~ast_hybrid.mxnet._missing.NotSupported` naming
the API when called.  ``amp._amp_initialized`` is False, as in an MXNet where ``amp.init()`` was never
called (GluonNLP's attention cells read it on every forward).
"""

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.mxnet.contrib.amp import amp  # noqa: F401
from ast_hybrid.mxnet.contrib.amp.amp import *  # noqa: F401,F403

__getattr__ = module_getattr("mxnet.contrib.amp", __name__)
