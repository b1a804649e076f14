"""What MXNet's Python custom operators (``ops/custom.py``) and ``autograd.Function`` (``ops/function.py``) share:
the pieces of the lowering that makes the user's forward and backward one ``jax.custom_vjp`` (how they run,
and how their errors read: ``ops/custom.py``'s docstring).

- the user's code called (:func:`call_user`): recording off, what fails a :class:`CustomError` at the user's
  line (:func:`definition_site`, :func:`return_site`, :func:`caller_site`), a traced value read on the host
  :class:`HostNeeded`;
- such code run on the host instead, through ``jax.pure_callback`` (:func:`host_call`), remembered per class
  and method (:data:`ON_HOST`) and warned about once per op (:func:`note_host`);
- the cotangents jax expects (:func:`cotangent`, :func:`zero_cotangent`), a recorded op-by-op call whose forward
  runs once (:func:`recorded_call`), and a call that gives the user's error back as it was raised
  (:func:`clean_call`).
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import textwrap
import warnings

import numpy as np

from ast_hybrid.core import autograd
from ast_hybrid.core.errors import CustomError, clean_error, hold

__all__ = ["ON_HOST", "HostNeeded", "definition_site", "method_name", "return_site", "call_user", "is_traced",
           "array_spec", "zero_cotangent", "cotangent", "host_call", "clean_call", "caller_site", "note_host",
           "recorded_call"]

_WARNED: set = set()     # op types already warned about leaving the compiled program
ON_HOST: dict = {}       # (class, method) -> True once its code was found to read values on the host
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # ast_hybrid/


class HostNeeded(Exception):
    """The user's code read a traced value on the host (internal: the caller switches to a host callback)."""


# --- where the user's code is --------------------------------------------------------------

def _code_of(fn):
    fn = getattr(fn, "__func__", fn)
    return getattr(inspect.unwrap(fn), "__code__", None)


def definition_site(fn):
    """``file:line`` of the definition of ``fn`` (a function or bound method)."""
    code = _code_of(fn)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"


def method_name(obj, method):
    return f"{type(obj).__name__}.{method}"


def return_site(fn):
    """``file:line`` of the one ``return`` statement of ``fn`` (outside functions nested in it), else of its
    definition.  Read from its source only when an error is reported."""
    code = _code_of(fn)
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return definition_site(fn)
    returns, todo = [], list(ast.iter_child_nodes(tree.body[0])) if tree.body else []
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            returns.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    if len(returns) != 1 or code is None:
        return definition_site(fn)
    return f"{code.co_filename}:{start + returns[0].lineno - 1}"


def _failing_site(exc, fn):
    """``file:line`` of the deepest frame of ``exc``'s traceback in ``fn``'s file, else ``fn``'s definition."""
    code = _code_of(fn)
    where, tb = None, exc.__traceback__
    while tb is not None:
        if code is not None and tb.tb_frame.f_code.co_filename == code.co_filename:
            where = f"{code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where or definition_site(fn)


def _host_read(exc):
    import jax

    return isinstance(exc, (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError))


def call_user(obj, method, *args, traced=False, context="", **kwargs):
    """``obj.method(*args, **kwargs)`` with recording off; what fails is a :class:`CustomError` at the user's
    line (``context``: what to add to the message).  On traced values, reading one on the host is
    :class:`HostNeeded`."""
    fn = getattr(obj, method)
    try:
        with autograd.mode_scope(False, None):
            return fn(*args, **kwargs)
    except (CustomError, HostNeeded):
        raise
    except Exception as exc:
        if traced and _host_read(exc):
            raise HostNeeded() from exc
        raise CustomError(f"{method_name(obj, method)} ({_failing_site(exc, fn)}) failed: {type(exc).__name__}: "
                          f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}{context}") from _no_jax(exc)


def _no_jax(exc):
    """``exc`` with its traceback cut after the last frame outside jax (the user's code, or ours, is where it
    went wrong; JAX's internals below that are noise)."""
    last, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").partition(".")[0] not in ("jax", "jaxlib"):
            last = tb
        tb = tb.tb_next
    if last is not None:
        last.tb_next = None
    return exc


def is_traced(arrays):
    import jax

    return any(isinstance(a, jax.core.Tracer) for a in arrays)


def array_spec(shape, dtype):
    import jax

    return jax.ShapeDtypeStruct(tuple(int(d) for d in shape), np.dtype(dtype))


def zero_cotangent(x):
    """The cotangent jax expects for an input that gets none: zeros, float0 for integers and booleans."""
    import jax
    import jax.numpy as jnp

    if np.dtype(x.dtype).kind in "iub":
        return np.zeros(np.shape(x), jax.dtypes.float0)
    return jnp.zeros(np.shape(x), x.dtype)


def cotangent(x, g):
    """``g`` as the cotangent of input ``x`` (float0 for integer inputs)."""
    import jax.numpy as jnp

    if np.dtype(x.dtype).kind in "iub":
        return zero_cotangent(x)
    return jnp.asarray(g, x.dtype).reshape(np.shape(x))


def host_call(fn, specs, *arrays):
    """``fn(*arrays)`` (jax arrays in, a flat list of arrays out) on the host through ``jax.pure_callback``."""
    import jax
    import jax.numpy as jnp

    def on_host(*values):
        try:
            out = fn(*[jnp.asarray(v) for v in values])
            return [np.asarray(o, s.dtype).reshape(s.shape) for o, s in zip(out, specs)]
        except Exception as exc:        # given back by clean_error where the program was called
            raise hold(exc) from None

    return jax.pure_callback(on_host, list(specs), *arrays)


def clean_call(fn, arrays):
    """``fn(*arrays)``; an error of the user's code comes out as it was raised (:func:`clean_error`)."""
    try:
        return fn(*arrays)
    except Exception as exc:
        err = clean_error(exc)
        if err is None:
            raise
        raise err from err.__cause__


def _user_frame():
    """The innermost frame outside ast-hybrid and jax (the user's call), and how many frames up it is."""
    frame, level = sys._getframe(2), 2
    while frame is not None and (os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE)
                                 or frame.f_globals.get("__name__", "").partition(".")[0] in ("jax", "jaxlib")):
        frame, level = frame.f_back, level + 1
    return frame, level


def caller_site():
    """``file:line`` of the user's call (the innermost frame outside ast-hybrid and jax)."""
    frame, _ = _user_frame()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


def note_host(key, who, what):
    """Warn (once per ``key``) that ``who``'s ``what`` leaves the compiled program; at the user's line."""
    if key not in _WARNED:
        _WARNED.add(key)
        frame, level = _user_frame()
        warnings.warn(f"{who}: {what} reads values on the host (asnumpy() or similar): it runs through "
                      "jax.pure_callback and leaves the compiled program (slower; no XLA fusion across it)",
                      stacklevel=level if frame is not None else 2)


def recorded_call(lowered):
    """``*NDArrays -> outputs`` for a recorded op-by-op call of ``lowered`` (a ``jax.custom_vjp``): the user's
    forward runs once, now, and the tape's node returns its outputs and residuals when ``backward()`` replays
    the graph under ``jax.vjp`` instead of running it again (MXNet calls forward once per call)."""
    import jax

    def call(*inputs):
        outs, res = lowered.fwd(*[x._arr for x in inputs])

        @jax.custom_vjp
        def replay(*arrays):
            return outs

        replay.defvjp(lambda *arrays: (outs, res), lowered.bwd)
        return autograd.record_op(replay, inputs, {}, result=outs)

    return call
