"""Random ops: shapes and dtypes as MXNet 1.9.1 gives them (oracle), the distributions (moments), seeding,
and fresh randomness in every call of a compiled program."""

import numpy as np
import pytest
from ops_harness import check, mx_results

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import nn

ARR = {"lo": np.array([0.0, 10.0], "float32"), "hi": np.array([1.0, 20.0], "float32"),
       "probs": np.array([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]], "float32")}

SHAPES = [
    "nd.random.uniform()", "nd.random.uniform(shape=(2, 3))", "nd.random.uniform(-1, 1, shape=5, dtype='float16')",
    "nd.random.normal(shape=(4,))", "nd.random.normal(0, 2, shape=(2, 2), dtype='float16')",
    "nd.random.randn(2, 3)", "nd.random.randint(0, 5, shape=(3,))",
    "nd.random.randint(2, 9, shape=(2, 2), dtype='int32')",
    "nd.random.exponential(shape=(3,))", "nd.random.gamma(2, 1, shape=(3,))", "nd.random.poisson(3, shape=(4,))",
    "nd.random.uniform(lo, hi)", "nd.random.uniform(lo, hi, shape=(3,))", "nd.random.normal(lo, hi, shape=2)",
    "nd.random.multinomial(probs)", "nd.random.multinomial(probs, shape=(4,))",
    "nd.random.multinomial(probs, get_prob=True)", "nd.random.shuffle(nd.arange(6).reshape((3, 2)))",
    "nd.random.uniform_like(nd.zeros((2, 3)))", "nd.random.normal_like(nd.zeros((2,), dtype='float16'))",
    "nd.random_uniform(shape=(2,))", "nd.random_normal(shape=(2,))", "nd.uniform(shape=(2,))",
    "nd.normal(shape=(1, 2))",
    "nd.sample_multinomial(probs)", "nd.Dropout(nd.ones((3, 3)), p=0.5, mode='always')",
    # the raw operators' positional order (params, shape, ctx, dtype) and names
    "nd.random_normal(0, 1, (2, 3), 'cpu(0)', 'float16')", "nd.random_exponential(lam=4, shape=(3,))",
    "nd.random_uniform(0, 1, (2,), 'cpu(0)', 'float16')", "nd.random_randint(0, 5, (3,), 'cpu(0)', 'int32')",
    "nd.sample_multinomial(probs, (2,), False, 'int32')", "nd.random.normal_like(nd.zeros((2,)), 10, 0.5)",
    "nd.random.exponential_like(nd.zeros((3,)), 2)",
]
CASES = [(f"shape of {c}", f"r = {c}\nres = [np.array(o.shape) for o in (r if isinstance(r, list) else [r])] + "
          f"[np.array(str(o.dtype)) for o in (r if isinstance(r, list) else [r])]") for c in SHAPES]


@pytest.fixture(scope="module")
def ref(oracle):
    return mx_results(oracle, CASES, ARR)


@pytest.mark.oracle
@pytest.mark.parametrize("cid,code", CASES, ids=[c for c, _ in CASES])
def test_shapes_and_dtypes_match_mxnet(ref, cid, code):
    check(ref[cid], code, ARR)


def test_moments_of_the_distributions():
    nd.random.seed(1)
    u = nd.random.uniform(-1, 3, shape=(20000,)).asnumpy()
    assert u.min() >= -1 and u.max() < 3 and abs(u.mean() - 1) < 0.05
    n = nd.random.normal(2, 3, shape=(20000,)).asnumpy()
    assert abs(n.mean() - 2) < 0.1 and abs(n.std() - 3) < 0.1
    r = nd.random.randint(0, 4, shape=(20000,)).asnumpy()
    assert set(np.unique(r)) == {0, 1, 2, 3} and r.dtype == np.int32
    e = nd.random.exponential(2, shape=(20000,)).asnumpy()
    assert abs(e.mean() - 2) < 0.1
    e = nd.random_exponential(lam=4, shape=(20000,)).asnumpy()      # the raw op takes the rate
    assert abs(e.mean() - 0.25) < 0.01
    e = nd.random.exponential_like(nd.zeros((20000,)), lam=4).asnumpy()
    assert abs(e.mean() - 0.25) < 0.01
    n = nd.random.normal_like(nd.zeros((20000,)), 10, 0.5).asnumpy()
    assert abs(n.mean() - 10) < 0.05 and abs(n.std() - 0.5) < 0.05
    g = nd.random.gamma(2, 1.5, shape=(20000,)).asnumpy()
    assert abs(g.mean() - 3) < 0.1 and abs(g.var() - 4.5) < 0.3 and g.dtype == np.float32
    p = nd.random.poisson(3, shape=(20000,), dtype="float16").asnumpy()
    assert abs(p.mean() - 3) < 0.1 and (p == np.round(p)).all() and p.dtype == np.float16
    b = nd.random.negative_binomial(3, 0.4, shape=(20000,)).asnumpy()      # failures before 3 successes
    assert abs(b.mean() - 4.5) < 0.2 and abs(b.var() - 11.25) < 1.0
    big = nd.random.uniform(2, 4, shape=(1 << 20) + 7).asnumpy()          # drawn by XLA (past the host's size)
    assert big.min() >= 2 and big.max() < 4 and abs(big.mean() - 3) < 0.01
    m = nd.random.multinomial(nd.array([0.2, 0.8, 0.0]), shape=(20000,)).asnumpy()
    assert abs((m == 1).mean() - 0.8) < 0.02 and not (m == 2).any()
    per = nd.random.uniform(nd.array([0.0, 10.0]), nd.array([1.0, 20.0]), shape=(1000,)).asnumpy()
    assert per[0].max() < 1 and per[1].min() >= 10


def test_seed_makes_the_eager_stream_reproducible():
    nd.random.seed(7)
    a = nd.random.normal(shape=(5,)).asnumpy()
    nd.random.seed(7)
    b = nd.random.normal(shape=(5,)).asnumpy()
    c = nd.random.normal(shape=(5,)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


class Noisy(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        return x + F.random.normal(shape=(2, 3))


def test_random_op_in_a_compiled_predict_program_is_fresh_each_call():
    net = Noisy()
    net.hybridize()
    x = nd.zeros((2, 3))
    a, b = net(x).asnumpy(), net(x).asnumpy()
    assert not np.array_equal(a, b)
    nd.random.seed(3)
    c = net(x).asnumpy()
    nd.random.seed(3)
    np.testing.assert_array_equal(c, net(x).asnumpy())


def test_dropout_in_a_compiled_program_training_vs_predict():
    net = nn.Dropout(0.5)
    net.hybridize()
    x = nd.ones((50, 50))
    np.testing.assert_array_equal(net(x).asnumpy(), x.asnumpy())
    with autograd.record():
        a, b = net(x).asnumpy(), net(x).asnumpy()
    assert not np.array_equal(a, b) and set(np.unique(a)) <= {0.0, 2.0}
    with autograd.train_mode():
        c = net(x).asnumpy()
    assert 0.35 < (c == 0).mean() < 0.65


def test_seed_makes_initialisation_reproducible_and_is_reachable_as_ast_hybrid_random():
    import ast_hybrid

    weights = []
    for _ in range(2):
        ast_hybrid.random.seed(11)
        net = nn.Dense(4, in_units=3)
        net.initialize()
        weights.append(net.weight.data().asnumpy())
    np.testing.assert_array_equal(*weights)
    assert str(ast_hybrid.cpu()) == "cpu(0)" and str(ast_hybrid.gpu(1)) == "gpu(1)"
