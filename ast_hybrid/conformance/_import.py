"""Import unmodified GluonCV / GluonNLP in our process, through ``import mxnet`` = ``ast_hybrid.mxnet``.

The packages' folder (``oracle.gluon_pkgs()``) goes LAST on ``sys.path``: it holds scipy/Pillow/requests built
for the oracle's numpy 1.x, ours come first.  GluonCV's ``__init__`` turns any ImportError of its parts into
"missing mxnet & torch", so its parts are first imported under an empty package shell, where the real error
shows.

Every name the two packages import from MXNet exists in the compatibility package, so nothing is stood in
for: ``stand_ins`` (the report's ``--stand-ins``, once a development opt-in that gave missing names empty
stand-ins) is accepted and changes nothing; the list of names given stand-ins is always empty.
"""

from __future__ import annotations

import importlib
import sys
import types


def import_package(name: str, folder) -> types.ModuleType:
    """``gluoncv`` or ``gluonnlp`` imported from ``folder`` (appended to ``sys.path``) through the installed
    compatibility package (numpy's removed aliases restored, as ``ast-hybrid run`` does)."""
    import ast_hybrid.mxnet as compat
    from ast_hybrid.mxnet._activate import restore_numpy_aliases

    compat.install()
    restore_numpy_aliases()
    folder = str(folder)
    if folder not in sys.path:
        sys.path.append(folder)
    if name == "gluoncv" and name not in sys.modules:
        shell = types.ModuleType(name)
        shell.__path__ = [folder + "/" + name]
        sys.modules[name] = shell
        try:
            for part in ("data", "model_zoo", "nn", "utils", "loss"):
                importlib.import_module(f"{name}.{part}")
        finally:
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[key]
    return importlib.import_module(name)


def import_packages(family: str, stand_ins: bool = False):
    """``({name: module}, [])`` for GluonNLP (``family == 'nlp'``) or GluonCV (any other family), from
    ``oracle.gluon_pkgs()``; ``stand_ins`` changes nothing (see the module doc)."""
    from ast_hybrid.testing.oracle import gluon_pkgs

    name = "gluonnlp" if family == "nlp" else "gluoncv"
    return {name: import_package(name, gluon_pkgs())}, []
