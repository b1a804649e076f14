"""What an array handed out as a view of someone's memory writes into (``NDArray._base = (storage, None)``):
a leaf's gradient (``x.grad``, ``p.grad()``).  A write into such an array (``ops.array_methods.write_through``)
sets ``storage._arr``.

May import: the standard library.
"""

from __future__ import annotations

__all__ = ["GradStorage"]


class GradStorage:
    """A leaf's gradient as the array ``x.grad`` (``p.grad()``) is a view of (``NDArray._base``): a write into
    that array (d2l's ``grad_clipping``: ``param.grad[:] *= theta / norm``; ``p.grad()[:] = 0``) sets the
    gradient, as MXNet's gradient array is the gradient's memory."""

    __slots__ = ("_leaf",)
    _base = None

    def __init__(self, leaf):
        self._leaf = leaf

    @property
    def _arr(self):
        return self._leaf.grad

    @_arr.setter
    def _arr(self, value):
        self._leaf.grad = value
