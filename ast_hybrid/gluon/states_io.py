"""Read a ``.states`` file for ``gluon.Trainer.load_states``: ours, or one MXNet 1.9.1 wrote.

MXNet's ``Trainer.save_states`` writes ``Updater.get_states(dump_optimizer=True)``: the pickle of
``(states, optimizer)`` (a plain ``states`` dict when written without the optimizer, as Module's
``save_optimizer_states`` and sockeye do), where

- ``states`` maps each parameter's index in the list the Trainer was given to its optimizer state: None, one
  ``NDArray`` or a tuple of them (SGD and NAG with momentum: the momentum; Adam: ``(mean, var)``; RMSProp:
  ``(n,)`` or ``(n, g, delta)``; AdaGrad: the history); a parameter never updated has no entry;
- an ``NDArray`` pickles as ``NDArray(None)`` built with ``{'handle': bytes}``, the bytes those of one array of
  ``nd.save`` (``MXNDArraySaveRawBytes``; ``params_io`` reads them);
- ``optimizer`` is the ``mx.optimizer.Optimizer`` object's ``__dict__`` (``lr``, ``wd``, ``num_update``, the
  per-index update counts, ``momentum``/``beta1``..., ``lr_scheduler`` pickled in turn).

Our own ``save_states`` pickles ``{'t': updates so far, 'states': {parameter name: [numpy arrays]}}``; MXNet
cannot read that file (we do not write MXNet's pickles: they name MXNet's classes).

Unpickling runs no class but those named in ``_CLASSES``: MXNet's NDArray becomes ``_NDArray`` (its bytes
parsed here), MXNet's built-in optimizers and learning-rate schedulers become ours
(``ast_hybrid.optimizer.optimizer`` / ``lr_scheduler``, same attribute names), and any other class (a GluonCV
scheduler, a user's optimizer) becomes an ``Unread`` placeholder that keeps only its name.
"""

from __future__ import annotations

import functools
import pickle

import numpy as np

__all__ = ["StatesFileError", "Unread", "read"]


class StatesFileError(ValueError):
    """A ``.states`` file that is neither ours nor MXNet's, or whose states do not fit the trainer."""


class Unread:
    """An object of a class the file names but we do not load (its name kept for messages)."""

    qualname = "?"

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass

    def __repr__(self):
        return f"<{self.qualname}, not loaded>"


class _NDArray:
    """MXNet's pickled NDArray: ``NDArray(None)`` then ``__setstate__({'handle': raw bytes})``."""

    def __init__(self, handle=None, writable=True):
        self.value = None

    def __setstate__(self, state):
        from ast_hybrid.io import params_file as params_io

        raw = state.get("handle") if isinstance(state, dict) else None
        if raw is not None:
            self.value = params_io._read_array(params_io._Reader(bytes(raw), "a pickled NDArray"), 0)


def _mxnet_optimizer(name):
    from ast_hybrid.optimizer import optimizer

    return _as_loaded(getattr(optimizer, name))


def _mxnet_scheduler(name):
    from ast_hybrid.optimizer import lr_scheduler

    return getattr(lr_scheduler, name)


@functools.lru_cache(maxsize=None)
def _as_loaded(cls):
    """A subclass of our optimizer ``cls`` whose pickled ``__dict__`` (MXNet's) is taken into our attributes."""

    def setstate(self, state):
        state = dict(state)
        lr = state.pop("lr", None)
        self.__dict__.update(state)
        self.__dict__.update(_trainer=None, _lr=lr, param_dict={})

    return type(cls.__name__, (cls,), {"__setstate__": setstate})


_OPTIMIZERS = ("SGD", "NAG", "Adam", "RMSProp", "AdaGrad")
_SCHEDULERS = ("FactorScheduler", "MultiFactorScheduler", "PolyScheduler", "CosineScheduler")
# (module, name) -> what the unpickler gets for it
_CLASSES = {
    ("mxnet.ndarray.ndarray", "NDArray"): lambda: _NDArray,
    **{("mxnet.optimizer.optimizer", n): (lambda n=n: _mxnet_optimizer(n)) for n in _OPTIMIZERS},
    **{("mxnet.optimizer", n): (lambda n=n: _mxnet_optimizer(n)) for n in _OPTIMIZERS},
    **{("mxnet.lr_scheduler", n): (lambda n=n: _mxnet_scheduler(n)) for n in _SCHEDULERS},
    ("builtins", "bytearray"): lambda: bytearray,
    ("builtins", "set"): lambda: set,
    ("builtins", "frozenset"): lambda: frozenset,
    ("builtins", "complex"): lambda: complex,
    # numpy arrays and scalars (our own files, and numbers a script passed as numpy values)
    **{(m, n): (lambda m=m, n=n: getattr(__import__(m, fromlist=[n]), n))
       for m in ("numpy.core.multiarray", "numpy._core.multiarray") for n in ("_reconstruct", "scalar")},
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy", "dtype"): lambda: np.dtype,
}


class _Unpickler(pickle.Unpickler):
    def __init__(self, f):
        super().__init__(f)
        self.from_mxnet = False

    def find_class(self, module, name):
        if module == "mxnet" or module.startswith("mxnet."):
            self.from_mxnet = True
        known = _CLASSES.get((module, name))
        if known is not None:
            return known()
        return type(name, (Unread,), {"qualname": f"{module}.{name}"})


def _arrays(state, where):
    """MXNet's state for one parameter (None, an NDArray, or a tuple/list of them) as a tuple of numpy arrays."""
    if state is None:
        return ()
    if isinstance(state, _NDArray):
        return (state.value,)
    if isinstance(state, (tuple, list)):
        return tuple(a for s in state for a in _arrays(s, where))
    raise StatesFileError(f"{where}: a state of type {type(state).__name__}, where MXNet writes NDArrays")


def read(fname):
    """``('ours', {'t', 'states'})`` or ``('mxnet', {index: tuple of numpy arrays}, optimizer or None)``."""
    try:
        with open(fname, "rb") as f:
            unpickler = _Unpickler(f)
            saved = unpickler.load()
    except OSError as exc:
        raise StatesFileError(f"{fname}: cannot read: {exc.strerror}") from None
    except Exception as exc:   # noqa: BLE001 - any unpickling failure means "not a states file"
        raise StatesFileError(f"{fname} is not a trainer states file (neither ours nor MXNet's "
                              f"Trainer.save_states): {type(exc).__name__}: {exc}") from None
    if not unpickler.from_mxnet:
        if isinstance(saved, dict) and set(saved) == {"t", "states"}:
            return "ours", saved
        raise StatesFileError(f"{fname} is not a trainer states file (neither ours nor MXNet's "
                              "Trainer.save_states): a pickle of something else")
    optimizer = None
    if isinstance(saved, tuple) and len(saved) == 2:
        saved, optimizer = saved
    if not isinstance(saved, dict):
        raise StatesFileError(f"{fname}: MXNet's states should be a dict index -> state, not "
                              f"{type(saved).__name__}")
    return "mxnet", {i: _arrays(s, f"{fname}, index {i}") for i, s in saved.items()}, optimizer
