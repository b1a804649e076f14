"""GluonCV 0.10.5 and GluonNLP 0.10.0 imported WHOLE through ``import mxnet`` = ``ast_hybrid.mxnet``: every
submodule (``pkgutil.walk_packages``) imports here exactly where it imports in MXNet 1.9.1's process, with no
stand-in; the only ones that fail, on both sides, need packages GluonCV itself leaves optional (``pandas`` for
``gluoncv.auto``, ``torch`` for ``gluoncv.torch``), and fail with the same error."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

pytestmark = pytest.mark.oracle

_WALK = """
import importlib, pkgutil, sys
def walk(name):
    failed = {}
    for info in pkgutil.walk_packages(importlib.import_module(name).__path__, name + '.', onerror=lambda n: None):
        try:
            importlib.import_module(info.name)
        except Exception as e:
            failed[info.name] = type(e).__name__ + ': ' + str(e)
    return failed
"""


@pytest.mark.parametrize("package", ["gluoncv", "gluonnlp"])
def test_every_submodule_imports_as_in_mxnet(oracle, folder, package):
    theirs = oracle.run(f"import sys\nsys.path.append({str(folder)!r})\n" + _WALK
                        + f"meta['failed'] = walk({package!r})\nmeta['v'] = sys.modules[{package!r}].__version__\n")
    theirs, version = theirs["meta"]["failed"], theirs["meta"]["v"]
    from ast_hybrid import mxnet as compat
    from ast_hybrid.conformance._import import import_package

    was_installed = compat.installed()
    try:
        module = import_package(package, folder)
        namespace: dict = {}
        exec(_WALK, namespace)
        ours = namespace["walk"](package)
        count = sum(1 for _ in pkgutil.walk_packages(module.__path__, package + ".", onerror=lambda n: None))
    finally:
        if not was_installed:
            compat.uninstall()
    assert ours == theirs
    # what fails, fails alike on both sides, and only for want of a third-party package neither side has (pandas,
    # torch; with pandas there: cv2, autocfg): never for something of MXNet's
    assert all(re.match(r"ModuleNotFoundError: No module named '(?!mxnet)[\w.]+'$", e) for e in ours.values())
    assert count > (250 if package == "gluoncv" else 80)
    assert importlib.import_module(package).__version__ == version
