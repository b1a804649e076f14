"""What this thread is running of the front: the hybridized traces and the non-hybridized forwards in progress.

Gluon pushes an entry while a hybridized block is traced (``gluon.programs.Trace``: the parameters bound to
tracers, the writes made to them) or while a block's ``hybrid_forward`` runs op by op (the parameters' arrays
given to it, and the parameters); an op that writes an input in place (a custom op's aux state) looks here
for the parameter behind it, and a block called inside a trace joins the trace.  Per thread: a block traced
in one thread does not make another thread's calls "inside a trace".

May import: the standard library.
"""

from __future__ import annotations

import threading

__all__ = ["FRAMES"]


class _Frames(threading.local):
    """``traces``: the hybridized traces in progress (innermost last); ``imperative``: the non-hybridized
    forwards running (innermost last): (the parameters' arrays given to ``hybrid_forward``, the block's
    parameters), or None for a run whose writes must not land (the shape inference before a first compile);
    ``whole``: how many hybridized plain Blocks are being called (``gluon/whole.py``: an in-place write into
    a traced array there is refused, and the block runs op by op)."""

    def __init__(self):
        self.traces = []
        self.imperative = []
        self.whole = 0


FRAMES = _Frames()
