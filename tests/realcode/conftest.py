"""Real code nobody here wrote, run on ast-hybrid; the helpers are imported from this folder.

``mxnet_source``: ``import mxnet`` is the compatibility package (``ast_hybrid.mxnet.install()``, the
product), with MXNet 1.9.1's own ``gluon/loss.py``, ``gluon/model_zoo/``, ``gluon/rnn/`` cells and
``gluon/contrib/rnn/`` cells copied unchanged into a temporary ``mxnet/`` tree and found first at their own
module paths (``mxnet.gluon.loss`` is MXNet's file).  Their relative imports (``from ..block import
HybridBlock``, ``from ...base import numeric_types``, ``from .rnn_layer import *``) reach the product.
"""

import importlib
import importlib.abc
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# MXNet's own files, relative to its gluon/ (whole packages are copied with their own __init__)
MXNET_FILES = ("loss.py", "model_zoo", "rnn/__init__.py", "rnn/rnn_cell.py", "contrib/rnn")
# the modules they make, imported first so that ``from mxnet.gluon import rnn`` finds MXNet's
MXNET_MODULES = ("mxnet.gluon.loss", "mxnet.gluon.model_zoo", "mxnet.gluon.rnn", "mxnet.gluon.contrib.rnn")


class MXNetFiles(importlib.abc.MetaPathFinder):
    """Finds ``mxnet.*`` modules among the copied MXNet files (and nothing else)."""

    def __init__(self, root: Path):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("mxnet."):
            return None
        base = self.root.joinpath(*fullname.split("."))
        if (base / "__init__.py").exists():
            return importlib.util.spec_from_file_location(fullname, base / "__init__.py",
                                                          submodule_search_locations=[str(base)])
        if base.with_suffix(".py").exists():
            return importlib.util.spec_from_file_location(fullname, base.with_suffix(".py"))
        return None


def _mxnet_entries():
    return {k: v for k, v in sys.modules.items() if k == "mxnet" or k.startswith("mxnet.")}


@pytest.fixture(scope="module")       # undone after each module: other tests see the product alone
def mxnet_source(tmp_path_factory, gluon_tree):
    """``mxnet`` = ``ast_hybrid.mxnet``, with MXNet's own model, loss and cell source files in it."""
    from ast_hybrid import mxnet as compat

    root = tmp_path_factory.mktemp("mxnet_files")
    for rel in MXNET_FILES:
        src, dest = Path(gluon_tree) / rel, root / "mxnet" / "gluon" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, dest)

    was_installed, saved = compat.installed(), _mxnet_entries()
    compat.uninstall()
    compat.install()
    # importing MXNet's rnn over ours sets the attribute `rnn` of the module serving mxnet.gluon: put it back after
    parents = [(compat.gluon, "loss"), (compat.gluon, "model_zoo"), (compat.gluon, "rnn"), (compat.gluon.contrib, "rnn")]
    attributes = [(obj, name, vars(obj)[name]) for obj, name in parents]
    finder = MXNetFiles(root)
    sys.meta_path.insert(0, finder)
    try:
        for name in MXNET_MODULES:
            importlib.import_module(name)
        import mxnet
        assert mxnet is compat
        yield mxnet
    finally:
        sys.meta_path.remove(finder)
        compat.uninstall()
        for obj, name, value in attributes:
            setattr(obj, name, value)
        sys.modules.update(saved)
        if was_installed:
            compat.install()
