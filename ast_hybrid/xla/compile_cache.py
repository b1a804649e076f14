"""JAX's persistent compilation cache, on by default for hybridized blocks and under ``ast-hybrid run``.

The first call of a hybridized block traces its ``hybrid_forward`` and has XLA compile the program: seconds
for a ResNet-50.  JAX can keep compiled programs on disk, keyed by the program's HLO, the jax/XLA version,
the backend and the compile options, so that another process running the same block with the same shapes
loads the executable instead of compiling it.  ``HybridBlock`` calls :func:`ensure` when it builds its
program, and ``ast-hybrid run`` before the script starts (code run op by op compiles a program per op and
shape: GluonCV's ImageNet script op by op, 107 of them), which points JAX at :func:`cache_dir` unless the
user chose otherwise:

- ``AST_HYBRID_COMPILE_CACHE=0`` (or ``off``/``false``/``no``) in the environment, or
  ``compile_cache.configure(enabled=False)`` in Python, leaves JAX's cache as it is (off unless set);
- ``AST_HYBRID_COMPILE_CACHE_DIR=PATH`` or ``configure(directory=PATH)`` moves it;
- a directory the user gave JAX itself (``JAX_COMPILATION_CACHE_DIR``, ``jax.config.update(
  "jax_compilation_cache_dir", ...)``) is kept, as is a ``jax_persistent_cache_min_compile_time_secs`` of
  their own.

JAX's cache is process-wide: once a block is hybridized, any jitted program of the process that takes long
enough to compile is written there too.  Programs that compile in less than :data:`MIN_COMPILE_SECS` are not
written (JAX's default, 1 s, would leave out an MLP's or a small CNN's program whose compile still dominates
its first call, and every op's own program; below 0.02 s reading the entry saves little: that script's
second process took 8.4 s for its first epoch with 0.1 s, 5.4 s with 0.02 s or 0, MXNet 0.95 s).  The
directory is never pruned by us: delete it to reclaim the space (``jax_compilation_cache_max_size`` caps
it, with the ``filelock`` package installed).

:func:`bypassed` compiles without it (the program cache's programs: an executable JAX's cache loaded
serializes without its code on XLA:CPU).

May import: jax, the standard library, ``ast_hybrid.core.settings``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

from ast_hybrid.core import settings

ENV_SWITCH = "AST_HYBRID_COMPILE_CACHE"
ENV_DIR = "AST_HYBRID_COMPILE_CACHE_DIR"
MIN_COMPILE_SECS = 0.02

_settings: dict = {"enabled": None, "directory": None}   # None: from the environment
_applied: str | None = None    # the directory this module gave JAX, once it has


def cache_root() -> Path:
    """ast-hybrid's cache folder by the platform's convention: ``%LOCALAPPDATA%\\ast-hybrid\\Cache`` on
    Windows, ``~/Library/Caches/ast-hybrid`` on macOS, ``$XDG_CACHE_HOME/ast-hybrid`` (default
    ``~/.cache/ast-hybrid``) elsewhere."""
    if sys.platform == "win32":
        base = settings.environ("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
        return Path(base) / "ast-hybrid" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ast-hybrid"
    return Path(settings.environ("XDG_CACHE_HOME") or Path.home() / ".cache") / "ast-hybrid"


def enabled() -> bool:
    """Whether hybridized blocks turn the cache on: ``configure(enabled=...)``, else the environment."""
    if _settings["enabled"] is not None:
        return _settings["enabled"]
    return settings.get(ENV_SWITCH)


def cache_dir() -> Path:
    """Where compiled programs go: ``configure(directory=...)``, else ``$AST_HYBRID_COMPILE_CACHE_DIR``, else
    ``cache_root()/jax``."""
    chosen = _settings["directory"] or settings.get(ENV_DIR)
    return Path(chosen).expanduser() if chosen else cache_root() / "jax"


def configure(enabled: bool | None = None, directory: str | os.PathLike | None = None) -> None:
    """Turn the cache on or off (``None``: as the environment says) and choose its directory, for the blocks
    built from now on.  Turning it off after this module turned it on turns JAX's cache off again."""
    _settings["enabled"] = enabled
    _settings["directory"] = os.fspath(directory) if directory is not None else None
    if _applied is not None:
        _release()


def ensure() -> None:
    """Called when a hybridized block builds its program: point JAX's persistent cache at
    :func:`cache_dir`, once, unless turned off or the user configured JAX's cache themselves."""
    if _applied is not None or not enabled():
        return
    import jax

    if jax.config.jax_compilation_cache_dir:    # the user's own choice (JAX_COMPILATION_CACHE_DIR, ...)
        return
    _apply(jax, str(cache_dir()))


def _apply(jax, path: str) -> None:
    global _applied
    if settings.environ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS") is None and \
            jax.config.jax_persistent_cache_min_compile_time_secs == 1.0:     # JAX's default, untouched
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECS)
    jax.config.update("jax_compilation_cache_dir", path)
    _applied = path


def _release() -> None:
    global _applied
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    if jax.config.jax_compilation_cache_dir == _applied:
        jax.config.update("jax_compilation_cache_dir", None)
        compilation_cache.reset_cache()
    _applied = None


class _Bypass:
    """JAX's persistent cache skipped by every compile while one :func:`bypassed` context is open (in any
    thread).  JAX decides once per process whether its cache is used (``compilation_cache.is_cache_used``
    keeps the answer), so its ``enable_compilation_cache`` setting, read for that first decision only, cannot
    turn the cache off for one compile: the kept answer is set to "not used" while a context is open and
    put back when the last one closes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.open = 0
        self.saved = None

    def supported(self) -> bool:
        from jax._src import compilation_cache as cc

        return all(hasattr(cc, n) for n in ("_cache_checked", "_cache_used", "_cache_initialized_mutex"))

    @contextlib.contextmanager
    def __call__(self):
        from jax._src import compilation_cache as cc

        with self.lock:
            if self.open == 0:
                with cc._cache_initialized_mutex:
                    self.saved = (cc._cache_checked, cc._cache_used)
                    cc._cache_checked, cc._cache_used = True, False
            self.open += 1
        try:
            yield
        finally:
            with self.lock:
                self.open -= 1
                if self.open == 0:
                    with cc._cache_initialized_mutex:
                        cc._cache_checked, cc._cache_used = self.saved


_BYPASS = _Bypass()


def bypassed():
    """A context whose compiles (and every other thread's meanwhile) neither read nor write JAX's persistent
    cache; None where this jax keeps its decision elsewhere (then nothing is known to bypass it)."""
    return _BYPASS() if _BYPASS.supported() else None
