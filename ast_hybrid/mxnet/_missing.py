"""What MXNet 1.9.1 has and ast-hybrid does not: one error that names the MXNet API.

Every module of the compatibility package (and every ast-hybrid module it re-exports as an MXNet
module, e.g. ``ast_hybrid.nd`` as ``mxnet.nd``) answers a missing name through a module-level
``__getattr__`` made here:

- a name MXNet 1.9.1's module has (``_api.NAMES``) raises :class:`NotAvailable`, an ``AttributeError``
  (``hasattr``/``getattr(m, name, default)`` keep working) whose message names the MXNet API;
- a submodule MXNet has (``mxnet.image``) raises :class:`ModuleNotAvailable`, an ``ImportError``, so that
  ``from mxnet import image`` and ``import mxnet.image`` say the same thing, and the usual
  ``try: ... except ImportError`` around an optional part keeps working;
- any other name is Python's own ``AttributeError``, as MXNet gives;
- a name kept so that code mentioning it runs (``mx.operator.CustomOp`` to subclass, ``mx.sym.Symbol`` for
  ``isinstance``) raises :class:`NotSupported`, a ``NotImplementedError`` naming the API, when called.

The error types and ``unsupported`` are ``ast_hybrid.core.errors``'s (rooms below this door raise them too);
what MXNet 1.9.1 has (``_api``) and the module ``__getattr__`` built from it are this door's.
"""

from __future__ import annotations

import types

from ast_hybrid.core.errors import SPELLING, ModuleNotAvailable, NotAvailable, NotSupported, unsupported  # noqa: F401
from ast_hybrid.core.errors import api_message as _message
from ast_hybrid.mxnet._api import MODULES, NAMES

__all__ = ["NotAvailable", "ModuleNotAvailable", "NotSupported", "missing", "unsupported", "module_getattr", "attach", "door",
           "serve", "has", "MODULE_PATHS"]

MODULE_PATHS = frozenset(MODULES)
_SPELLING = SPELLING


def missing(module_path: str, name: str, why: str | None = None) -> Exception:
    """The error for ``module_path.name`` (``module_path`` an MXNet module path such as ``mxnet.ndarray``)."""
    full = f"{module_path}.{name}"
    if full in MODULE_PATHS:
        return ModuleNotAvailable(_message(full, why), name=full)
    api = f"{_SPELLING.get(module_path, module_path)}.{name}"
    return NotAvailable(_message(api, why), name=name)


def has(module_path: str, name: str) -> bool:
    """Whether MXNet 1.9.1's ``module_path`` has ``name`` (a public name or a submodule)."""
    return name in NAMES.get(module_path, ()) or f"{module_path}.{name}" in MODULE_PATHS


def module_getattr(module_path: str, real_name: str, why: dict[str, str] | None = None):
    """A module ``__getattr__`` for the module that serves ``module_path``; ``why`` gives a reason per name."""
    why = why or {}
    own = real_name == __package__ or real_name.startswith(__package__ + ".")

    def __getattr__(name):
        if not name.startswith("__") and (has(module_path, name) or name in why):
            err = missing(module_path, name, why.get(name))
            if own or isinstance(err, AttributeError):
                raise err
            # a module of ast-hybrid's own front served as an MXNet module (ast_hybrid.nd is mxnet.nd):
            # its attributes stay AttributeErrors, so that hasattr and getattr(nd, name, default) keep
            # working in ast-hybrid's own code; the compatibility package's modules raise the ImportError,
            # which `from mxnet import image` then shows as it is
            raise NotAvailable(str(err), name=name)
        raise AttributeError(f"module {real_name!r} has no attribute {name!r}", name=name)

    return __getattr__


def attach(module: types.ModuleType, module_path: str) -> None:
    """Give an ast-hybrid module re-exported as ``module_path`` the missing-name error, if it has no
    ``__getattr__`` of its own (its names and behaviour are otherwise untouched)."""
    if "__getattr__" not in vars(module):
        module.__getattr__ = module_getattr(module_path, module.__name__)


def door(name: str, module: types.ModuleType, module_path: str, why: dict[str, str] | None = None) -> None:
    """Make the compatibility module ``name`` (``ast_hybrid.mxnet.X``, run as ``mxnet.X``) be ``module`` itself:
    MXNet's API implemented in a room of its own (``ast_hybrid.metric``, ``ast_hybrid.optimizer``...), served
    here with the error naming ``module_path``'s API for what it lacks (as before it moved: ``own``)."""
    import sys

    sys.modules[name] = module
    module.__getattr__ = module_getattr(module_path, name, why)


def serve(package: str, modules: dict) -> None:
    """Serve ast-hybrid modules as submodules of the compatibility ``package`` (``{name: (module, mxnet
    path)}``): importable as ``package.name`` (as ``os.path`` is), the module itself, not a copy, with the
    missing-name error of its MXNet path attached."""
    import sys

    for sub, (module, mxnet_path) in modules.items():
        sys.modules.setdefault(f"{package}.{sub}", module)
        attach(module, mxnet_path)
