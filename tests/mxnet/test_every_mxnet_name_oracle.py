"""Every public name of MXNet 1.9.1's namespaces that users import (issue 30 item 4): read from MXNet's own
modules in the oracle, each either works under ``import mxnet`` = ast-hybrid or is an error naming it ("...
is not available in ast-hybrid"), both as an attribute (``mx.nd.X``: an AttributeError subclass, so that
``hasattr`` answers False) and as ``from mxnet.nd import X`` (an ImportError subclass naming it, where Python
would say only "cannot import name").  Never a bare AttributeError or ImportError."""

from __future__ import annotations

import importlib

import pytest

pytestmark = pytest.mark.oracle

NAMESPACES = ("mxnet", "mxnet.ndarray", "mxnet.ndarray.contrib", "mxnet.ndarray.linalg", "mxnet.ndarray.random",
              "mxnet.ndarray.image", "mxnet.symbol", "mxnet.gluon", "mxnet.gluon.nn", "mxnet.gluon.rnn",
              "mxnet.gluon.loss", "mxnet.gluon.data", "mxnet.gluon.data.vision", "mxnet.gluon.data.vision.transforms",
              "mxnet.gluon.utils", "mxnet.gluon.contrib", "mxnet.gluon.model_zoo.vision", "mxnet.initializer",
              "mxnet.optimizer", "mxnet.lr_scheduler", "mxnet.metric", "mxnet.io", "mxnet.image", "mxnet.recordio",
              "mxnet.autograd", "mxnet.random", "mxnet.numpy", "mxnet.numpy_extension", "mxnet.numpy.random",
              "mxnet.numpy.linalg", "mxnet.util", "mxnet.context", "mxnet.test_utils", "mxnet.kvstore",
              "mxnet.profiler", "mxnet.runtime", "mxnet.base")

WALK = """
import importlib, types
names = {}
for path in NAMESPACES:
    m = importlib.import_module(path)
    keep = []
    for n in dir(m):
        if n.startswith('_'):
            continue
        v = getattr(m, n)
        home = v.__name__ if isinstance(v, types.ModuleType) else getattr(v, '__module__', None) or ''
        if str(home).startswith('mxnet'):          # MXNet's own (not numpy's, os's... it happens to import)
            keep.append(n)
    names[path] = keep
meta['names'] = names
"""

NAMED = "is not available in ast-hybrid"


def test_each_name_works_or_names_itself(oracle):
    names = oracle.run(f"NAMESPACES = {NAMESPACES!r}\n" + WALK)["meta"]["names"]
    import ast_hybrid.mxnet as compat

    was = compat.installed()
    compat.install()
    bare, served, named = [], 0, 0
    try:
        for path, public in names.items():
            try:
                module = importlib.import_module(path)
            except ImportError as err:
                if NAMED not in str(err):
                    bare.append(f"import {path}: {type(err).__name__}: {err}")
                named += len(public)
                continue
            for name in public:
                try:
                    getattr(module, name)
                    served += 1
                    continue
                except AttributeError as err:
                    if NAMED not in str(err):
                        bare.append(f"{path}.{name}: {type(err).__name__}: {err}")
                        continue
                except ImportError as err:          # a submodule MXNet has and we do not
                    if NAMED not in str(err):
                        bare.append(f"{path}.{name}: {type(err).__name__}: {err}")
                        continue
                named += 1
                try:
                    exec(f"from {path} import {name}", {})
                    bare.append(f"from {path} import {name}: imported although getattr failed")
                except ImportError as err:
                    if NAMED not in str(err) or not isinstance(err, ImportError):
                        bare.append(f"from {path} import {name}: {type(err).__name__}: {err}")
    finally:
        if not was:
            compat.uninstall()
    total = sum(len(v) for v in names.values())
    assert total > 1000 and served > total / 2, (total, served, named)
    assert bare == [], f"{len(bare)} of {total} names give a bare error:\n" + "\n".join(bare[:40])
