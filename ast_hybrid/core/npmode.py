"""MXNet 1.9's numpy semantics switches, per thread as in MXNet (``npx.set_np()``, ``@use_np``).

``MODE.array``: Gluon creates ``mx.np`` arrays (parameters, block outputs) instead of ``mx.nd`` NDArrays;
``MODE.shape``: numpy's shape semantics (``()`` a scalar's shape, zero-size dimensions).  MXNet keeps the
array switch in a ``threading.local`` (``util._NumpyArrayScope``) and the shape switch in a C++
``thread_local``: a thread that never called ``set_np`` runs the legacy semantics.
"""

from __future__ import annotations

import threading

__all__ = ["MODE", "NumpyMode"]


class NumpyMode(threading.local):
    """The two switches of the current thread (one instance, :data:`MODE`)."""

    def __init__(self):
        self.array = False
        self.shape = False


MODE = NumpyMode()
