"""Unmodified GluonCV 0.10.5 / GluonNLP 0.10.0 imported through ``import mxnet`` = ``ast_hybrid.mxnet``.

``import_package(name)`` installs the compatibility package (``ast_hybrid.mxnet.install()``), restores the
numpy aliases as ``ast-hybrid run`` does, puts the unpacked packages folder LAST on ``sys.path`` (it holds
scipy/Pillow built for the oracle's numpy 1.x; ours come first) and imports the package.

The folder: ``ast_hybrid.testing.oracle.gluon_pkgs()`` (inside the oracle's virtualenv, filled by its
``setup``; ``$AST_HYBRID_GLUON_PKGS`` names another).  If its install fails the tests skip, loudly.

STAND-INS.  Importing either package still needs names the compatibility package lacks (all at import time;
none is called by the models tested here).  Each one given a stand-in is recorded in ``STAND_INS``:
``requests`` (GluonCV's download helper; not installed), ``mxnet.image`` and its submodules (GluonCV's data
transforms import it), ``gluon.data.dataloader._MultiWorkerIter``, ``ForkingPickler``, ``_as_in_context``
(subclassed/imported by GluonCV's and GluonNLP's loaders), ``gluon.data.vision.ImageRecordDataset``
(subclassed), ``gluon.utils._get_repo_url``/``_get_repo_file_url``, ``model_store._model_sha1`` (GluonNLP
adds its checksums to it), ``mx.contrib.amp.amp``, ``mx.metric.MCC``/``PearsonCorrelation``, the
``contrib.*adamw_update`` ops (GluonNLP's optimizers).  A stand-in is an empty class (or module, dict).
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from pathlib import Path

STAND_INS: list[str] = []
_UNDO: list = []      # (object, attribute, old value or _NONE): what restore() puts back
_NONE = object()


def _set(obj, attr, value):
    _UNDO.append((obj, attr, vars(obj).get(attr, _NONE)))
    setattr(obj, attr, value)


def restore() -> None:
    """Undo every stand-in and patched ``__getattr__`` (the modules are shared with the rest of the suite)."""
    for name in STAND_INS:       # the stand-in modules (made here: no __file__)
        if sys.modules.get(name) is not None and getattr(sys.modules[name], "__file__", None) is None:
            del sys.modules[name]
    while _UNDO:
        obj, attr, old = _UNDO.pop()
        if old is _NONE:
            vars(obj).pop(attr, None) if isinstance(obj, types.ModuleType) else delattr(obj, attr)
        else:
            setattr(obj, attr, old)


def packages_folder() -> Path | None:
    """The folder ``python -m ast_hybrid.testing.oracle setup`` fills (``oracle.gluon_pkgs()``, or
    ``$AST_HYBRID_GLUON_PKGS``), installed now if it is not yet; None only when that install fails."""
    from ast_hybrid.testing import oracle

    try:
        return oracle.ensure_gluon_pkgs()
    except oracle.OracleUnavailable:
        return None


def _stand_in_module(name: str, parent) -> None:
    module = types.ModuleType(name)
    sys.modules[name] = module
    if parent is not None:
        _set(parent, name.rsplit(".", 1)[1], module)
    STAND_INS.append(name)


def _permissive(module) -> None:
    """``module.__getattr__`` gives an empty class for a name MXNet has and we do not (NotAvailable)."""
    from ast_hybrid.mxnet import _missing

    original = vars(module).get("__getattr__")
    if original is None or getattr(original, "stand_in", False):
        return

    def __getattr__(name):
        try:
            return original(name)
        except (_missing.NotAvailable, _missing.ModuleNotAvailable):
            STAND_INS.append(f"{module.__name__}.{name}")
            return type(name, (), {})

    __getattr__.stand_in = True
    _set(module, "__getattr__", __getattr__)


def _prepare(folder: Path):
    import ast_hybrid.mxnet as compat
    from ast_hybrid.mxnet._activate import restore_numpy_aliases

    compat.install()
    restore_numpy_aliases()
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    if "requests" not in sys.modules and importlib.util.find_spec("requests") is None:
        _stand_in_module("requests", None)
    for name in ("image", "image.image", "image.detection"):
        try:
            importlib.import_module("mxnet." + name)
        except ImportError:
            parent = sys.modules["mxnet." + name.rsplit(".", 1)[0]] if "." in name else compat
            _stand_in_module("mxnet." + name, parent)
    import mxnet.gluon.model_zoo.model_store as store
    if not hasattr(store, "_model_sha1"):
        _set(store, "_model_sha1", {})
        STAND_INS.append("mxnet.gluon.model_zoo.model_store._model_sha1")
    for name, module in list(sys.modules.items()):
        if name.startswith("ast_hybrid") and isinstance(module, types.ModuleType):
            _permissive(module)


def _forget(name: str) -> None:
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def import_package(name: str, folder: Path):
    """``name`` imported as above; a ``from M import N`` of a private name M lacks gets a stand-in class.

    GluonCV's ``__init__`` turns any ImportError of its parts into "missing mxnet & torch": its parts are
    first imported under an empty package shell, where the real error shows."""
    _prepare(folder)
    if name == "gluoncv":
        shell = types.ModuleType(name)
        shell.__path__ = [str(folder / name)]
        sys.modules[name] = shell
        try:
            for part in ("data", "model_zoo", "nn", "utils", "loss"):
                _import_with_stand_ins(f"{name}.{part}", keep=name)
        finally:
            _forget(name)
    return _import_with_stand_ins(name)


def _import_with_stand_ins(name: str, keep: str | None = None):
    for _ in range(40):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            found = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", str(exc))
            if not found or not found.group(2).startswith("ast_hybrid"):
                raise
            _set(sys.modules[found.group(2)], found.group(1), type(found.group(1), (), {}))
            STAND_INS.append(f"{found.group(2)}.{found.group(1)}")
            for key in [k for k in sys.modules if k.startswith((keep or name) + ".") or k == name]:
                del sys.modules[key]
    raise RuntimeError(f"importing {name} needed more than 40 stand-ins: {STAND_INS}")
