"""xla/hoist.py: what a predict program computes from its parameters alone is computed once, apart.

Programs are split, their two parts run one after the other and compared with the program as written
(the same operations on the same numbers, to float32's last bits as XLA fuses them); what moves and what stays is checked on the cases
the rules are for (BatchNorm's scale, a bias broadcast to the activation's shape, a kernel reshaped for a
GEMM, control flow, random numbers); and a hybridized network with BatchNorm gives the same values with the
split on and off, and after its parameters change, with no ``rsqrt`` left in its compiled program."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from ast_hybrid import nd
from ast_hybrid.gluon import HybridBlock, finish_tuning, nn
from ast_hybrid.xla import hoist
from ast_hybrid.xla import program
from ast_hybrid.xla import tuning


def _split(fn, params, xs):
    closed = jax.make_jaxpr(fn)(*params, *xs)
    cut = hoist.split(hoist.inline(closed), len(params))
    computed = cut.prepare(list(params))
    res = [params[i] if kind == "param" else computed[i] for kind, i in cut.sources]
    got = jax.jit(lambda *a: jax.core.eval_jaxpr(cut.main.jaxpr, cut.main.consts, *a))(*res, *xs)
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*params, *xs))
    for g, w in zip(got, want):     # XLA fuses the two programs apart: equal to float32's last bits
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=1e-6)
    return cut


def _names(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def _bn(gamma, beta, mean, var, w, x):
    y = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
    s = gamma * lax.rsqrt(var + 1e-5)
    t = beta - mean * s
    return jnp.maximum(y * s.reshape(1, -1, 1, 1) + t.reshape(1, -1, 1, 1), 0.0)


def _bn_args():
    r = np.random.RandomState(0)
    params = [jnp.asarray(r.rand(4).astype("f4") + 0.5), jnp.asarray(r.randn(4).astype("f4")),
              jnp.asarray(r.randn(4).astype("f4")), jnp.asarray(r.rand(4).astype("f4") + 0.1),
              jnp.asarray(r.randn(4, 3, 3, 3).astype("f4"))]
    return params, [jnp.asarray(r.randn(2, 3, 8, 8).astype("f4"))]


def test_batchnorm_scale_and_shift_move_out_and_the_kernel_stays_a_parameter():
    params, xs = _bn_args()
    cut = _split(_bn, params, xs)
    names = _names(cut.main)
    assert "rsqrt" not in names and "conv_general_dilated" in names
    assert sorted(k for k, _ in cut.sources) == ["computed", "computed", "param"]
    assert ("param", 4) in cut.sources       # the kernel, as it is
    assert cut.hoisted == 5                  # s = gamma * rsqrt(var + eps): 3; t = beta - mean * s: 2


def test_a_jitted_operator_is_looked_into():
    params, xs = _bn_args()
    cut = _split(jax.jit(_bn), params, xs)
    assert "rsqrt" not in _names(cut.main)


def test_what_grows_and_layout_only_operations_stay_in_the_program():
    r = np.random.RandomState(1)
    b, w = jnp.asarray(r.randn(5).astype("f4")), jnp.asarray(r.randn(5, 3, 3, 3).astype("f4"))
    x = jnp.asarray(r.randn(2, 27).astype("f4"))

    def fn(b, w, x):
        big = jnp.broadcast_to(b, (2, 5))                   # grows: made in the program's loop
        ramp = lax.iota(jnp.float32, 5)                     # no operand: stays
        k = w.reshape(5, 27)                                # layout only, read by the program alone
        return lax.dot_general(x, k, (((1,), (1,)), ((), ()))) + big + ramp

    cut = _split(fn, [b, w], [x])
    assert cut.hoisted == 0
    assert set(cut.sources) == {("param", 0), ("param", 1)}
    assert {"broadcast_in_dim", "iota", "reshape"} <= set(_names(cut.main))


def test_a_reshape_that_a_moved_computation_reads_moves_with_it():
    r = np.random.RandomState(2)
    w = jnp.asarray(r.randn(4, 3).astype("f4"))
    x = jnp.asarray(r.randn(2, 3).astype("f4"))

    def fn(w, x):
        k = jnp.exp(w.reshape(3, 4))
        return x @ k

    cut = _split(fn, [w], [x])
    assert "exp" not in _names(cut.main) and "reshape" not in _names(cut.main)
    assert cut.sources == (("computed", 0),)


def test_control_flow_and_random_numbers_stay():
    r = np.random.RandomState(3)
    a = jnp.asarray(r.randn(3).astype("f4"))
    x = jnp.asarray(r.randn(3).astype("f4"))

    def fn(a, x):
        c = lax.cond(a.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, a)      # a sub-program: stays
        return x + c

    cut = _split(fn, [a], [x])
    assert "cond" in _names(cut.main)

    def noisy(key, x):
        return x + jax.random.uniform(jax.random.wrap_key_data(key), (3,))

    key = jax.random.key_data(jax.random.key(0))
    _split(noisy, [key], [x])        # whatever moves, the values are the program's


def test_split_off_leaves_the_program_as_written():
    params, xs = _bn_args()
    closed = jax.make_jaxpr(_bn)(*params, *xs)
    cut = hoist.unsplit(closed, len(params))
    assert cut.hoisted == 0 and all(kind == "param" for kind, _ in cut.sources)
    assert "rsqrt" in _names(cut.main)


# --- a hybridized network ----------------------------------------------------------------------------------------

class _Net(HybridBlock):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2D(8, 3, padding=1, in_channels=3)
        self.b1 = nn.BatchNorm(in_channels=8)
        self.c2 = nn.Conv2D(8, 3, padding=1, groups=8, in_channels=8)    # depthwise: element-wise taps
        self.b2 = nn.BatchNorm(in_channels=8)

    def hybrid_forward(self, F, x):
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))))


def _net(monkeypatch, setting):
    monkeypatch.setenv("AST_HYBRID_PROGRAM_CACHE", "0")
    monkeypatch.setenv(hoist.ENV_SWITCH, setting)
    net = _Net()
    net.initialize()
    r = np.random.RandomState(4)
    for p in net.collect_params().values():     # statistics that are not the defaults: the scale is not 1
        p.set_data(nd.array(r.rand(*p.shape).astype("f4") + 0.5))
    net.hybridize()
    return net, nd.array(r.randn(2, 3, 10, 10).astype("f4"))


def _program(net):
    """The program the block's first call left, tuned (xla/tuning.py)."""
    finish_tuning(net)
    (compiled,) = net._compiled.predict.table.values()       # the program cache is off: program.Program
    return compiled.current if isinstance(compiled, tuning.Tuning) else compiled


@pytest.mark.parametrize("setting", ["1", ""])
def test_a_hybridized_network_gives_the_same_values_split_or_not(monkeypatch, setting):
    net, x = _net(monkeypatch, setting)
    on = net(x).asnumpy()
    monkeypatch.setenv(hoist.ENV_SWITCH, "0")
    net.hybridize()
    net._compiled = None
    off = net(x).asnumpy()
    np.testing.assert_allclose(on, off, rtol=2e-6, atol=1e-6)      # XLA fuses the two apart: last bits


def test_the_split_program_has_no_rsqrt_and_follows_new_parameters(monkeypatch):
    net, x = _net(monkeypatch, "1")
    before = net(x).asnumpy()
    exe = _program(net)
    assert isinstance(exe, program.Executable) and exe.prepare is not None
    assert " rsqrt(" not in exe.as_text() and " rsqrt(" in exe.prepare.as_text()     # the op, not a name
    g = net.b2.gamma
    g.set_data(g.data() * 3.0)
    after = net(x).asnumpy()
    assert not np.allclose(before, after)
    monkeypatch.setenv(hoist.ENV_SWITCH, "0")
    net._compiled = None
    np.testing.assert_allclose(after, net(x).asnumpy(), rtol=2e-6, atol=1e-6)


def test_a_short_program_is_also_compiled_as_written_and_the_faster_kept(monkeypatch):
    seen = []
    fastest = program._fastest

    def spy(exes, leaves, xs):
        seen.append([e.prepare for e in exes])
        return fastest(exes, leaves, xs)

    monkeypatch.setattr(program, "_fastest", spy)
    net, x = _net(monkeypatch, "")
    net(x)
    finish_tuning(net)
    (preps,) = seen
    assert len(preps) == 2 and preps[0] is not None     # split, then as written (its kernels transposed only)
    assert " rsqrt(" not in preps[1].as_text()
    monkeypatch.setattr(hoist, "LONG", 0.0)             # every program is long: the split one, untimed
    seen.clear()
    net2, _ = _net(monkeypatch, "")
    net2(x)
    finish_tuning(net2)
    assert seen == []


def test_a_program_traced_with_64_bit_values_is_not_traced_again_with_x64_off():
    with jax.enable_x64(True):      # as ops/quantization.py traces its float64 arithmetic
        closed = jax.make_jaxpr(lambda a, x: x * jnp.sqrt(a))(np.ones(3), np.ones(3))
        assert hoist.retraceable(closed)
    assert not hoist.retraceable(closed)        # traced again here, its float64 would become float32
    assert hoist.retraceable(jax.make_jaxpr(lambda a, x: x * jnp.sqrt(a))(np.ones(3), np.ones(3)))
