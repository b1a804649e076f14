"""``from ast_hybrid import nd``: MXNet's ``mx.nd`` and the ``F`` every ``hybrid_forward`` receives.

It is the op namespace (``ast_hybrid.ops``: every op at top level, plus the
``contrib``, ``linalg`` and ``random`` sub-namespaces) and the imperative side:
``NDArray``, ``array``, ``zeros``/``ones``/``full``/``empty``/``arange``/
``linspace``/``eye``, ``waitall``, ``save``/``load`` (MXNet's binary format),
``cpu``/``gpu``.  The same functions run eagerly and inside a hybridized
program, so ``F`` is this module in both modes.

    >>> from ast_hybrid import nd
    >>> nd.random.seed(0)
    >>> x = nd.random.normal(shape=(2, 3))
    >>> nd.relu(x).shape, x.dtype
    ((2, 3), <class 'numpy.float32'>)
"""

from ast_hybrid import xla as _xla  # noqa: F401  (malloc for XLA's threads, set when jax makes its CPU client)
from ast_hybrid.core.context import Context, cpu, current_context, gpu  # noqa: F401
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.core.npmode import MODE as NP_MODE
from ast_hybrid.ops import *  # noqa: F401,F403
from ast_hybrid.ops import _internal, contrib, linalg, random, sparse  # noqa: F401
from ast_hybrid import mxnp as np  # noqa: E402  (F.np in a hybrid_forward: MXNet's mx.nd.numpy)
npx = np.extension       # F.npx: mx.npx


def waitall():
    """Block until every pending computation is done (jax: a no-op beyond ``block_until_ready``)."""
    import jax

    jax.effects_barrier()


def save(fname, data):
    """Write NDArrays (one, a list, or a dict name -> NDArray) in MXNet's ``.params``/``nd.save`` format."""
    from ast_hybrid.io import params_file as params_io

    if isinstance(data, NDArray):
        data = [data]
    params_io.save(fname, data, np_shape=NP_MODE.shape)     # MXNet: V3 records under numpy shape semantics


def load(fname):
    """NDArrays from an MXNet ``nd.save`` file: a dict if it has names, else a list."""
    from ast_hybrid.io import params_file as params_io

    loaded = params_io.load(fname, np_shape=NP_MODE.shape)     # (MXNet's check of the shape semantics)
    if isinstance(loaded, dict):
        return {k: array(v, dtype=v.dtype) for k, v in loaded.items()}  # noqa: F405
    return [array(v, dtype=v.dtype) for v in loaded]  # noqa: F405


def load_frombuffer(buf):
    from ast_hybrid.io import params_file as params_io

    loaded = params_io.loads(bytes(buf), np_shape=NP_MODE.shape)
    if isinstance(loaded, dict):
        return {k: array(v, dtype=v.dtype) for k, v in loaded.items()}  # noqa: F405
    return [array(v, dtype=v.dtype) for v in loaded]  # noqa: F405


def _getstate(self):
    """MXNet's pickled state: ``{'handle': the array in MXNet's raw format}``."""
    from ast_hybrid.io import params_file as params_io

    return {"handle": bytearray(params_io.dumps_one(self.asnumpy()))}


def _setstate(self, state):
    """The array of MXNet's pickled state (``__getstate__``'s, MXNet's own: a GPU array's too, loaded here)."""
    import jax.numpy as jnp
    import numpy

    from ast_hybrid.io import params_file as params_io

    value = params_io.loads_one(state["handle"], "a pickled NDArray")
    self._arr = jnp.asarray(value if value is not None else numpy.zeros((0,), "float32"))
    self._ag = None


NDArray.__getstate__, NDArray.__setstate__ = _getstate, _setstate
