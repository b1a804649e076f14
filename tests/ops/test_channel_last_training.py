"""A recorded call's forward run channel-last and differentiated (``channel_last(..., differentiable=True)``,
``gluon/programs.py``; an op-by-op tape's replayed forward, ``core/tape_program.py``): the same outputs and
gradients as the program as traced.

Generated programs are differentiated both ways; a hybridized network made of every layer whose derivative
is a rule of its own (ReLU and clip's ``custom_jvp``, max pooling's ``custom_vjp``, a user's
``autograd.Function``) and of the usual ones (BatchNorm, Dropout, overlapping average pooling, LeakyReLU,
concatenation, Dense) trains three steps, hybridized and op by op, with ``AST_HYBRID_CHANNEL_LAST`` on and
``=predict`` (training programs as traced) to the same parameters; the rules' answers at their edge cases (ReLU
at exactly 0, tied maxima in a pooling window) are the traced program's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ast_hybrid import autograd, gluon, nd
from ast_hybrid import mxnet as mx
from ast_hybrid.gluon import HybridBlock, nn
from ast_hybrid.ops import elemwise, max_pool
from ast_hybrid.xla import channel_last as CL
from ast_hybrid.xla import program

from test_channel_last import _program


def _grads(fn, args, layout):
    """Gradients of ``sum(fn(*args) * cotangent)`` with respect to every argument, ``fn`` as traced or
    interpreted channel-last for differentiation."""
    closed = jax.make_jaxpr(fn)(*args)

    def run(*a):
        return CL.channel_last(closed, a, differentiable=True)[0] if layout else fn(*a)

    out = jax.eval_shape(run, *args)
    cot = jnp.asarray(np.random.RandomState(3).randn(*out.shape).astype("f4"))
    return jax.jit(jax.grad(lambda *a: jnp.sum(run(*a) * cot), argnums=tuple(range(len(args)))))(*args)


@pytest.mark.parametrize("seed", range(12))
def test_a_generated_program_differentiates_to_the_same_gradients(seed):
    fn, params, x = _program(seed)
    args = [*params, x]
    for got, want in zip(_grads(fn, args, True), _grads(fn, args, False)):
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4,
                                   atol=2e-5 * float(np.abs(want).max() + 1))


def _conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))


def test_relu_at_exactly_zero_and_nan_keep_mxnets_gradient():
    # a zero kernel: every output of channel 0 is exactly 0, where MXNet's ReLU has gradient 0; a NaN bias
    # (channel 3) passes NaN on (elemwise._mx_relu's rule), also when run on the stored layout
    x = jnp.asarray(np.random.RandomState(0).randn(2, 3, 6, 6).astype("f4"))
    w = jnp.zeros((4, 3, 3, 3), jnp.float32).at[1:].set(0.5)

    def fn(x, w, b):
        return elemwise.mx_relu(_conv(x, w) + b.reshape(1, -1, 1, 1)) * 2.0

    args = [x, w, jnp.zeros((4,), jnp.float32).at[3].set(jnp.nan)]
    got, want = _grads(fn, args, True), _grads(fn, args, False)
    for g, v in zip(got, want):
        np.testing.assert_array_equal(np.isnan(np.asarray(g)), np.isnan(np.asarray(v)))
        np.testing.assert_allclose(np.nan_to_num(np.asarray(g)), np.nan_to_num(np.asarray(v)), rtol=1e-5, atol=1e-6)
    assert float(got[2][0]) == 0.0 and np.isnan(float(got[2][3]))


def test_tied_maxima_in_a_pooling_window_send_the_gradient_where_the_traced_program_does():
    # a constant kernel over a constant image: every window of the pool is a tie, MXNet's rule (the first
    # maximum in row-major order) decides, in the NHWC form as in the NCHW one
    x = jnp.ones((2, 3, 8, 8), jnp.float32)
    w = jnp.full((4, 3, 3, 3), 0.25, jnp.float32)

    def fn(x, w):
        return max_pool.max_pool_windows(_conv(x, w), (2, 2), (2, 2), ((0, 0), (0, 0)), True)

    closed = jax.make_jaxpr(fn)(x, w)
    assert "custom_vjp_call" in str(closed)
    # the forward values are exact (multiples of 0.25) whatever the convolution's order of sums, so the ties are
    # the same ties; a tie sent elsewhere moves a whole cotangent (the 3-channel stem is computed as im2col when
    # differentiated, whose sums of the random cotangent round in another order: 1e-7)
    for got, want in zip(_grads(fn, [x, w], True), _grads(fn, [x, w], False)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


class _Double(autograd.Function):
    """A user's Function: forward doubles, backward triples (a derivative only the rule knows)."""

    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 3


class _Net(HybridBlock):
    """Conv-BN-ReLU, max pool, conv, clip, LeakyReLU beside a Function, overlapping average pool, Dropout, Dense."""

    def __init__(self, function=True, **kw):
        super().__init__(**kw)
        self.function = function
        with self.name_scope():
            self.c1, self.bn, self.pool = nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.MaxPool2D(2)
            self.c2, self.avg = nn.Conv2D(8, 3, padding=1), nn.AvgPool2D(3, 2, padding=1)
            self.leaky, self.drop, self.out = nn.LeakyReLU(0.1), nn.Dropout(0.3), nn.Dense(5)

    def hybrid_forward(self, F, x):
        h = self.pool(F.relu(self.bn(self.c1(x))))
        h = F.clip(self.c2(h), 0, 6)
        h = F.concat(self.leaky(h), _Double()(h) if self.function else h * 2, dim=1)
        return self.out(self.drop(self.avg(h)))


def _trained(monkeypatch, layout, hybridize=True):
    monkeypatch.setenv(program.ENV_SWITCH, layout)
    mx.random.seed(7)
    net = _Net(function=hybridize)     # a tape holding a Function is not compiled: pulled back op by op
    net.initialize()
    x = nd.array(np.random.RandomState(1).randn(4, 3, 12, 12).astype("f4"))
    y = nd.array(np.arange(4) % 5)
    if hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    losses = []
    for _ in range(3):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(4)
        losses.append(loss.asnumpy())
    return losses, {k[len(net.prefix):]: p.data().asnumpy() for k, p in net.collect_params().items()}


@pytest.mark.parametrize("hybridize", [True, False], ids=["hybridized", "op-by-op-tape"])
def test_a_network_trains_to_the_same_parameters_with_its_training_programs_channel_last(monkeypatch, hybridize):
    # hybridized: the recorded call's program; op by op: the tape's compiled backward (core/tape_program.py,
    # whose replayed forward the xla room rewrites), from the second backward on
    from ast_hybrid.core import tape_program

    rewrite, calls = tape_program.REWRITE.forward, []
    assert rewrite is not None
    monkeypatch.setattr(tape_program.REWRITE, "forward", lambda fn, *a: calls.append(1) or rewrite(fn, *a))
    got_losses, got = _trained(monkeypatch, "1", hybridize)
    assert calls or hybridize               # op by op, the tape's compiled backward was rewritten
    want_losses, want = _trained(monkeypatch, "predict", hybridize)
    np.testing.assert_allclose(np.stack(got_losses), np.stack(want_losses), rtol=1e-4, atol=1e-5)
    assert got.keys() == want.keys()
    for k in got:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_functional_apply_runs_channel_last_with_the_same_values_and_gradients(monkeypatch):
    # functional(net)'s apply_fn under the user's own jax.jit and jax.grad (an optax loop's shape)
    from ast_hybrid import functional

    mx.random.seed(3)
    net = _Net(function=False)
    net.initialize()
    x = np.random.RandomState(2).randn(4, 3, 12, 12).astype("f4")
    apply_fn, params = functional(net, nd.array(x))
    monkeypatch.setenv("AST_HYBRID_ONEDNN", "off")       # XLA's convolutions, channel-last (tests/ops/test_onednn.py)

    def loss(p, xb, key):
        out, aux = apply_fn(p, xb, training=True, key=key)
        return jnp.sum(out ** 2), aux

    results = {}
    for layout in ("1", "predict"):
        monkeypatch.setenv(program.ENV_SWITCH, layout)
        step = jax.jit(jax.value_and_grad(loss, has_aux=True))     # traced anew: the setting is read when tracing
        (value, aux), grads = step(params, jnp.asarray(x), jax.random.PRNGKey(0))
        results[layout] = (value, aux, grads, jax.make_jaxpr(lambda p: apply_fn(p, jnp.asarray(x)))(params))
    (v1, a1, g1, j1), (v0, a0, g0, j0) = results["1"], results["predict"]
    np.testing.assert_allclose(float(v1), float(v0), rtol=1e-5)
    for tree1, tree0 in ((a1, a0), (g1, g0)):
        assert tree1.keys() == tree0.keys()
        for k in tree1:
            np.testing.assert_allclose(np.asarray(tree1[k]), np.asarray(tree0[k]), rtol=1e-4, atol=1e-5, err_msg=k)
    # channel-last: the convolutions take NHWC operands (the as-traced program's take NCHW)
    assert "lhs_spec=(0, 3, 1, 2)" in str(j1) and "lhs_spec=(0, 3, 1, 2)" not in str(j0)
    # with oneDNN, its convolutions (channel-last too), the same values
    monkeypatch.setenv(program.ENV_SWITCH, "1")
    monkeypatch.setenv("AST_HYBRID_ONEDNN", "on")
    (value, _), _ = jax.jit(jax.value_and_grad(loss, has_aux=True))(params, jnp.asarray(x), jax.random.PRNGKey(0))
    np.testing.assert_allclose(float(value), float(v0), rtol=1e-5)
    assert "onednn_conv_forward" in str(jax.make_jaxpr(lambda p: apply_fn(p, jnp.asarray(x)))(params))


@pytest.mark.parametrize("shape, kernel, thin", [((64, 3, 32, 32), (32, 3, 3, 3), True),
                                                 ((64, 1, 28, 28), (6, 1, 5, 5), True),
                                                 ((16, 3, 64, 64), (64, 3, 3, 3), False),
                                                 ((16, 3, 224, 224), (64, 3, 7, 7), False),
                                                 ((64, 32, 16, 16), (64, 32, 3, 3), False)])
def test_thin_stems_of_a_program_to_differentiate_are_computed_as_im2col(shape, kernel, thin):
    # 3 -> 32 channels at b64 32x32: im2col 3x faster forward and weight gradient (bench/HISTORY.md, session 53)
    x, w = jnp.zeros(shape, jnp.float32), jnp.zeros(kernel, jnp.float32)
    pad = ((kernel[2] // 2,) * 2,) * 2
    closed = jax.make_jaxpr(lambda x, w: jax.lax.conv_general_dilated(
        x, w, (1, 1), pad, dimension_numbers=("NCHW", "OIHW", "NCHW")))(x, w)
    assert CL._thin_stem(closed.jaxpr.eqns[0]) is thin
    traced = jax.make_jaxpr(lambda x, w: CL.channel_last(closed, [x, w], differentiable=True))(x, w)
    assert ("conv_general_dilated" not in str(traced)) is thin
