"""Modules MXNet's own unit tests and users' code import besides the API proper (issue 30): ``mxnet.runtime``
(``Features``), ``mxnet.ndarray.ndarray`` (``py_slice``, the storage-type ids), ``mxnet.numpy_op_signature``,
``mx.nd.numpy``, ``mx.util``'s numpy switches and ``@use_np`` on a class; NDArray's shape methods with
``inplace=`` and ``Context.default_ctx`` (what MXNet's test_ndarray and test_gluon_rnn use).  Run by MXNet 1.9.1 and under
``ast-hybrid run``: the same lines (MKLDNN/OpenMP/OpenCV and the CPU's SSE4+/AVX flags, which describe MXNet's
own build, are left out)."""

from __future__ import annotations

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = """
import mxnet as mx
from mxnet import runtime, util
from mxnet.gluon import nn
from mxnet.ndarray.ndarray import py_slice, _STORAGE_TYPE_STR_TO_ID
from mxnet.numpy_op_signature import _get_builtin_op

features = runtime.Features()
print([k for k in features.keys() if k != 'MKLDNN'])   # (run_both drops lines naming MKLDNN)
build = {'MKLDNN', 'OPENMP', 'OPENCV', 'BLAS_OPEN', 'SIGNAL_HANDLER', 'CXX14', 'CPU_SSE4_1', 'CPU_SSE4_2', 'CPU_AVX',
         'CPU_AVX2', 'F16C', 'SSE'}
print([(f.name, f.enabled) for f in runtime.feature_list() if f.name not in build])
print(features.is_enabled('int64_tensor_size'), features.is_enabled('CUDA'))
try:
    features.is_enabled('NO_SUCH')
except RuntimeError as e:
    print('unknown feature', type(e).__name__)
print(py_slice is slice, sorted(_STORAGE_TYPE_STR_TO_ID.items()))
print(_get_builtin_op('_np_sum').__name__, _get_builtin_op('_npx_relu').__name__,
      _get_builtin_op('_np_dot').__name__, _get_builtin_op('sum'))
print(hasattr(mx, 'numpy'), hasattr(mx.nd, 'numpy'), mx.nd.numpy is not None, util.is_np_array())


@util.use_np
class Twice(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        return x * 2


net = Twice()
net.initialize()
y = net(mx.np.ones((2,)))
print(type(y).__name__, y.tolist(), util.is_np_array())
with util.np_array(True):
    print(util.is_np_array())
print(util.is_np_array(), util.set_np_shape(False))
x = mx.nd.ones((2, 1, 3))
print(x.flatten(inplace=True).shape, x.squeeze(inplace=True).shape, x.expand_dims(0, inplace=True).shape)
print(mx.Context.default_ctx, mx.context.Context.default_ctx)
"""


def test_the_modules_tests_import(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
