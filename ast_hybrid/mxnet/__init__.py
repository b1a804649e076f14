"""``ast_hybrid.mxnet``: MXNet 1.9.1's module paths over ast-hybrid, so that MXNet scripts run unchanged.

``ast-hybrid run script.py`` (or ``python -m ast_hybrid.run script.py``, or :func:`install` from Python)
makes ``import mxnet`` this package; ``mxnet.X.Y`` is then whatever this package serves as ``X.Y``.
Where ast-hybrid has the thing, it is re-exported, not wrapped: ``mxnet.nd`` and ``mxnet.ndarray`` are
the module ``ast_hybrid.nd`` itself (so ``F is nd`` and ``F == nd`` hold as in MXNet), ``mxnet.autograd``
is ``ast_hybrid.autograd``, ``mxnet.random`` is ``ast_hybrid.random``, ``mxnet.gluon.nn`` is
``ast_hybrid.gluon.nn``...  This package adds what MXNet has around them: ``base``, ``context``, ``util``,
``symbol`` (``Symbol``, ``Group``), ``initializer.register``, ``gluon.utils``, ``gluon.model_zoo.model_store``,
``operator``.  A name or module MXNet 1.9.1 has and ast-hybrid does not is an error naming the MXNet API
(``_missing``), never a bare ``AttributeError``.

May import: MXNet's twins at the package root (``nd``, ``ndarray``, ``sym``, ``autograd``, ``init``), the
Gluon front (``ast_hybrid.gluon``), the ops, numpy and jax.  Never the linter, the CLI or ``testing``.
"""

from ast_hybrid import autograd, mxnp, nd
from ast_hybrid.mxnet import _missing, base, context, contrib, gluon, image, initializer, operator, symbol, util
from ast_hybrid.mxnet import _nd_image, io, kvstore, lr_scheduler, metric, name, optimizer, profiler, recordio, \
    registry
from ast_hybrid.mxnet import test_utils  # noqa: E402,F401  (MXNet's package imports it: mx.test_utils works)
from ast_hybrid.mxnet import _ndarray_module, numpy_op_signature, runtime  # noqa: E402,F401
from ast_hybrid.symbol import executor as _executor  # noqa: E402
from ast_hybrid.mxnet import callback, model, module, onnx, rnn  # noqa: E402,F401
from ast_hybrid.mxnet._activate import install, installed, uninstall  # noqa: F401
from ast_hybrid.mxnet.base import MXNetError  # noqa: F401
from ast_hybrid.mxnet.context import Context, cpu, cpu_pinned, current_context, gpu  # noqa: F401
from ast_hybrid.mxnet.util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape,  # noqa: F401
                                   use_np, use_np_array, use_np_shape)
from ast_hybrid.ops import random

__version__ = base.__version__

ndarray = nd
sym = symbol
init = initializer
rnd = random
kv = kvstore
mod = module
img = image
numpy = np = mxnp                           # MXNet 1.9's numpy interface (ast_hybrid/mxnp)
numpy_extension = npx = mxnp.extension

_missing.serve(__name__, {
    "nd": (nd, "mxnet.ndarray"), "ndarray": (nd, "mxnet.ndarray"), "autograd": (autograd, "mxnet.autograd"),
    "random": (random, "mxnet.random"), "numpy": (mxnp, "mxnet.numpy"), "np": (mxnp, "mxnet.numpy"),
    "numpy_extension": (mxnp.extension, "mxnet.numpy_extension"), "npx": (mxnp.extension, "mxnet.numpy_extension")})
_missing.serve(f"{__name__}.numpy", {"random": (mxnp.random, "mxnet.numpy.random"),
                                     "linalg": (mxnp.linalg, "mxnet.numpy.linalg")})
_missing.serve(f"{__name__}.numpy_extension", {"random": (mxnp.npx_random, "mxnet.numpy_extension.random")})
# mx.nd.image: MXNet's image operators (GluonCV's transforms call them), put on ast_hybrid.nd here
nd.image = _nd_image
nd.CachedOp = _executor.CachedOp                    # mx.nd.CachedOp: a graph called on NDArrays
nd.ndarray = _ndarray_module                        # mx.nd.ndarray, mx.nd.numpy: MXNet's submodules of mx.nd
nd.numpy, nd.numpy_extension = mxnp, mxnp.extension
_missing.serve(f"{__name__}.ndarray", {
    "contrib": (nd.contrib, "mxnet.ndarray.contrib"), "linalg": (nd.linalg, "mxnet.ndarray.linalg"),
    "sparse": (nd.sparse, "mxnet.ndarray.sparse"), "image": (_nd_image, "mxnet.ndarray.image"),
    "ndarray": (_ndarray_module, "mxnet.ndarray.ndarray"), "numpy": (mxnp, "mxnet.ndarray.numpy"),
    "numpy_extension": (mxnp.extension, "mxnet.ndarray.numpy_extension")})

__getattr__ = _missing.module_getattr("mxnet", __name__)
