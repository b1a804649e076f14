"""The PRNG behind ``nd.random.*``, Dropout and the initializers.

Eagerly, keys come from one global stream: a base key (set by ``seed(n)``,
else drawn from the OS at first use) folded with a counter, so each call gets
a fresh key.  Inside a hybridized program the stream is the program's own key
argument: ``key_scope(key)`` makes ``next_key()`` fold that (traced) key with a
counter local to the trace, so every compiled call gets fresh randomness and
nothing random is baked into the program as a constant.

``key_scope(None)`` marks a trace that has no key (a predict-mode program):
``next_key()`` then raises :class:`KeyNeeded`, and the block compiles a
predict program that takes a key.

    >>> seed(42); a = next_key(); seed(42); b = next_key()
    >>> bool((a == b).all())
    True
"""

from __future__ import annotations

import contextlib
import os
import threading

__all__ = ["seed", "next_key", "key_scope", "KeyNeeded", "stream", "host_generator"]

_NO_KEY = object()
# the eager stream: [base key or None, counter], one per process as MXNet's (``mx.random.seed`` seeds every
# thread's draws); the scopes ([key, counter] per open key_scope) belong to the trace, so to its thread
_GLOBAL = [None, 0]
_LOCAL = threading.local()


def _scopes():
    try:
        return _LOCAL.scopes
    except AttributeError:
        _LOCAL.scopes = []
        return _LOCAL.scopes


class KeyNeeded(RuntimeError):
    """A random op ran in a trace that has no key argument."""


def seed(seed_state, ctx="all"):
    """Seed the eager stream (``mx.random.seed``); ``ctx`` is accepted for MXNet compatibility."""
    import jax

    _GLOBAL[0] = jax.random.PRNGKey(int(seed_state))
    _GLOBAL[1] = 0


def _base():
    if _GLOBAL[0] is None:
        import jax

        _GLOBAL[0] = jax.random.PRNGKey(int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF)
    return _GLOBAL[0]


def stream():
    """``(base key, counter)`` of the eager stream, advancing it by one: a compiled program folds them in."""
    base = _base()
    _GLOBAL[1] += 1
    return base, _GLOBAL[1]


def host_generator():
    """A NumPy generator (Philox) keyed by the eager stream's base key and next counter: what the initializers
    draw from.  Nothing is compiled (a ``jax.random`` draw is one XLA program per shape: 121 of them, 15 s,
    for densenet121's weights), and ``seed(n)`` makes the draws reproducible as it does the keys."""
    import numpy as np

    base, count = stream()
    words = np.asarray(_key_words(base), dtype=np.uint64).ravel()
    return np.random.Generator(np.random.Philox(key=np.array([(int(words[0]) << 32) | int(words[-1]), count],
                                                             dtype=np.uint64)))


def _key_words(key):
    import jax

    return jax.random.key_data(key) if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key


def next_key():
    """A fresh key: from the innermost ``key_scope``, else from the eager stream."""
    import jax

    scopes = _scopes()
    if scopes:
        scope = scopes[-1]
        if scope[0] is _NO_KEY:
            raise KeyNeeded("a random op ran in a program compiled without a key")
        scope[1] += 1
        return jax.random.fold_in(scope[0], scope[1])
    base, count = stream()
    return jax.random.fold_in(base, count)


@contextlib.contextmanager
def key_scope(key):
    """Draw ``next_key()`` from ``key`` (a concrete or traced key) inside; ``None``: no key available."""
    scopes = _scopes()
    scopes.append([_NO_KEY if key is None else key, 0])
    try:
        yield
    finally:
        scopes.pop()
