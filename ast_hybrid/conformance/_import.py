"""Import unmodified GluonCV / GluonNLP in our process, through ``import mxnet`` = ``ast_hybrid.mxnet``.

The packages' folder (``oracle.gluon_pkgs()``) goes LAST on ``sys.path``: it holds scipy/Pillow built for the
oracle's numpy 1.x, ours come first.  GluonCV's ``__init__`` turns any ImportError of its parts into "missing
mxnet & torch", so its parts are first imported under an empty package shell, where the real error shows.

``stand_ins=True`` (the report's ``--stand-ins``, a development opt-in that the report prints): a name the
compatibility package lacks at import time gets an empty class (``from M import N``, ``M.N``) or module, and
each is listed in the result, so the rest of a model's check can be developed before those names exist.
"""

from __future__ import annotations

import importlib
import re
import sys
import types


def import_packages(family: str, stand_ins: bool = False):
    import ast_hybrid.mxnet as compat
    from ast_hybrid.mxnet._activate import restore_numpy_aliases
    from ast_hybrid.testing.oracle import gluon_pkgs

    compat.install()
    restore_numpy_aliases()
    folder = str(gluon_pkgs())
    if folder not in sys.path:
        sys.path.append(folder)
    given: list[str] = []
    if stand_ins:
        _permissive_modules(given)
    name = "gluonnlp" if family == "nlp" else "gluoncv"
    if name == "gluoncv":
        shell = types.ModuleType(name)
        shell.__path__ = [folder + "/" + name]
        sys.modules[name] = shell
        try:
            for part in ("data", "model_zoo", "nn", "utils", "loss"):
                _import(f"{name}.{part}", stand_ins, given, keep=name)
        finally:
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[key]
    module = _import(name, stand_ins, given)
    return {name: module}, sorted(set(given))


def _import(name, stand_ins, given, keep=None):
    for _ in range(60):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            found = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", str(exc))
            missing = re.search(r"No module named '([\w.]+)'", str(exc))
            if not stand_ins or not (found or missing):
                raise
            if found and found.group(2).startswith(("ast_hybrid", "mxnet")):
                setattr(sys.modules[found.group(2)], found.group(1), type(found.group(1), (), {}))
                given.append(f"{found.group(2)}.{found.group(1)}")
            elif missing and missing.group(1).split(".")[0] in ("requests", "mxnet"):
                module = sys.modules[missing.group(1)] = types.ModuleType(missing.group(1))
                parent, _, leaf = missing.group(1).rpartition(".")
                if parent in sys.modules:
                    setattr(sys.modules[parent], leaf, module)
                given.append(missing.group(1))
            else:
                raise
            for key in [k for k in sys.modules if k == name or k.startswith((keep or name) + ".")]:
                del sys.modules[key]
    raise RuntimeError(f"importing {name} needed more than 60 stand-ins: {given}")


def _permissive_modules(given):
    from ast_hybrid.mxnet import _missing

    for module in [m for n, m in list(sys.modules.items()) if n.startswith("ast_hybrid") and m is not None]:
        original = vars(module).get("__getattr__")
        if original is None:
            continue

        def __getattr__(attr, original=original, module=module):
            try:
                return original(attr)
            except (_missing.NotAvailable, _missing.ModuleNotAvailable):
                given.append(f"{module.__name__}.{attr}")
                return type(attr, (), {})
        module.__getattr__ = __getattr__
    import mxnet.gluon.model_zoo.model_store as store
    if not hasattr(store, "_model_sha1"):
        store._model_sha1 = {}
        given.append("mxnet.gluon.model_zoo.model_store._model_sha1")
