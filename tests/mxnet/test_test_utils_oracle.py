"""``mxnet.test_utils`` (issue 30 item 3): a script using it as MXNet's unit tests and users' suites do, run by
MXNet 1.9.1 and under ``ast-hybrid run``, prints the same lines: default tolerances, the tolerance chosen
for two dtypes, random inputs from numpy's seeded generator, ``assert_almost_equal``'s report of a failure
(its message and the violations it prints), ``collapse_sum_like``, ``environment``, ``assert_exception``,
``retry``, ``check_gluon_hybridize_consistency`` on a Gluon block."""

from __future__ import annotations

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = """
import os
import numpy as np
import mxnet as mx
from mxnet import nd
from mxnet.gluon import nn
from mxnet.test_utils import (assert_almost_equal, almost_equal, same, get_tols, default_rtols, default_atols,
                              random_arrays, rand_ndarray, rand_shape_2d, rand_shape_nd, collapse_sum_like,
                              environment, assert_exception, retry, check_gluon_hybridize_consistency,
                              default_context, set_default_context, assert_almost_equal_ignore_nan,
                              assert_almost_equal_with_err, new_sym_matrix_with_real_eigvals_2d)
print(sorted((str(k), v) for k, v in default_rtols().items()))
print(sorted((str(k), v) for k, v in default_atols().items()))
print(get_tols(np.zeros(2, 'float16'), np.zeros(2, 'float32'), None, None), get_tols(1.0, 2, 0.5, None))
np.random.seed(3)
print(np.round(random_arrays((2, 3)), 5).tolist(), rand_shape_2d(), [int(v) for v in rand_shape_nd(4)])
print(np.round(rand_ndarray((2, 2)).asnumpy(), 5).tolist(), default_context())
a = nd.array([[1.0, 2.0], [3.0, 4.0]])
assert_almost_equal(a, a.asnumpy() + 1e-5)
print(almost_equal(np.ones(3), np.ones(3) * 1.001, rtol=1e-2), same(np.ones(2), np.ones(2)))
try:
    assert_almost_equal(a, np.array([[1.0, 2.5], [3.0, 4.4]]), names=('ours', 'ref'))
except AssertionError as e:
    print('failed:', str(e).splitlines()[1])
assert_almost_equal_ignore_nan(np.array([1.0, np.nan]), np.array([1.0, 5.0]))
assert_almost_equal_with_err(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 9.0]), etol=0.3)
print(collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).tolist())
with environment('AH_TEST_UTILS_VAR', '7'):
    print(os.environ.get('AH_TEST_UTILS_VAR'))
print(os.environ.get('AH_TEST_UTILS_VAR'))
assert_exception(lambda: 1 / 0, ZeroDivisionError)
calls = []
@retry(3)
def flaky():
    calls.append(1)
    assert len(calls) >= 2
flaky()
print(len(calls))
def build(prefix):
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Dense(4, activation='tanh', in_units=3), nn.Dense(2, in_units=4))
    return net
check_gluon_hybridize_consistency(build, [mx.np.array(np.random.uniform(-1, 1, (5, 3)).astype('float32'))])
m = new_sym_matrix_with_real_eigvals_2d(3)
print(np.allclose(m, m.T), m.shape)
set_default_context(mx.cpu(0))
print(default_context())
"""


def test_test_utils_behaves_as_mxnets(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert ours == theirs
