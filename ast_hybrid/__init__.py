"""ast-hybrid: lint MXNet Gluon models for hybridizability and run them under JAX/XLA.

The top-level names are loaded lazily, so that ``import ast_hybrid`` and the
linter never import jax:

- ``lint(path_or_source, ...)``: static diagnostics (no code is imported or run);
- ``convert(fn)``, ``jit(fn, **jit_options)``, ``to_source(fn)``,
  ``do_not_convert``: the transpiler;
- ``nd``, ``sym``, ``autograd``, ``init``, ``gluon``, ``random``, ``cpu``/``gpu``: the Gluon-compatible front;
- ``Diagnostic``, ``ConversionError``: what both report.
"""

import time as _time
from importlib import import_module

_IMPORT_STARTED = _time.time()     # each module of the package is read after this (xla/program_cache.py)

from .common.diagnostics import ConversionError, Diagnostic, Severity  # noqa: E402 - no jax here

__version__ = "0.1.0"

# name -> (module, attribute or None for the module itself)
_LAZY = {
    "lint": ("ast_hybrid.linter.api", "lint"),
    "convert": ("ast_hybrid.transpiler.api", "convert"),
    "jit": ("ast_hybrid.transpiler.api", "jit"),
    "to_source": ("ast_hybrid.transpiler.api", "to_source"),
    "do_not_convert": ("ast_hybrid.transpiler.api", "do_not_convert"),
    "functional": ("ast_hybrid.gluon.functional", "functional"),
    "nd": ("ast_hybrid.nd", None),
    "sym": ("ast_hybrid.sym", None),
    "autograd": ("ast_hybrid.autograd", None),
    "init": ("ast_hybrid.init", None),
    "random": ("ast_hybrid.ops.random", None),     # mx.random.seed(n) -> ast_hybrid.random.seed(n)
    "cpu": ("ast_hybrid.ndarray", "cpu"),
    "gpu": ("ast_hybrid.ndarray", "gpu"),
    "Context": ("ast_hybrid.ndarray", "Context"),
    "gluon": ("ast_hybrid.gluon", None),
    "distributed": ("ast_hybrid.distributed", None),   # several processes: initialize(), KVStore
}

__all__ = ["Diagnostic", "ConversionError", "Severity", *_LAZY]


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ast_hybrid' has no attribute {name!r}") from None
    mod = import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
