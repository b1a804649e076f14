"""What MXNet 1.9.1 itself has: its public module paths and, for each module the compatibility package
serves, its public names.  Run by the oracle's python (``tests/mxnet/test_api_names.py``), and to
regenerate ``ast_hybrid/mxnet/_api.py``::

    .venv-mxnet/bin/python tests/mxnet/mxnet_api_probe.py > ast_hybrid/mxnet/_api.py
"""

import importlib
import pkgutil
import pprint
import sys
import types

SERVED = ("mxnet", "mxnet.ndarray", "mxnet.ndarray.contrib", "mxnet.ndarray.random", "mxnet.ndarray.linalg",
          "mxnet.ndarray.sparse", "mxnet.symbol", "mxnet.autograd", "mxnet.base", "mxnet.context", "mxnet.util",
          "mxnet.initializer", "mxnet.random", "mxnet.gluon", "mxnet.gluon.block", "mxnet.gluon.parameter",
          "mxnet.gluon.trainer", "mxnet.gluon.nn", "mxnet.gluon.rnn", "mxnet.gluon.loss", "mxnet.gluon.utils",
          "mxnet.gluon.contrib", "mxnet.gluon.contrib.cnn", "mxnet.gluon.contrib.nn", "mxnet.gluon.contrib.rnn",
          "mxnet.gluon.model_zoo", "mxnet.gluon.model_zoo.vision", "mxnet.gluon.model_zoo.model_store",
          "mxnet.gluon.data", "mxnet.gluon.data.vision", "mxnet.metric", "mxnet.optimizer", "mxnet.lr_scheduler",
          "mxnet.io", "mxnet.kvstore", "mxnet.profiler", "mxnet.contrib", "mxnet.contrib.amp", "mxnet.operator",
          "mxnet.test_utils", "mxnet.runtime", "mxnet.numpy", "mxnet.numpy.random", "mxnet.numpy.linalg",
          "mxnet.numpy_extension", "mxnet.gluon.data.vision.transforms", "mxnet.image", "mxnet.recordio",
          "mxnet.ndarray.image", "mxnet.ndarray.ndarray", "mxnet.numpy_op_signature", "mxnet.module", "mxnet.model",
          "mxnet.callback")


FOREIGN = set(sys.stdlib_module_names) | {"numpy", "requests", "graphviz", "scipy", "onnx"}


def _ours(value):
    """Defined by MXNet (its generated ops say ``ndarray``/``symbol`` as their module), not imported from
    the standard library or numpy."""
    if isinstance(value, types.ModuleType):
        return value.__name__.startswith("mxnet")
    module = getattr(value, "__module__", None)
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)) or not isinstance(module, str):
        return True
    return module.split(".")[0] not in FOREIGN


def probe():
    import mxnet

    modules = ["mxnet"] + [m.name for m in pkgutil.walk_packages(mxnet.__path__, "mxnet.")
                           if not any(p.startswith("_") for p in m.name.split(".")[1:])
                           and m.name != "mxnet.libmxnet"]
    names = {}
    for path in SERVED:
        module = importlib.import_module(path)
        names[path] = tuple(sorted(k for k, v in vars(module).items() if not k.startswith("_") and _ours(v)))
    return tuple(sorted(modules)), names


if __name__ == "__main__":
    modules, names = probe()
    print('"""MXNet 1.9.1\'s public module paths and, for each module ast_hybrid.mxnet serves, its public names.\n\n'
          'Generated from MXNet 1.9.1 itself by ``tests/mxnet/mxnet_api_probe.py`` (checked by\n'
          '``tests/mxnet/test_api_names.py``); do not edit by hand.\n"""\n')
    print("MODULES = " + pprint.pformat(modules, width=116, compact=True) + "\n")
    print("NAMES = " + pprint.pformat(names, width=116, compact=True))
