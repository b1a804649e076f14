"""What an array handed out as a view of someone's memory writes into (``NDArray._base = (storage, None)``):
a parameter's data (``p.data()``), a leaf's gradient (``x.grad``, ``p.grad()``).  A write into such an array
(``ops.array_methods.write_through``) sets ``storage._arr``, as MXNet's arrays there are that memory
(``p.data()[:] -= lr * p.grad()``; d2l's ``grad_clipping``: ``param.grad[:] *= theta / norm``).

May import: the standard library.
"""

from __future__ import annotations

__all__ = ["Storage", "grad_storage"]


class Storage:
    """The memory behind a view: ``_arr`` reads with ``read()`` and writes with ``write(value)``."""

    __slots__ = ("_read", "_write")
    _base = None

    def __init__(self, read, write):
        self._read, self._write = read, write

    @property
    def _arr(self):
        return self._read()

    @_arr.setter
    def _arr(self, value):
        self._write(value)


def grad_storage(leaf):
    """A leaf's gradient as a :class:`Storage`."""
    return Storage(lambda: leaf.grad, lambda value: setattr(leaf, "grad", value))
