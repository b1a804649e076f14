"""The errors the front raises on purpose, and the one place that takes them back out of JAX.

- :class:`MXNetError`: MXNet's ``mxnet.base.MXNetError`` (what its C++ core raised); the errors of ours that
  stand where MXNet's core raised (an op given what it cannot take, a file that is not MXNet's) are
  ``MXNetError`` and ``ValueError`` both, so MXNet-era ``except MXNetError`` and Python's ``except ValueError``
  each catch them;
- :class:`CustomError`: a custom operator or ``autograd.Function`` (the user's Python code run inside our ops)
  failed or broke its protocol;
- :class:`NotAvailable` / :class:`ModuleNotAvailable` / :class:`NotSupported`: MXNet 1.9.1 has the API and
  ast-hybrid does not (``ast_hybrid.mxnet._missing`` answers a missing name with them; :func:`unsupported` is
  for a name kept only so that code mentioning it imports);
- :func:`hold` / :func:`clean_error`: an error raised where JAX runs the user's code (a host callback inside a
  compiled program, a backward under ``jax.vjp``) comes out of JAX wrapped (a ``JaxRuntimeError`` holding its
  text, JAX's stack-trace cause); the places where ast-hybrid runs compiled programs for the user (a
  hybridized block's call, ``backward()``) give it back as it was raised.

May import: the standard library.  Nothing of ast_hybrid (this is the bottom of the front).
"""

from __future__ import annotations

import itertools
import logging
import re
import threading

__all__ = ["MXNetError", "CustomError", "DeferredInitializationError", "NotAvailable", "ModuleNotAvailable",
           "NotSupported", "unsupported", "api_message",
           "hold", "clean_error", "SPELLING"]


class MXNetError(RuntimeError):
    """Error raised by MXNet's engine (MXNet 1.9.1: ``mxnet.base.MXNetError``)."""


class MXNetTypeError(MXNetError, TypeError):
    """An operator's TypeError (JAX's, on shapes or dtypes) as MXNet raises it: an MXNetError, and a TypeError."""


class MXNetValueError(MXNetError, ValueError):
    """An operator's ValueError as MXNet raises it: an MXNetError, and a ValueError."""


class MXNetIndexError(MXNetError, IndexError):
    """An index out of bounds, as MXNet raises it (``mxnet.error.IndexError``): an MXNetError, and an IndexError."""


def as_mxnet_error(exc):
    """``exc`` (a plain TypeError or ValueError from JAX inside an operator) as MXNet's error for it, or None
    for any other error (JAX's own error classes, tracer errors among them, stay what they are)."""
    kind = {TypeError: MXNetTypeError, ValueError: MXNetValueError}.get(type(exc))
    return None if kind is None else kind(str(exc))


class CustomError(RuntimeError):
    """A custom operator or ``autograd.Function`` failed or broke its protocol; the message names the class,
    the method and the user's line."""


class DeferredInitializationError(RuntimeError):
    """The parameter's shape is not known yet; its block must see an input first (MXNet's
    ``gluon.parameter.DeferredInitializationError``)."""


# --- MXNet API that is not here ----------------------------------------------------------------------

class NotAvailable(AttributeError):
    """``mxnet.X.Y`` exists in MXNet 1.9.1 but not in ast-hybrid."""


class ModuleNotAvailable(ImportError):
    """The MXNet 1.9.1 module ``mxnet.X`` has no counterpart in ast-hybrid."""


class NameNotAvailable(ImportError):
    """``from mxnet.X import Y``: ``Y`` exists in MXNet 1.9.1's ``mxnet.X`` but not in ast-hybrid (an ImportError,
    so that ``except ImportError`` around an optional import keeps working)."""


class NotSupported(NotImplementedError):
    """``mxnet.X.Y`` is here as a name (so that code defining or importing it runs) but cannot be called."""


# MXNet's short names for its modules, as users write them
SPELLING = {"mxnet.ndarray": "mxnet.nd", "mxnet.symbol": "mxnet.sym", "mxnet.initializer": "mxnet.init",
            "mxnet.kvstore": "mxnet.kv"}
_WHY = ("ast-hybrid runs MXNet 1.9.1's Gluon API on JAX and has not implemented this; "
        "see docs/mxnet.md in ast-hybrid's repository for what is there and what is missing")


def api_message(api: str, why: str | None) -> str:
    return f"{api} is not available in ast-hybrid: {why or _WHY}"


def unsupported(module_path: str, name: str, why: str) -> NotSupported:
    """The error for calling ``module_path.name``, a name kept only so that code mentioning it imports."""
    return NotSupported(api_message(f"{SPELLING.get(module_path, module_path)}.{name}", why))


def refusing_function(module_path: str, name: str, why: str, doc: str | None = None):
    """A function named ``name`` that raises :func:`unsupported` when called: MXNet's ``module_path.name`` kept
    as a name, so that code importing it imports."""
    def call(*args, **kwargs):
        raise unsupported(module_path, name, why)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return call


# --- errors from inside JAX --------------------------------------------------------------------------

_LOCK = threading.Lock()
_FAILED: dict = {}           # token -> the error a host callback raised, until clean_error takes it back
_TOKENS = itertools.count()
_TOKEN = re.compile(r"\[ast-hybrid host error (\d+)\]")


class HostFailed(Exception):
    """Raised out of a host callback in place of the user's error, which waits under the token in this message
    (JAX turns what a callback raises into a JaxRuntimeError holding its text)."""


class _QuietHostFailures(logging.Filter):
    """JAX logs the traceback of an exception raised in a callback: not ours (clean_error reports it)."""

    def filter(self, record):
        return not (record.exc_info and isinstance(record.exc_info[1], HostFailed))


logging.getLogger("jax._src.callback").addFilter(_QuietHostFailures())


def hold(exc: BaseException) -> HostFailed:
    """Keep ``exc`` (raised by the user's code in a host callback) for :func:`clean_error`; what to raise out of
    the callback instead."""
    with _LOCK:
        token = next(_TOKENS)
        if len(_FAILED) > 16:       # errors nobody took back (a program the user ran through jax directly)
            _FAILED.clear()
        _FAILED[token] = exc
    return HostFailed(f"[ast-hybrid host error {token}] {type(exc).__name__}: {exc}")


def clean_error(exc):
    """The error to raise in place of ``exc``, caught where ast-hybrid ran a compiled program or a backward pass
    for the user; None to let ``exc`` go as it is.

    An error from a host callback that failed (JAX's JaxRuntimeError, or a ValueError from its C++ dispatch
    of a compiled call, holding the callback's text) gives back the error the user's code (or our check of
    it) raised there; a :class:`CustomError` that went through a JAX transformation loses what JAX added (its
    stack-trace cause, which took the place of our own cause, and its note about filtered frames).  Raise the
    result as ``raise err from err.__cause__`` (``from None`` when it has no cause of its own)."""
    err = None
    if isinstance(exc, CustomError):
        err = exc
    elif _FAILED:       # JaxRuntimeError; a ValueError from jax's C++ dispatch of a compiled call
        with _LOCK:
            for token in _TOKEN.findall(str(exc)):
                err = _FAILED.pop(int(token), None) or err
    if err is None:
        return None
    cause = err.__cause__
    if type(cause).__name__ == "JaxStackTraceBeforeTransformation":
        cause = cause.__cause__
    err.__cause__, err.__context__, err.__suppress_context__ = cause, None, True
    if getattr(err, "__notes__", None):
        err.__notes__ = [n for n in err.__notes__ if "JAX has removed its internal frames" not in n]
    return err.with_traceback(None)
