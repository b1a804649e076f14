"""``import mxnet`` resolving to ``ast_hybrid.mxnet``: a meta-path finder, and the numpy aliases of MXNet's era.

:func:`install` puts :class:`MXNetFinder` first on ``sys.meta_path``.  It answers ``mxnet`` and every
``mxnet.a.b`` with the very module object the compatibility package serves under that path (walking
``ast_hybrid.mxnet``'s attributes and submodules), so ``mxnet.nd is ast_hybrid.nd`` and
``mxnet.gluon.nn is ast_hybrid.gluon.nn``: nothing is loaded twice.  A module MXNet 1.9.1 has and we do
not (``mxnet.image``) is an ``ImportError`` naming it; a name MXNet never had is Python's own
``ModuleNotFoundError``.

It never shadows a real MXNet: unless ``force=True``, :func:`install` first asks the other finders
(``importlib.util.find_spec``) and refuses with :class:`RealMXNetInstalled` when one finds ``mxnet``.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings

__all__ = ["MXNetFinder", "RealMXNetInstalled", "install", "uninstall", "installed", "resolve",
           "restore_numpy_aliases", "NUMPY_ALIASES", "NumpyAliasWarning"]

PACKAGE = "ast_hybrid.mxnet"
TOP = "mxnet"


class NumpyAliasWarning(UserWarning):
    """A script used a numpy alias that numpy no longer has (``np.float``); ast-hybrid gave it the old value."""


class RealMXNetInstalled(ImportError):
    """A real ``mxnet`` is importable; ``install()`` leaves it in place unless ``force=True``."""


def resolve(name: str) -> types.ModuleType | None:
    """The module the compatibility package serves as ``name`` (``mxnet.gluon.nn``), or None.

    Raises ``ModuleNotAvailable`` for a module MXNet 1.9.1 has and ast-hybrid does not."""
    from ast_hybrid.mxnet._missing import MODULE_PATHS, missing

    module = importlib.import_module(PACKAGE)
    path = TOP
    for part in name.split(".")[1:]:
        sub = vars(module).get(part)
        if sub is None and "__getattr__" in vars(module):   # served by the module (mxnet.symbol's contrib)
            try:
                sub = getattr(module, part)
            except (AttributeError, ImportError):
                sub = None
            if sub is not None and not isinstance(sub, types.ModuleType) and f"{path}.{part}" in MODULE_PATHS:
                sub = _module_view(sub, f"{module.__name__}.{part}")
        if not isinstance(sub, types.ModuleType):
            target = f"{module.__name__}.{part}"
            try:
                sub = importlib.import_module(target)
            except ModuleNotFoundError as exc:
                if exc.name != target:
                    raise
                sub = None
        if sub is None:
            if f"{path}.{part}" in MODULE_PATHS:
                raise missing(path, part)
            return None
        module, path = sub, f"{path}.{part}"
    return module


_VIEWS: dict = {}


def _module_view(namespace, name: str) -> types.ModuleType:
    """A module whose names are ``namespace``'s (``sym.contrib`` is an object, MXNet's ``mxnet.symbol.contrib``
    a module: ``from mxnet.symbol.contrib import SyncBatchNorm`` needs a module to import)."""
    view = _VIEWS.get(name)
    if view is None or view.__dict__["_namespace"] is not namespace:
        view = _VIEWS[name] = types.ModuleType(name, getattr(namespace, "__doc__", None))
        view._namespace = namespace
        view.__getattr__ = lambda attr: getattr(namespace, attr)
        view.__dir__ = lambda: dir(namespace)
    return view


class _Served(importlib.abc.Loader):
    """Loads nothing: hands back the module that is already there, under its own spec."""

    def __init__(self, module):
        self.module, self.own_spec = module, module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # importlib set module.__spec__ to the alias spec; the module keeps its own name and spec
        module.__spec__ = self.own_spec


class MXNetFinder(importlib.abc.MetaPathFinder):
    """Finds ``mxnet`` and ``mxnet.*`` in the compatibility package."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != TOP and not fullname.startswith(TOP + "."):
            return None
        module = resolve(fullname)
        if module is None:
            return None
        # every served module is a package, so that its submodules import (mxnet.ndarray.contrib: ast_hybrid.nd
        # is a plain module, and importlib asks the parent for __path__ before it asks this finder)
        return importlib.machinery.ModuleSpec(fullname, _Served(module), is_package=True)


def installed() -> bool:
    return any(isinstance(f, MXNetFinder) for f in sys.meta_path)


def install(force: bool = False) -> None:
    """Make ``import mxnet`` (and every ``mxnet.*``) resolve to ``ast_hybrid.mxnet``.

    A real MXNet that Python can import is left alone: ``RealMXNetInstalled`` unless ``force=True``."""
    if installed():
        return
    loaded = sys.modules.get(TOP)
    if loaded is not None and not getattr(loaded, "__name__", "").startswith(PACKAGE) and not force:
        raise RealMXNetInstalled(f"a real mxnet is already imported ({getattr(loaded, '__file__', loaded)}); "
                                 "ast_hybrid.mxnet.install(force=True) replaces it")
    if not force and loaded is None:
        spec = importlib.util.find_spec(TOP)
        if spec is not None:
            where = spec.origin or ", ".join(spec.submodule_search_locations or ())
            raise RealMXNetInstalled(f"a real mxnet is installed at {where}: ast-hybrid does not shadow it. "
                                     "Use `ast-hybrid run --force` or ast_hybrid.mxnet.install(force=True) "
                                     "to run on ast-hybrid anyway")
    for key in [k for k in sys.modules if k == TOP or k.startswith(TOP + ".")]:
        if not getattr(sys.modules[key], "__name__", "").startswith(PACKAGE):
            del sys.modules[key]       # forced: the real MXNet's modules go
    sys.meta_path.insert(0, MXNetFinder())
    if not isinstance(builtins.__import__, _FromImport):
        builtins.__import__ = _FromImport(builtins.__import__)


class _FromImport:
    """``builtins.__import__`` while the package serves ``mxnet``: ``from mxnet.X import Y`` with ``Y`` a name
    MXNet has and ast-hybrid does not raises the error naming it (``NameNotAvailable``, an ImportError).  Python
    itself would turn the module's ``NotAvailable`` (an AttributeError, so that ``hasattr`` answers False) into
    a bare ``cannot import name 'Y'``.  Every other import passes straight through."""

    def __init__(self, real):
        self.real = real

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        module = self.real(name, globals, locals, fromlist, level)
        if fromlist and level == 0 and (name == TOP or name.startswith(TOP + ".")):
            from ast_hybrid.core.errors import NameNotAvailable, NotAvailable

            for attr in fromlist:
                if attr == "*":
                    continue
                try:
                    getattr(module, attr)
                except NotAvailable as err:
                    raise NameNotAvailable(str(err), name=f"{name}.{attr}") from None
                except AttributeError:
                    pass        # not an MXNet name either: Python's own error follows
        return module


def uninstall() -> None:
    """Undo :func:`install`: the finder, the import wrapper and every ``mxnet``/``mxnet.*`` entry it gave go."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, MXNetFinder)]
    if isinstance(builtins.__import__, _FromImport):
        builtins.__import__ = builtins.__import__.real
    for key in [k for k in sys.modules if k == TOP or k.startswith(TOP + ".")]:
        del sys.modules[key]


# -- numpy: the aliases MXNet-era code uses, removed in numpy 1.24 and 2.0 ----------------------------

NUMPY_ALIASES = {"float": float, "int": int, "bool": bool, "object": object, "str": str, "complex": complex,
                 "long": int, "unicode": str, "float_": "float64", "complex_": "complex128", "unicode_": "str_",
                 "string_": "bytes_", "NaN": "nan", "Inf": "inf", "Infinity": "inf", "PINF": "inf", "NINF": None,
                 "round_": "round", "product": "prod", "cumproduct": "cumprod", "sometrue": "any", "alltrue": "all"}


def restore_numpy_aliases() -> None:
    """Make ``np.float``, ``np.int``, ``np.object``... (gone since numpy 1.24 / 2.0) work again, each with a
    ``NumpyAliasWarning`` the first time a script uses it; names numpy has are left as they are."""
    import numpy as np

    if getattr(np.__getattr__, "ast_hybrid_aliases", False):
        return
    original, warned = np.__getattr__, set()

    def __getattr__(name):
        if name in NUMPY_ALIASES and name not in vars(np):
            value = NUMPY_ALIASES[name]
            value = -np.inf if name == "NINF" else getattr(np, value) if isinstance(value, str) else value
            if name not in warned:
                warned.add(name)
                warnings.warn(f"np.{name} was removed from numpy; ast-hybrid restores it for MXNet-era code "
                              f"(np.{name} is {value!r} here)", NumpyAliasWarning, stacklevel=2)
            return value
        return original(name)

    __getattr__.ast_hybrid_aliases = True
    np.__getattr__ = __getattr__
