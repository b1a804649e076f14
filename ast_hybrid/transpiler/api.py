"""The transpiler's public API: ``convert``, ``jit``, ``to_source``, ``do_not_convert``.

``convert(fn)`` returns a function with ``fn``'s signature whose Python
``if``/``for``/``while``/``break``/``continue``/``return`` decide *at run time*
whether their condition is a Python value (plain Python, exactly as written)
or a traced array (``lax.cond``, ``while_loop``, ``fori_loop``, ``scan``).
``jit(fn, **jax_jit_options)`` is ``jax.jit(convert(fn), ...)``, also usable
as a decorator.  ``to_source(fn)`` shows the generated code.

    >>> import jax.numpy as jnp
    >>> from ast_hybrid.cli.demo import newton_sqrt      # `while abs(g * g - a) > 1e-4: ...`
    >>> round(float(jit(newton_sqrt)(jnp.float32(2.0))), 4)
    1.4142
    >>> "ah__.while_stmt(" in to_source(newton_sqrt)
    True

Conversion is cached per code object (the generated code) and per function
object and options (the converted function), so a second ``convert`` or a
second call neither re-parses nor re-converts, and a call of a ``jit`` result
is a call of ``jax.jit``'s own function.
"""

from __future__ import annotations

import functools
import types
import weakref

from .converter import cannot_convert, convert_function, converted_code
from ast_hybrid.common.diagnostics import ConversionError

__all__ = ["convert", "jit", "to_source", "do_not_convert"]

_BY_FUNCTION: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _options(max_iterations):
    if max_iterations is not None and (not isinstance(max_iterations, int) or max_iterations < 1):
        raise ValueError(f"max_iterations must be a positive int, not {max_iterations!r}")
    return {} if max_iterations is None else {"max_iterations": max_iterations}


def convert(fn=None, *, max_iterations=None):
    """``fn`` with its Python control flow converted (see the module docstring).

    ``max_iterations=N`` turns a traced ``while`` (and a traced ``range`` loop
    that may ``break``) into a ``scan`` of N steps: reverse-differentiable, exact
    while the loop ends within N iterations.  Usable as ``@convert`` or
    ``@convert(max_iterations=N)``.  Raises :class:`~ast_hybrid.ConversionError`
    (``.diagnostics``) when ``fn`` cannot be converted.
    """
    options = _options(max_iterations)
    if fn is None:
        return functools.partial(_convert, options=options)
    return _convert(fn, options)


def jit(fn=None, *, max_iterations=None, **jit_options):
    """``jax.jit(convert(fn, max_iterations=...), **jit_options)``; also ``@jit`` and ``@jit(...)``."""
    if fn is None:
        return functools.partial(jit, max_iterations=max_iterations, **jit_options)
    import jax

    return jax.jit(convert(fn, max_iterations=max_iterations), **jit_options)


def to_source(fn) -> str:
    """The Python source the transpiler generated for ``fn`` (a function or method)."""
    target = _target(fn)
    if not isinstance(target, types.FunctionType):
        raise cannot_convert(fn, "not-a-function")
    return converted_code(target.__code__).to_source()


def do_not_convert(fn):
    """Mark ``fn`` (a function or method) to be called as it is, never converted."""
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    target.__ah_do_not_convert__ = True
    return fn


def _target(fn):
    if isinstance(fn, types.MethodType):
        return fn.__func__
    if isinstance(fn, (staticmethod, classmethod)):
        return fn.__func__
    return fn


def _convert(fn, options):
    if getattr(fn, "__ah_converted__", False) or getattr(fn, "__ah_do_not_convert__", False):
        return fn
    if isinstance(fn, types.MethodType):
        return types.MethodType(_convert(fn.__func__, options), fn.__self__)
    if isinstance(fn, functools.partial):
        return functools.partial(_convert(fn.func, options), *fn.args, **fn.keywords)
    if isinstance(fn, staticmethod):
        return staticmethod(_convert(fn.__func__, options))
    if isinstance(fn, classmethod):
        return classmethod(_convert(fn.__func__, options))
    if not isinstance(fn, types.FunctionType):
        if isinstance(fn, type):
            raise cannot_convert(fn, "class")
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType):
            return types.MethodType(_convert(call, options), fn)
        raise cannot_convert(fn, "callable", type=type(fn).__name__)
    per = _BY_FUNCTION.get(fn)
    if per is None:
        per = _BY_FUNCTION[fn] = {}
    key = tuple(sorted(options.items()))
    got = per.get(key)
    if got is None:
        got = per[key] = convert_function(fn, options, _convert_callee)
    return got


def _convert_callee(fn, options):
    """Recursive conversion from ``converted_call``: what cannot be converted runs as it is."""
    try:
        return _convert(fn, options)
    except ConversionError as err:
        if all(d.code == "HY034" for d in err.diagnostics):
            return fn
        raise
