"""``mxnet.util``: MXNet 1.9's numpy-semantics switches (per thread, ``ast_hybrid.core.npmode``) and small
helpers.  ``set_np()``/``use_np``/``np_array(True)`` turn on ``mx.np`` arrays in Gluon (``ast_hybrid.mxnp``);
``is_np_array()``/``is_np_shape()`` answer for the current thread, as MXNet's do.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os

from ast_hybrid.core.npmode import MODE
from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.mxnp.extension import reset_np, set_np  # noqa: F401

__all__ = ["is_np_array", "is_np_shape", "set_np_shape", "set_np", "reset_np", "np_array", "np_shape",
           "use_np", "use_np_array", "use_np_shape", "getenv", "setenv", "makedirs", "get_gpu_count"]


def is_np_array():
    return MODE.array


def is_np_shape():
    return MODE.shape


def set_np_shape(active):
    """Numpy shape semantics on or off in this thread; the previous state."""
    if not active and MODE.array:
        raise ValueError("Deactivating NumPy shape semantics while NumPy array semantics is still active is not "
                         "allowed. Please consider calling `npx.reset_np()` to deactivate both of them.")
    prev, MODE.shape = MODE.shape, bool(active)
    return prev


def _scope(attr):
    @contextlib.contextmanager
    def scope(active=True):
        prev = getattr(MODE, attr)
        setattr(MODE, attr, bool(active))
        try:
            yield
        finally:
            setattr(MODE, attr, prev)

    scope.__name__ = scope.__qualname__ = "np_" + attr
    return scope


np_shape = _scope("shape")
np_array = _scope("array")


def _decorator(scope, name):
    """MXNet's ``use_np_*``: a function runs in the scope; a class has each method and property wrapped."""
    def decorate(func):
        if inspect.isclass(func):
            for attr, method in inspect.getmembers(
                    func, predicate=lambda f: inspect.isfunction(f) or inspect.ismethod(f) or isinstance(f, property)):
                if isinstance(method, property):
                    setattr(func, attr, property(decorate(method.__get__), method.__set__, method.__delattr__,
                                                 method.__doc__))
                else:
                    setattr(func, attr, decorate(method))
            return func
        if callable(func):
            @functools.wraps(func)
            def scoped(*args, **kwargs):
                with scope(True):
                    return func(*args, **kwargs)
            return scoped
        raise TypeError(f"{name} can only decorate classes and callable objects, while received a "
                        f"{type(func)}")

    decorate.__name__ = decorate.__qualname__ = name
    return decorate


use_np_shape = _decorator(np_shape, "use_np_shape")
use_np_array = _decorator(np_array, "use_np_array")


def use_np(func):
    """Numpy shape and array semantics around ``func`` (a function or a class)."""
    return use_np_shape(use_np_array(func))


def getenv(name):
    return os.environ.get(name)


def setenv(name, value):
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def makedirs(d):
    os.makedirs(os.path.expanduser(d), exist_ok=True)


def get_gpu_count():
    from ast_hybrid.mxnet.context import num_gpus

    return num_gpus()


__getattr__ = module_getattr("mxnet.util", __name__)
