"""``ast_hybrid.autograd``: MXNet's ``mx.autograd``: recording and training mode (per thread), ``backward``,
``grad``, and ``Function`` (custom gradients).

The state and the tape live in ``ast_hybrid/core/autograd.py`` (its docstring says how gradients are taken);
``Function`` in ``ast_hybrid/ops/function.py``, on the lowering custom operators share.  This module is the
public name both had before the front was layered.

    >>> from ast_hybrid import nd, autograd
    >>> x = nd.array([1., 2., 3.])
    >>> x.attach_grad()
    >>> with autograd.record():
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad.asnumpy().tolist()
    [2.0, 4.0, 6.0]
"""

from ast_hybrid.core.autograd import (backward, get_symbol, grad, is_recording, is_training, mark_variables,
                                      pause, predict_mode, record, set_recording, set_training, train_mode)
from array import array  # noqa: F401  (MXNet's module imports the standard library's, and star-exports it)

from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops.function import Function

# and what MXNet's module imports and so gives to `from mxnet.autograd import *` (it has no __all__): the
# NDArray type, the standard library's array; its ctypes internals are not here
__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training", "set_recording",
           "set_training", "mark_variables", "backward", "grad", "get_symbol", "Function", "NDArray", "array"]
