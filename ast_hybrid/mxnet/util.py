"""``mxnet.util``: the switches of MXNet 2's numpy mode, always off here, and small helpers.

ast-hybrid runs MXNet 1.x's NDArray semantics only: ``is_np_array()``/``is_np_shape()`` are False (so
MXNet-era code takes its ``nd`` branches), turning them off is a no-op, and turning numpy mode *on*
(``set_np``, ``use_np``, ``np_array(True)``...) is an error naming the API.
"""

from __future__ import annotations

import contextlib
import os

from ast_hybrid.mxnet._missing import module_getattr, unsupported

__all__ = ["is_np_array", "is_np_shape", "set_np_shape", "set_np", "reset_np", "np_array", "np_shape",
           "use_np", "use_np_array", "use_np_shape", "getenv", "setenv", "makedirs", "get_gpu_count"]

_NUMPY_MODE = "MXNet 2's numpy mode (mx.np arrays, numpy shape semantics) is not part of ast-hybrid, " \
              "which runs MXNet 1.x's NDArray API"


def is_np_array():
    return False


def is_np_shape():
    return False


def _refuse(name):
    return unsupported("mxnet.util", name, _NUMPY_MODE)


def set_np_shape(active):
    if active:
        raise _refuse("set_np_shape")
    return False


def set_np(shape=True, array=True, dtype=False):
    if shape or array or dtype:
        raise _refuse("set_np")


def reset_np():
    """Numpy mode is already off."""


@contextlib.contextmanager
def np_shape(active=True):
    if active:
        raise _refuse("np_shape")
    yield


@contextlib.contextmanager
def np_array(active=True):
    if active:
        raise _refuse("np_array")
    yield


def _decorator(name):
    def decorate(func):
        raise _refuse(name)

    decorate.__name__ = decorate.__qualname__ = name
    return decorate


use_np = _decorator("use_np")
use_np_array = _decorator("use_np_array")
use_np_shape = _decorator("use_np_shape")


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
