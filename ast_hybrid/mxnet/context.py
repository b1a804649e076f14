"""``mxnet.context``: ``Context``, ``cpu``/``gpu``/``cpu_pinned``, ``current_context``, ``num_gpus``.

The ``Context`` class and its constructors are ``ast_hybrid.ndarray``'s own.
"""

from __future__ import annotations

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.core.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]


__getattr__ = module_getattr("mxnet.context", __name__)
