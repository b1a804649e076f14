"""``ast_hybrid.ndarray``: ``NDArray`` and ``Context``, as MXNet's ``mx.nd.NDArray`` and ``mx.Context``.

The array lives in ``ast_hybrid/core/ndarray.py`` (what it is) and ``ast_hybrid/ops/array_methods.py`` (its
operators and methods, installed by the operator package, which this module imports); the context in
``ast_hybrid/core/context.py``.  This module is the public name both had before the front was layered.
"""

from ast_hybrid import ops as _ops  # noqa: F401  (installs NDArray's operators and methods)
from ast_hybrid.core.context import Context, cpu, current_context, gpu
from ast_hybrid.core.ndarray import NDArray, _rebuild  # noqa: F401  (_rebuild: arrays pickled before the split)

__all__ = ["NDArray", "Context", "cpu", "gpu", "current_context"]
