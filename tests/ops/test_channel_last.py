"""xla/channel_last.py, xla/program.py: a program run channel-last computes what it computes as written.

Generated programs (chains of the operations a vision network is made of, every convolution lowering) are
run both ways and compared; the compiled program of consecutive convolutions has no transpose between them;
a hybridized network gives the same values with the layout on and off, and after its parameters change."""

import random
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from ast_hybrid import nd
from ast_hybrid.gluon import HybridBlock, nn
from ast_hybrid.xla import channel_last as CL
from ast_hybrid.xla import conv_tuning
from ast_hybrid.xla import program
from ast_hybrid.ops.conv_lowering import convolve


def _run_both(fn, args, n_static, im2col=False, weight_first=0):
    closed = jax.make_jaxpr(fn)(*args)
    perms = CL.kernel_perms(closed, n_static, im2col, weight_first)
    stored = [jnp.transpose(a, perms[i]) if i in perms else a for i, a in enumerate(args)]
    got = jax.jit(lambda *a: CL.channel_last(closed, a, perms, n_static, im2col=im2col,
                                             weight_first=weight_first))(*stored)
    want = jax.jit(fn)(*args)
    return closed, perms, got, jax.tree_util.tree_leaves(want)


# --- generated programs ------------------------------------------------------------------------------------------

def _conv_step(rng, x, params):
    c = x.shape[1]
    o = rng.choice([4, 8, c])
    k = rng.choice([1, 3] + ([5] if x.shape[2] >= 5 else []))
    stride = rng.choice([1, 1, 2])
    depthwise = o == c and k == 3 and rng.random() < 0.3
    w = jnp.asarray(np.random.RandomState(len(params)).randn(o, 1 if depthwise else c, k, k).astype("f4") * 0.3)
    params.append(w)
    lowering = "taps" if depthwise else rng.choice(["xla", "im2col"])
    pad = ((k // 2, k // 2),) * 2
    return lambda x, w: convolve(x, w, (stride, stride), (1, 1), pad, c if depthwise else 1, True, lowering)


def _program(seed):
    """A random chain on an NCHW input; returns (fn(params..., x), params, x)."""
    rng = random.Random(seed)
    x = jnp.asarray(np.random.RandomState(seed).randn(rng.choice([1, 2]), rng.choice([3, 4]), 9, 9).astype("f4"))
    params, steps = [], []
    shape = x.shape
    for _ in range(rng.randint(3, 8)):
        kind = rng.choice(["conv", "conv", "bias_relu", "pool", "concat", "pad_slice", "transpose2", "bn"])
        if kind == "conv":
            probe = jax.ShapeDtypeStruct(shape, jnp.float32)
            f = _conv_step(rng, probe, params)
            i = len(params) - 1
            steps.append(lambda h, ps, f=f, i=i: f(h, ps[i]))
        elif kind == "bias_relu":
            params.append(jnp.asarray(np.random.RandomState(len(params)).randn(shape[1]).astype("f4")))
            i = len(params) - 1
            steps.append(lambda h, ps, i=i: jnp.maximum(h + ps[i].reshape(1, -1, 1, 1), 0.0))
        elif kind == "bn":
            params.append(jnp.asarray(np.random.RandomState(len(params)).rand(shape[1]).astype("f4") + 0.5))
            i = len(params) - 1
            steps.append(lambda h, ps, i=i: (h - jnp.mean(h, axis=(0, 2, 3), keepdims=True))
                         * lax.rsqrt(ps[i][None, :, None, None] + 1e-5))
        elif kind == "pool":
            op = rng.choice([lax.max, lax.add])
            init = -jnp.inf if op is lax.max else 0.0
            steps.append(lambda h, ps, op=op, init=init: lax.reduce_window(
                h, init, op, (1, 1, 2, 2), (1, 1, 1, 1), ((0, 0), (0, 0), (0, 1), (0, 1))))
        elif kind == "concat":
            steps.append(lambda h, ps: jnp.concatenate([h, jnp.tanh(h)], axis=1))
        elif kind == "pad_slice":
            steps.append(lambda h, ps: jnp.pad(h, ((0, 0), (0, 0), (1, 0), (0, 2)))[:, :, :-1, 1:-1])
        elif kind == "transpose2":      # swap H and W and back, with a multiply between
            steps.append(lambda h, ps: jnp.swapaxes(jnp.swapaxes(h, 2, 3) * 1.5, 2, 3))
        shape = jax.eval_shape(lambda h: _apply(steps, params, h), jax.ShapeDtypeStruct(x.shape, jnp.float32)).shape
    tail = rng.choice(["mean", "flatten_dense", "nothing"])
    if tail == "flatten_dense":
        params.append(jnp.asarray(np.random.RandomState(99).randn(5, int(np.prod(shape[1:]))).astype("f4")))
        i = len(params) - 1
        steps.append(lambda h, ps, i=i: h.reshape(h.shape[0], -1) @ ps[i].T)
    elif tail == "mean":
        steps.append(lambda h, ps: jnp.mean(h, axis=(2, 3)))
    return (lambda *a: _apply(steps, a[:-1], a[-1])), params, x


def _apply(steps, ps, h):
    for s in steps:
        h = s(h, ps)
    return h


@pytest.mark.slow     # 40 generated programs x 2 lowerings
@pytest.mark.parametrize("im2col", [False, True], ids=["as-lowered", "xla-convolutions-as-im2col"])
@pytest.mark.parametrize("seed", range(40))
def test_a_generated_program_computes_the_same_values(seed, im2col):
    fn, params, x = _program(seed)
    _, _, got, want = _run_both(fn, [*params, x], len(params), im2col)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5 * float(np.abs(w).max() + 1))


@pytest.mark.slow     # the same, weight-first
@pytest.mark.parametrize("im2col", [False, True], ids=["as-lowered", "xla-convolutions-as-im2col"])
@pytest.mark.parametrize("seed", range(20))
def test_a_generated_program_computes_the_same_values_with_weights_first(seed, im2col):
    fn, params, x = _program(seed)
    _, _, got, want = _run_both(fn, [*params, x], len(params), im2col, weight_first=1 << 30)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5 * float(np.abs(w).max() + 1))


# --- a small GEMM takes its weight first, stored output-features-major -------------------------------------------

def _small_maps(w1, w2, wd, wk, x):
    """Two convolutions on a 2x2 map, one lowered im2col as traced, one computed so by the layout (as
    ``conv_tuning``'s set asks), a Dense layer (its weight ``(O, I)``), and a weight stored ``(I, O)``."""
    h = convolve(x, w1, (1, 1), (1, 1), ((1, 1), (1, 1)), 1, True, "im2col")
    h = lax.conv_general_dilated(jnp.maximum(h, 0.0), w2, (1, 1), ((1, 1), (1, 1)),
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
    h = lax.dot_general(h.reshape(h.shape[0], -1), wd, (((1,), (1,)), ((), ())))
    return h @ wk


def _small_args():
    r = np.random.RandomState(5)
    shapes = [(64, 32, 3, 3), (48, 64, 3, 3), (10, 192), (10, 7), (1, 32, 2, 2)]
    return [jnp.asarray(r.randn(*s).astype("f4") * 0.1) for s in shapes]


@pytest.mark.parametrize("first", [0, 16])
def test_a_gemm_over_few_rows_takes_its_weight_first_where_asked(first):
    args = _small_args()
    closed = jax.make_jaxpr(_small_maps)(*args)
    measured = {conv_tuning.signature(e) for e in CL.convolutions(closed.jaxpr)}
    assert len(measured) == 1           # the first is a dot_general already
    perms = CL.kernel_perms(closed, 4, measured, first)
    # the kernels stored O, kh, kw, I (weight first) or kh, kw, I, O; the 2-D weights as they are
    want = (0, 2, 3, 1) if first else (2, 3, 1, 0)
    assert perms == {0: want, 1: want}
    stored = [jnp.transpose(a, perms[i]) if i in perms else a for i, a in enumerate(args)]
    run = lambda *a: CL.channel_last(closed, a, perms, 4, im2col=measured, weight_first=first)[0]    # noqa: E731
    dots = [e for e in jax.make_jaxpr(run)(*stored).jaxpr.eqns if e.primitive.name == "dot_general"]
    assert len(dots) == 4
    for e, (rows, leads) in zip(dots, [(64, True), (48, True), (10, True), (7, False)]):
        lhs = e.invars[0].aval.shape
        # the weight first, its output features leading, where asked; never a weight stored (I, O)
        assert (lhs[0] == rows) == (bool(first) and leads), (lhs, first)
    np.testing.assert_allclose(np.asarray(jax.jit(run)(*stored)), np.asarray(jax.jit(_small_maps)(*args)),
                               rtol=1e-5, atol=1e-5)


def test_weights_first_only_where_the_parameters_exceed_the_last_level_cache(monkeypatch):
    from ast_hybrid.xla import host_memory

    leaves = [np.zeros(1000, "f4")]         # 4,000 bytes
    monkeypatch.delenv(program.FIRST_SWITCH, raising=False)
    monkeypatch.setattr(host_memory, "last_level_cache", lambda: 3_999)
    assert program.weight_first(leaves) == program.WEIGHT_FIRST
    assert program.weight_first([jax.ShapeDtypeStruct((1000,), jnp.float32)]) == program.WEIGHT_FIRST  # specs alike
    monkeypatch.setattr(host_memory, "last_level_cache", lambda: 4_000)
    assert program.weight_first(leaves) == 0
    monkeypatch.setattr(host_memory, "last_level_cache", lambda: 0)          # unknown: as written
    assert program.weight_first(leaves) == 0
    monkeypatch.setenv(program.FIRST_SWITCH, "1")
    assert program.weight_first(leaves) == program.WEIGHT_FIRST
    monkeypatch.setenv(program.FIRST_SWITCH, "0")
    monkeypatch.setattr(host_memory, "last_level_cache", lambda: 1)
    assert program.weight_first(leaves) == 0


def test_the_last_level_cache_is_read_from_sysfs():
    from ast_hybrid.xla import host_memory

    size = host_memory.last_level_cache()
    assert size == 0 or size >= 256 * 1024


# --- what the compiled program does ------------------------------------------------------------------------------

def test_consecutive_convolutions_have_no_transpose_between_them():
    def net(w1, b1, w2, w3, x):
        h = lax.conv_general_dilated(x, w1, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        h = jnp.maximum(h + b1[None, :, None, None], 0)
        h = convolve(h, w2, (1, 1), (1, 1), ((0, 0), (0, 0)), 1, True, "im2col")     # a 1x1: one dot_general
        h = convolve(h, w3, (1, 1), (1, 1), ((1, 1), (1, 1)), 1, True, "im2col")     # a 3x3 by im2col
        return h

    r = np.random.RandomState(0)
    shapes = [(16, 8, 3, 3), (16,), (16, 16, 1, 1), (8, 16, 3, 3), (2, 8, 12, 12)]
    args = [jnp.asarray(r.randn(*s).astype("f4")) for s in shapes]
    closed, perms, got, want = _run_both(net, args, 4)
    assert perms == {0: (2, 3, 1, 0), 2: (2, 3, 1, 0), 3: (2, 3, 1, 0)}     # the kernels, not the bias
    scale = float(np.abs(want[0]).max())
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-5, atol=2e-6 * scale)
    stored = [jnp.transpose(a, perms[i]) if i in perms else a for i, a in enumerate(args)]
    jaxpr = jax.make_jaxpr(lambda *a: CL.channel_last(closed, a, perms, 4))(*stored)
    moved = [e.invars[0].aval.shape for e in jaxpr.jaxpr.eqns if e.primitive.name == "transpose"]
    assert moved == [(2, 8, 12, 12), (2, 12, 12, 8)]       # the input in, the output out: nothing between
    hlo = jax.jit(lambda *a: CL.channel_last(closed, a, perms, 4)).lower(*stored).compile().as_text()
    entry = hlo[hlo.index("\nENTRY"):]
    moves = [line for line in entry.splitlines() if re.match(r"\s*(ROOT )?%(transpose|copy)", line)]
    assert len(moves) == 2, entry       # the input's and the output's


_POOLS = {"max": (lax.max, -jnp.inf), "min": (lax.min, jnp.inf), "sum": (lax.add, 0.0)}


@pytest.mark.parametrize("op", list(_POOLS))
@pytest.mark.parametrize("window, strides, pad, dilation, steps", [
    ((3, 3), (2, 2), ((0, 1), (0, 1)), (1, 1), 2),      # SqueezeNet's pools (ceil_mode)
    ((3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2),      # Inception's average pools
    ((3, 2), (2, 1), ((1, 0), (0, 1)), (1, 1), 2),
    ((3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 2),      # dilated windows
    ((3, 1), (2, 1), ((1, 1), (0, 0)), (1, 1), 1),      # one axis only: as it was
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1), 1),      # windows that do not overlap: whole
    ((5, 5), (5, 5), ((0, 0), (0, 0)), (1, 1), 1),      # global pooling
    ((3, 3, 3), (2, 2, 2), ((1, 1),) * 3, (1, 1, 1), 3),
])
def test_overlapping_pooling_windows_are_reduced_one_axis_at_a_time(op, window, strides, pad, dilation, steps):
    """The same values (max and min bit for bit, the sum to float rounding), with one reduce_window per axis
    where the windows overlap, one for the whole window elsewhere."""
    fn, init = _POOLS[op]
    nsp = len(window)
    r = np.random.RandomState(5)
    w = jnp.asarray(r.randn(6, 3, *(1,) * nsp).astype("f4"))
    x = jnp.asarray(r.randn(2, 3, *(11 - nsp,) * nsp).astype("f4"))
    spec = "DHW"[3 - nsp:]
    dn = (f"NC{spec}", f"OI{spec}", f"NC{spec}")

    def net(w, x):
        h = lax.conv_general_dilated(x, w, (1,) * nsp, ((0, 0),) * nsp, dimension_numbers=dn)
        return lax.reduce_window(h, init, fn, (1, 1, *window), (1, 1, *strides), ((0, 0), (0, 0), *pad),
                                 window_dilation=(1, 1, *dilation))

    closed, perms, got, want = _run_both(net, [w, x], 1)
    if op == "sum":
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    stored = [jnp.transpose(w, perms[0]), x]
    eqns = jax.make_jaxpr(lambda *a: CL.channel_last(closed, a, perms, 1))(*stored).jaxpr.eqns
    windows = [e for e in eqns if e.primitive.name.startswith("reduce_window")]
    assert len(windows) == steps
    if steps > 1:       # each over one stored axis, the last first
        axes = [[d for d, k in enumerate(e.params["window_dimensions"]) if k > 1 or e.params["window_strides"][d] > 1]
                for e in windows]
        assert all(len(a) == 1 for a in axes) and [a[0] for a in axes] == sorted((a[0] for a in axes), reverse=True)


@pytest.mark.parametrize("case, joined", [
    ("two relus", "select"),                  # a Fire module: padded, selected, one fusion with the ReLUs
    ("a relu and a convolution", "concatenate"),    # not both element-wise: XLA's concatenate
    ("three relus", "concatenate"),
    ("two relus on the height axis", "concatenate"),
])
def test_a_two_way_concatenation_of_elementwise_results_on_the_channels_is_selected(case, joined):
    r = np.random.RandomState(7)
    w1, w2 = (jnp.asarray(r.randn(o, 4, 3, 3).astype("f4")) for o in (5, 6))
    b1, b2 = (jnp.asarray(r.randn(o).astype("f4")) for o in (5, 6))
    x = jnp.asarray(r.randn(2, 4, 9, 9).astype("f4"))

    def net(w1, w2, b1, b2, x):
        conv = [lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
                for w in (w1, w2)]
        relu = [jnp.maximum(c + b[None, :, None, None], 0.0) for c, b in zip(conv, (b1, b2))]
        if case == "two relus":
            return jnp.concatenate(relu, axis=1)
        if case == "a relu and a convolution":
            return jnp.concatenate([relu[0], conv[1]], axis=1)
        if case == "three relus":
            return jnp.concatenate([relu[0], relu[1], relu[0]], axis=1)
        return jnp.concatenate([relu[0], relu[0]], axis=2)

    args = [w1, w2, b1, b2, x]
    closed, perms, got, want = _run_both(net, args, 4)
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    stored = [jnp.transpose(a, perms[i]) if i in perms else a for i, a in enumerate(args)]
    eqns = jax.make_jaxpr(lambda *a: CL.channel_last(closed, a, perms, 4))(*stored).jaxpr.eqns
    names = [e.primitive.name for e in eqns]
    assert ("concatenate" in names) == (joined == "concatenate")
    assert ("select_n" in names) == (joined == "select")


def test_a_program_without_convolutions_is_plain_jit():
    prog = program.Program(lambda leaves, x: jnp.tanh(x @ leaves[0]))
    lowered = prog.lower((jnp.ones((3, 2)),), jnp.ones((4, 3)))
    assert not isinstance(lowered, program._Lowered)


# --- in a hybridized block ---------------------------------------------------------------------------------------

class _Net(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c1 = nn.Conv2D(8, 3, padding=1, in_channels=3)
            self.bn = nn.BatchNorm(in_channels=8)
            self.c2 = nn.Conv2D(16, 1, in_channels=8)
            self.pool = nn.MaxPool2D(2, ceil_mode=True)
            self.c3 = nn.Conv2D(16, 3, groups=16, in_channels=16)
            self.out = nn.Dense(5)

    def hybrid_forward(self, F, x):
        h = F.relu(self.bn(self.c1(x)))
        h = self.pool(F.concat(self.c2(h), h, dim=1)[:, :16])
        return self.out(self.c3(h))


def _built(monkeypatch, on):
    monkeypatch.setenv(program.ENV_SWITCH, "1" if on else "0")
    net = _Net()
    net.initialize()
    x = nd.array(np.random.RandomState(1).randn(2, 3, 11, 11).astype("f4"))
    net(x)
    net.hybridize()
    return net, x


def test_a_hybridized_network_gives_the_same_values_with_the_layout_on_and_off(monkeypatch):
    net, x = _built(monkeypatch, True)
    on = net(x).asnumpy()
    monkeypatch.setenv(program.ENV_SWITCH, "0")
    net.hybridize()         # built again
    net._compiled = None
    off = net(x).asnumpy()
    np.testing.assert_allclose(on, off, rtol=1e-5, atol=1e-5)


def test_new_parameter_values_reach_the_transposed_kernels(monkeypatch):
    net, x = _built(monkeypatch, True)
    before = net(x).asnumpy()
    w = net.c2.weight
    w.set_data(w.data() * 2.0)
    after = net(x).asnumpy()
    assert not np.allclose(before, after)
    monkeypatch.setenv(program.ENV_SWITCH, "0")
    net._compiled = None
    np.testing.assert_allclose(after, net(x).asnumpy(), rtol=1e-5, atol=1e-5)


# --- the rule's program against im2col wherever it applies --------------------------------------------------------

def _conv_program(leaves, x):
    h = convolve(x, leaves[0], (1, 1), (1, 1), ((1, 1), (1, 1)), 1, True)      # the rule: XLA's (a large map)
    return jnp.maximum(h, 0.0).sum(axis=(2, 3))


def _conv_args():
    r = np.random.RandomState(3)
    return (jnp.asarray(r.randn(8, 4, 3, 3).astype("f4")),), jnp.asarray(r.randn(2, 4, 24, 24).astype("f4"))


def test_both_lowerings_are_compiled_and_the_faster_kept(monkeypatch):
    monkeypatch.setenv(program.TUNE_SWITCH, "1")
    monkeypatch.delenv("AST_HYBRID_CONV_LOWERING", raising=False)

    # the convolution measured alone keeps XLA's (xla/conv_tuning.py), as it would where its shape is slower
    # as im2col: the whole program is then timed against im2col everywhere
    def timing(e):
        return {"pick": "xla", "xla_s": 1.0, "im2col_s": 1.0}
        yield       # a plan with no step (xla/tuning.py)
    monkeypatch.setattr(conv_tuning, "timing", timing)
    leaves, x = _conv_args()
    lowered = program.Program(_conv_program).lower(leaves, x)
    assert len(lowered.candidates) == 2
    texts = [c[0].as_text() for c in lowered.candidates]
    assert "convolution" in texts[0] and "convolution" not in texts[1]      # XLA's, then im2col's GEMM
    exe = lowered.compile()
    np.testing.assert_allclose(np.asarray(exe(leaves, x)), np.asarray(jax.jit(_conv_program)(leaves, x)),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("env", [{}, {"AST_HYBRID_CONV_TUNE": "0"},
                                 {"AST_HYBRID_CONV_TUNE": "1", "AST_HYBRID_CONV_LOWERING": "xla"}])
def test_by_default_or_with_a_lowering_forced_only_the_rule_is_compiled(monkeypatch, env):
    monkeypatch.delenv(program.TUNE_SWITCH, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    leaves, x = _conv_args()
    assert len(program.Program(_conv_program).lower(leaves, x).candidates) == 1
