"""A bound on the compiled programs a process keeps in memory.

JAX keeps every program it compiles in its in-memory caches for the life of the process.  A hybridized
network compiles a few; code run op by op compiles one per operator, shape and dtype, so a process that meets
ever new shapes (MXNet's own ``test_ndarray``: 1,200 random-shape calls, 2.6 GB; an NLP loop over sentence
lengths) grows without bound, by about 0.7 MB per program here.  After ``AST_HYBRID_PROGRAM_LIMIT`` (default
1000) compilations :func:`install`'s listener empties JAX's caches (``jax.clear_caches``): the programs in use
compile again when next called (read back from the persistent compilation cache when it is on), and memory
stays bounded.  Measured (400 shapes x 3 dtypes x 4 operators, op by op): 3.5 GB at the end unbounded, 0.9 GB
with a limit of 500, the same time.  Hybridized blocks' predict programs compiled ahead of time
(``program_cache``) are held by their blocks, not by these caches, and are not dropped.
"""

from __future__ import annotations

import threading

from ast_hybrid.core import settings

__all__ = ["install", "COUNTER"]

ENV = "AST_HYBRID_PROGRAM_LIMIT"
_EVENT = "/jax/core/compile/backend_compile_duration"


class _Counter:
    """Compilations since JAX's caches were last emptied (one per process: the caches are the process's)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.count = 0
        self.installed = False
        self.cleared = 0

    def seen(self, limit: int) -> bool:
        with self.lock:
            self.count += 1
            if self.count < limit:
                return False
            self.count = 0
            self.cleared += 1
            return True


COUNTER = _Counter()


def _listener(name, duration, **kwargs):
    if name != _EVENT:
        return
    limit = settings.get(ENV)
    if limit and COUNTER.seen(limit):
        import jax

        jax.clear_caches()


def install() -> None:
    """Count XLA's compilations from now on (once per process)."""
    with COUNTER.lock:
        if COUNTER.installed:
            return
        COUNTER.installed = True
    from jax import monitoring

    monitoring.register_event_duration_secs_listener(_listener)
