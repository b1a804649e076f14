"""An op declared with ``compile_arrays`` runs eagerly as one program of its own, compiled with XLA's options
for one-op programs (``ops._core._eager_compiler_options``: on CPU the loop emitter, about two thirds of the
fusion emitters' compile time); inside a trace it is inlined in the traced program, whether its arguments are
tracers or constants (JAX refuses compiler options on a nested program), with the same values."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.ops import _core

X = np.random.RandomState(0).standard_normal((2, 3, 5, 5)).astype("float32")
W = np.random.RandomState(1).standard_normal((4, 3, 3, 3)).astype("float32")
GAMMA = np.random.RandomState(2).uniform(0.5, 1.5, 3).astype("float32")


def _ops(x, w, g):
    conv = nd.Convolution(x, w, no_bias=True, kernel=(3, 3), num_filter=4, pad=(1, 1))
    act = nd.Activation(conv, act_type="softrelu")
    fc = nd.FullyConnected(act, nd.ones((2, 100)), num_hidden=2, no_bias=True)
    bn = nd.BatchNorm(x, g, g * 0, g * 0, g, fix_gamma=False)
    return [o._arr if hasattr(o, "_arr") else o for o in (conv, act, fc, bn)]


def test_eager_traced_and_constant_folded_calls_agree():
    eager = [np.asarray(v) for v in _ops(nd.array(X), nd.array(W), nd.array(GAMMA))]
    traced = jax.jit(lambda x, w, g: _ops(nd.NDArray(x), nd.NDArray(w), nd.NDArray(g)))(X, W, GAMMA)
    constants = jax.jit(lambda: _ops(nd.array(X), nd.array(W), nd.array(GAMMA)))()     # no tracer argument
    for e, t, c in zip(eager, traced, constants):
        np.testing.assert_allclose(np.asarray(t), e, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(np.asarray(c), e, rtol=2e-5, atol=2e-6)


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the option is XLA:CPU's; other platforms get none")
def test_the_eager_program_is_compiled_with_the_loop_emitter():
    assert _core._eager_compiler_options() == {"xla_cpu_use_fusion_emitters": False}
    f = jax.jit(lambda x: jnp.tanh(x) * 2 + 1, compiler_options=_core._eager_compiler_options())
    np.testing.assert_allclose(np.asarray(f(X)), np.tanh(X) * 2 + 1, rtol=1e-6)


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="small eager draws come from the host on CPUs only")
def test_a_random_draw_of_a_new_shape_compiles_nothing_and_reset_arrays_nothing():
    """MXNet's test_zero_grad draws ~1000 arrays of random shapes and zeroes them with reset_arrays: a draw was
    ~8 programs per new shape (each step of the sampler its own), then one (0.1-0.7 s each: 400 s for the
    test, against MXNet's 0.1 s); now a small eager draw on a CPU compiles nothing (NumPy's generator on
    the eager stream), a large one one program per shape; reset_arrays none."""
    from jax import monitoring

    from ast_hybrid import nd

    count = [0]

    def listen(event, secs, **kw):
        count[0] += event == "/jax/core/compile/backend_compile_duration"

    monitoring.register_event_duration_secs_listener(listen)
    try:
        nd.random.uniform(shape=(2, 2))                     # the key's fold-in, compiled once for all
        shapes = [(3, 7, 2), (5, 1, 9, 2), (6,)]
        before = count[0]
        arrays = [nd.random.uniform(shape=s, dtype=d) for s, d in zip(shapes, ("float16", "float32", "float32"))]
        assert count[0] == before
        nd.random.normal(shape=(1 << 20) + 3)               # past random._HOST_MAX: XLA's draw (and fold-in)
        before = count[0]
        big = nd.random.normal(shape=(1 << 20) + 1)         # a new shape: one program
        assert count[0] - before == 1 and big.shape == ((1 << 20) + 1,)
        before = count[0]
        nd.reset_arrays(*arrays, num_arrays=len(arrays))
        assert count[0] == before
        assert all(a.shape == s and not a.asnumpy().any() for a, s in zip(arrays, shapes))
        assert arrays[0].dtype == np.float16
    finally:
        monitoring.unregister_event_duration_listener(listen)


def test_group_norm_of_a_constant_input_is_exactly_zero_eagerly_as_in_mxnet():
    """MXNet's test_groupnorm compares op by op with hybridized at atol 1e-6: XLA's division by the count as a
    multiplication by its reciprocal, fused with ``x - mean`` into one multiply-add, left 1.5e-5 (a rounding
    error times 1/sqrt(eps)) where MXNet has 0; the mean now divides (normalization._group_mean)."""
    from ast_hybrid import autograd, nd

    x = nd.ones((2, 10, 10, 10)) * 3
    x.attach_grad()
    gamma, beta = nd.array([1.0, 2.0]), nd.array([0.5, 0.0])
    with autograd.record():
        y = nd.GroupNorm(x, gamma, beta, num_groups=2)
    y.backward()
    expected = np.broadcast_to(np.array([0.5, 0.0]).reshape(1, 2, 1), (2, 2, 500)).reshape(2, 10, 10, 10)
    assert (y.asnumpy() == expected).all() and not x.grad.asnumpy().any()


def test_an_op_met_with_ever_new_options_keeps_a_bounded_number_of_programs(monkeypatch):
    monkeypatch.setattr(_core, "EAGER_PROGRAMS", 8)
    x, lengths = nd.array(X[:, :, 0, :]), nd.array([1, 2, 3])
    programs = nd.SequenceMask.eager.programs
    for i in range(20):         # a new float option each call: a program each
        got = nd.SequenceMask(x, lengths, use_sequence_length=True, value=float(i))
        np.testing.assert_allclose(got.asnumpy()[2:, 0], i)
        assert len(programs) <= 8


def test_a_scalar_operand_is_kept_op_by_op_and_made_fresh_inside_a_trace():
    """``scalar_like(v, dtype, like=x)``: op by op (``x`` concrete) the same array each call (its device transfer
    was 9% of an op-by-op training step); inside a trace a constant of that trace, never a tracer kept."""
    from ast_hybrid.ops._core import scalar_like

    x = jnp.ones(3)
    assert scalar_like(6.0, np.float32, like=x) is scalar_like(6.0, np.float32, like=x)
    assert scalar_like(2.5, np.int32, like=x) == 2 and scalar_like(True, np.float32, like=x) == 1
    traced = jax.jit(lambda a: nd.clip(nd.NDArray(a), 0.5, 2.5)._arr)(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(traced), [0.5, 1.0, 2.0, 2.5])
    after = scalar_like(0.5, np.float32, like=x)
    assert not isinstance(after, jax.core.Tracer) and float(after) == 0.5


def test_the_running_statistics_update_rounds_as_op_by_op():
    """BatchNorm's running mean/var update as one program gives the bits of its ops one by one (no fused
    multiply-add)."""
    from ast_hybrid.ops.normalization import running_update

    rs = np.random.RandomState(3)
    value, batch = jnp.asarray(rs.rand(4096).astype("f4")), jnp.asarray(rs.rand(4096).astype("f4") * 3)
    for momentum in (0.9, 0.99, 0.1, 0.123456789):
        eager = (value * momentum + batch * (1 - momentum)).astype(value.dtype)
        np.testing.assert_array_equal(np.asarray(running_update(value, batch, momentum, 1 - momentum)),
                                      np.asarray(eager))
