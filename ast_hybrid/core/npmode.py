"""MXNet 1.9's numpy semantics switches, per thread as in MXNet (``npx.set_np()``, ``@use_np``).

``MODE.array``: Gluon creates ``mx.np`` arrays (parameters, block outputs) instead of ``mx.nd`` NDArrays;
``MODE.shape``: numpy's shape semantics (``()`` a scalar's shape, zero-size dimensions).  MXNet keeps the
array switch in a ``threading.local`` (``util._NumpyArrayScope``) and the shape switch in a C++
``thread_local``: a thread that never called ``set_np`` runs the legacy semantics.

:func:`mxnet_dtypes`: MXNet's 64-bit dtypes where a script asks for them (``ast-hybrid run`` calls it before
anything else is imported).
"""

from __future__ import annotations

import threading

__all__ = ["MODE", "NumpyMode", "mxnet_dtypes"]


class NumpyMode(threading.local):
    """The two switches of the current thread (one instance, :data:`MODE`)."""

    def __init__(self):
        self.array = False
        self.shape = False


MODE = NumpyMode()


def mxnet_dtypes() -> None:
    """MXNet's 64-bit dtypes where a script asks for them (``float64`` arrays, ``int64`` indices): jax's x64
    mode on, unless ``JAX_ENABLE_X64`` says otherwise.  Before anything makes an array; ast-hybrid's own
    arrays name their 32-bit dtypes, so float32 stays float32."""
    from ast_hybrid.core import settings

    if settings.environ("JAX_ENABLE_X64") is None:
        import jax

        jax.config.update("jax_enable_x64", True)
