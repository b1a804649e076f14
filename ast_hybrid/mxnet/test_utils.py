"""``mxnet.test_utils``: what MXNet 1.9.1's own unit tests and its users' test suites import from it.

The comparisons (``assert_almost_equal`` with MXNet's per-dtype default tolerances and its report of the
largest violations, ``almost_equal``, ``same``, ``assert_allclose``...), the random inputs (``rand_ndarray``,
``random_arrays``, ``rand_shape_*``), the default context and dtype, ``environment``, ``retry``,
``check_gluon_hybridize_consistency`` and the matrix generators, as MXNet's behave (read from
``python/mxnet/test_utils.py`` at 1.9.1); the checks that drive MXNet's executors (``check_numeric_gradient``,
``check_symbolic_forward``/``backward``, ``check_consistency``, ``simple_forward``...) are
``_symbolic_checks.py``'s, the random sparse arrays ``_sparse_utils.py``'s.
"""

from __future__ import annotations

import contextlib
import errno  # noqa: F401  (this and the names below: what MXNet's module has, so `import *` gives them)
import json  # noqa: F401
import logging  # noqa: F401
import numbers
import os
import platform
import struct  # noqa: F401
import sys
import time  # noqa: F401
import traceback  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager  # noqa: F401

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

import ast_hybrid.mxnet as mx  # noqa: F401  (MXNet's test files get `mx` from `from mxnet.test_utils import *`)
from ast_hybrid import autograd, nd
from ast_hybrid.core.context import Context, current_context, num_gpus  # noqa: F401
from ast_hybrid.core.context import set_default_context  # noqa: F401
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.mxnet.symbol import Symbol  # noqa: F401
from ast_hybrid.mxnet.util import getenv, setenv, use_np  # noqa: F401
from ast_hybrid.ops.creation import array  # noqa: F401

_FLOATS_RTOL = {np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-5}
_FLOATS_ATOL = {np.float16: 1e-1, np.float32: 1e-3, np.float64: 1e-20}
_EXACT = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def default_context():
    """The context tests run on: the current one."""
    return current_context()


def default_dtype():
    return np.float32


def default_rtols():
    """Relative tolerance per dtype (0 for the exact ones)."""
    return {**{np.dtype(t): v for t, v in _FLOATS_RTOL.items()}, **{np.dtype(t): 0 for t in _EXACT}}


def default_atols():
    """Absolute tolerance per dtype (0 for the exact ones)."""
    return {**{np.dtype(t): v for t, v in _FLOATS_ATOL.items()}, **{np.dtype(t): 0 for t in _EXACT}}


def default_numeric_eps():
    """The finite-difference step per float dtype (powers of two: no bits lost in ``x + eps``)."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype whose tolerance applies to ``dat`` (MXNet lowers float32 to float16 on TF32 GPUs; XLA's
    CPU and GPU matmuls here are full float32)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol):
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    return (tol or {}).get(dtype, default_tol[dtype])


def get_tols(x, y, rtol, atol):
    """The tolerances for comparing ``x`` and ``y``: the given ones, else the larger default of their dtypes."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return default_atols()[dtype] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return default_rtols()[dtype] if rtol is None else rtol


def get_etol(etol=None):
    return 0 if etol is None else etol


def random_arrays(*shapes):
    """Standard normal numpy arrays of the default dtype, one per shape (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None, **kwargs):
    if kwargs:
        raise TypeError("Got unexpected argument/s : " + str(kwargs.keys()))
    return [np.random.uniform(low, high, size=s).astype(dtype or default_dtype()) for s in shapes]


def random_sample(population, k):
    assert 0 <= k <= len(population)
    population = population[:]
    np.random.shuffle(population)
    return population[:k]


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None, shuffle_csr_indices=False,
                 distribution=None, ctx=None):
    """A dense NDArray of standard normal values, or a random sparse one (``rand_sparse_ndarray``)."""
    if stype != "default":
        return rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func, dtype=dtype,
                                   shuffle_csr_indices=shuffle_csr_indices, distribution=distribution,
                                   ctx=ctx or default_context())[0]
    return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx or default_context())


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    return tuple(rnd.randint(0 if allow_zero_size else 1, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    return np.random.randint(x_low, x_high, dtype=np.int64), np.random.randint(y_low, y_high, dtype=np.int64)


def same(a, b):
    return np.array_equal(a, b)


def checkShapes(a, b):
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg([a, b], err_msg=f"a.shape = {a.shape} and b.shape = {b.shape} "
                                                               "are not equal"))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    if not use_broadcast:
        checkShapes(a, b)
    return np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan)


def locationError(a, b, index, names, maxError=False):
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (maximum, str(index), names[0], a[index], names[1],
                                                           b[index])


def _find_max_violation(a, b, rtol, atol):
    absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
    violation = absdiff / (atol + rtol * np.abs(b) + 1e-20)
    index = tuple(int(i) for i in np.unravel_index(np.argmax(violation), violation.shape))   # (0, 1), as printed
    return index, np.max(violation)


def _host(x):
    return x.asnumpy() if isinstance(x, NDArray) else x


def _report(a, b, rtol, atol, names, equal_nan, mismatches):
    """MXNet's failure message: the largest violations, one by one, and the share of elements off."""
    index, rel = _find_max_violation(a, b, rtol, atol)
    if index == ():
        err = "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (rel, rtol, atol)
    else:
        first, first_rel = index, rel
        print(f"\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n")
        a_tmp, b_tmp, i = a.copy(), b.copy(), 1
        while i <= a.size:
            if i <= mismatches[0]:
                print("%3d: Error %f  %s" % (i, rel, locationError(a, b, index, names)))
            a_tmp[index] = b_tmp[index] = 0
            if almost_equal(a_tmp, b_tmp, rtol, atol, equal_nan=equal_nan):
                break
            i += 1
            if i <= mismatches[1] or mismatches[1] <= 0:
                index, rel = _find_max_violation(a_tmp, b_tmp, rtol, atol)
            else:
                break
        degree = "at least " if mismatches[1] > 0 and i > mismatches[1] else ""
        err = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
            first_rel, rtol, atol, degree, 100 * i / a.size, locationError(a, b, first, names, maxError=True))
    np.set_printoptions(threshold=4, suppress=True)
    return AssertionError(npt.build_err_msg([a, b], err_msg=err))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False, use_broadcast=True,
                        mismatches=(10, 10)):
    """``a`` and ``b`` (numpy arrays, NDArrays, numbers) equal within the tolerances (per dtype when not given);
    else an AssertionError listing the largest violations, as MXNet's."""
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _host(a), _host(b)
    if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    raise _report(np.asarray(a), np.asarray(b), rtol, atol, names, equal_nan, mismatches)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"), equal_nan=False,
                                 mismatches=(10, 10)):
    """At most a share ``etol`` of the elements off the tolerances (``etol`` 0: ``assert_almost_equal``)."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _host(a), _host(b)
    equals = np.isclose(a, b, rtol=rtol, atol=atol)
    if 1 - np.count_nonzero(equals) / equals.size > etol:
        raise _report(a, b, rtol, atol, names, equal_nan, mismatches)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    a, b = np.copy(_host(a)), np.copy(_host(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """``f(*args, **kwargs)`` raises ``exception_type`` (else an AssertionError)."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")


def retry(n):
    """Run a test up to ``n`` times while it fails an assertion."""
    assert n > 0

    def decorate(f):
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


def same_array(array1, array2):
    """Whether the two NDArrays are one array in memory: here never for two objects (slices are copies)."""
    if array1 is array2:
        return True
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


@contextlib.contextmanager
def discard_stderr():
    """Silence the process's file descriptor 2 (C libraries' messages included) inside the block."""
    with open(os.devnull, "w") as bucket:
        try:
            fileno = sys.stderr.fileno()
        except (AttributeError, ValueError, OSError):
            yield
            return
        old = os.dup(fileno)
        try:
            os.dup2(bucket.fileno(), fileno)
            yield
        finally:
            os.dup2(old, fileno)
            os.close(old)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


@contextlib.contextmanager
def environment(*args):
    """Environment variables set inside the block and restored after: ``environment(name, value)`` or
    ``environment({name: value, ...})`` (None unsets)."""
    if len(args) == 1 and isinstance(args[0], dict):
        variables = args[0]
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        variables = {args[0]: args[1]}

    def apply(values):
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    snapshot = {name: os.environ.get(name) for name in variables}
    apply(variables)
    try:
        yield
    finally:
        nd.waitall()
        apply(snapshot)


def collapse_sum_like(a, shape):
    """``a`` summed over the axes broadcasting added to ``shape`` (the gradient of a broadcast)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    extra = len(a.shape) - len(shape)
    axes = list(range(extra)) + [i + extra for i, s in enumerate(shape) if s != a.shape[i + extra]]
    assert all(shape[i - extra] == 1 for i in axes[extra:])
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def is_cd_run():
    return os.environ.get("CD_JOB", 0) == "1"


def is_aarch64_run():
    return platform.machine() == "aarch64"


def has_tvm_ops():
    return False


def is_op_runnable():
    return True


def list_gpus():
    return range(num_gpus())


@use_np
def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True, rtol=1e-4, atol=1e-4):
    """The block ``net_builder(prefix='net_')`` gives the same outputs (and input gradients) op by op and
    hybridized, with and without autograd, from one set of initial parameters; and ``numpy_func``'s if given.
    Under numpy semantics (``@use_np``, as MXNet's): ``data_l`` are ``mx.np`` arrays."""
    from ast_hybrid import init as _init

    class _Saved(_init.Initializer):
        def __init__(self, values):
            super().__init__()
            self._values = values

        def _init_weight(self, name, arr):
            arr[()] = self._values[name]

    saved_out, saved_grads, start = None, None, None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize(start)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if start is None:
                start = _Saved({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                if saved_grads is None:
                    saved_grads = [x.grad.asnumpy() for x in inputs]
                else:
                    for x, g in zip(inputs, saved_grads):
                        assert_almost_equal(x.grad.asnumpy(), g, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol)


def new_matrix_with_real_eigvals_2d(n):
    """A random ``n x n`` matrix with real eigenvalues in [-10, 10] (a well-conditioned similarity of a
    diagonal one)."""
    shape = (n, n)
    while True:
        diagonal = np.diag(np.random.uniform(-1.0, 1.0, n))
        v = np.random.uniform(-1.0, 1.0, n).reshape(n, 1)
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        q = np.matmul(np.eye(n).reshape(shape) - 2 * np.matmul(v, v.T), diagonal)
        if np.linalg.cond(q, 2) < 3:
            break
    return np.matmul(np.matmul(np.linalg.inv(q), np.diag(np.random.uniform(-10.0, 10.0, n))), q)


def new_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    q = new_orthonormal_matrix_2d(n)
    return np.matmul(np.matmul(q.T, np.diag(np.random.uniform(-10.0, 10.0, n))), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """``numpy_reduce_func`` applied axis by axis (the reference for MXNet's reductions)."""
    axis = [axis] if isinstance(axis, int) else list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default", rtol=1e-4, atol=1e-5,
                      compare_states=True, ntensors=1):
    """One update of ``opt1`` and ``opt2`` from the same random weight and gradient: the same states and
    weights (a list of shapes: ``opt2`` updates them together, ``opt1`` one by one)."""
    import copy

    from ast_hybrid.ops import random as _random

    if not isinstance(shape, list):
        assert ntensors == 1
        if w_stype == "default":
            w2 = _random.uniform(shape=shape, dtype=dtype)
            w1 = w2.copyto(default_context())
        else:       # sparse: opt2 gets it, opt1 its dense copy
            w2 = rand_ndarray(shape, w_stype, density=1, dtype=dtype)
            w1 = w2.copyto(default_context()).tostype("default")
        if g_stype == "default":
            g2 = _random.uniform(shape=shape, dtype=dtype)
            g1 = g2.copyto(default_context())
        else:
            g2 = rand_ndarray(shape, g_stype, dtype=dtype)
            g1 = g2.copyto(default_context()).tostype("default")
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(_random.uniform(shape=s, dtype=dtype) for s in shape)
    g1 = tuple(_random.uniform(shape=s, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` buckets of equal probability under the distribution whose inverse CDF is ``ppf``."""
    assert nbuckets > 0
    return ([(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)],
            [1.0 / nbuckets] * nbuckets)


def mean_check(generator, mu, sigma, nsamples=1000000):
    mean = np.array(generator(nsamples)).mean()
    return bool(mu - 3 * sigma / np.sqrt(nsamples) < mean < mu + 3 * sigma / np.sqrt(nsamples))


def var_check(generator, sigma, nsamples=1000000):
    var = np.array(generator(nsamples)).var(ddof=1)
    spread = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - spread < var < sigma ** 2 + spread)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``generator``'s samples against ``probs`` over ``buckets`` (intervals, or
    the discrete values): ``(p value, observed, expected)``."""
    import scipy.stats as stats

    assert isinstance(buckets, list) and len(probs) == len(buckets)
    samples = np.asarray(_host(generator(nsamples)))
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    observed = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.array([edge for bucket in buckets for edge in bucket], dtype=np.float32)
        ids = np.searchsorted(edges, samples, side="right") // 2
        for i in range(len(buckets)):
            observed[i] = (ids == i).sum()
    else:
        for i, value in enumerate(buckets):
            observed[i] = (samples == value).sum()
    _, p = stats.chisquare(f_obs=observed, f_exp=expected)
    return p, observed, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2, alpha=0.05):
    """``chi_square_check`` ``nrepeat`` times: at least ``success_rate`` of them with p above ``alpha``."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [r[0] for r in runs]
    if (np.array(p_values) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={p_values}, obs_freq={[r[1] for r in runs]}, "
                             f"expected_freq={[r[2] for r in runs]}.\nbuckets={buckets}, probs={probs}")
    return p_values


from ast_hybrid.mxnet._sparse_utils import (  # noqa: E402,F401
    assign_each, assign_each2, create_sparse_array, create_sparse_array_zd, rand_sparse_ndarray,
    shuffle_csr_column_indices)

# the checks that drive MXNet's executors (Symbol.bind/simple_bind), as MXNet's module writes them
from ast_hybrid.mxnet._symbolic_checks import (  # noqa: E402,F401
    check_consistency, check_numeric_gradient, check_speed, check_symbolic_backward, check_symbolic_forward,
    numeric_grad, simple_forward)

__getattr__ = module_getattr("mxnet.test_utils", __name__)
