"""``mxnet.context``: ``Context``, ``cpu``/``gpu``/``cpu_pinned``, ``current_context``, ``num_gpus``.

The ``Context`` class and its constructors are ``ast_hybrid.ndarray``'s own.
"""

from __future__ import annotations

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.core.context import Context, cpu, current_context, gpu

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]


def cpu_pinned(device_id=0):
    return Context("cpu_pinned", device_id)


def num_gpus():
    """How many GPUs jax sees (0 without a GPU backend)."""
    import jax

    try:
        return len(jax.devices("gpu"))
    except RuntimeError:
        return 0


__getattr__ = module_getattr("mxnet.context", __name__)
