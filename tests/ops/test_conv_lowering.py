"""Every convolution lowering (ast_hybrid/ops/conv_lowering.py) against XLA's and against MXNet 1.9.1.

Each case is one ``nd.Convolution`` call whose shape lands on a branch of ``choose`` (the case states
which, and a test checks the rule still picks it).  For every lowering that can run the case (XLA's
convolution always, im2col for ungrouped, taps for depthwise) the output and the gradients of data,
weight and bias under a random head gradient are compared with XLA's lowering (tight) and with MXNet's
``Convolution`` under ``autograd.record()`` (float32 tolerance); the op itself (``nd.Convolution``
under our autograd, which uses the chosen lowering) is compared with MXNet the same way.  MXNet's CPU
build has no channel-last convolution: for NHWC/NWC cases MXNet runs the NCHW convolution between
transposes (inside ``record``, so its gradients come back channel-last).
"""

from __future__ import annotations

import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ast_hybrid import autograd, nd
from ast_hybrid.ops.conv_lowering import ENV, applicable, choose, convolve

# id -> (x shape, w shape, Convolution's keyword arguments, the lowering choose() must pick)
CASES = {
    "depthwise-m1-bias": ((2, 8, 9, 9), (8, 1, 3, 3), dict(pad=(1, 1), num_group=8), "taps"),
    "depthwise-m2-stride2": ((1, 4, 10, 11), (8, 1, 3, 3), dict(stride=(2, 2), pad=(1, 1), num_group=4), "taps"),
    "depthwise-dilate-asym-nobias": ((2, 6, 11, 9), (6, 1, 3, 3),
                                     dict(dilate=(2, 1), pad=(2, 1), num_group=6, no_bias=True), "taps"),
    "depthwise-5x3-stride21": ((1, 5, 12, 10), (10, 1, 5, 3), dict(stride=(2, 1), pad=(2, 0), num_group=5),
                               "taps"),
    "small-map-many-channels": ((1, 256, 4, 4), (256, 256, 3, 3), dict(pad=(1, 1)), "im2col"),
    "small-map-stride-dilate-asym": ((1, 128, 9, 8), (32, 128, 3, 3),
                                     dict(stride=(2, 1), dilate=(1, 2), pad=(2, 1), no_bias=True), "im2col"),
    "batch4-7x7-512": ((4, 256, 7, 7), (64, 256, 3, 3), dict(pad=(1, 1)), "im2col"),
    "pointwise-stride2": ((2, 16, 9, 9), (12, 16, 1, 1), dict(stride=(2, 2)), "im2col"),
    "pointwise-pad": ((1, 6, 5, 7), (4, 6, 1, 1), dict(pad=(1, 0), no_bias=True), "im2col"),
    "large-map-xla": ((1, 8, 32, 32), (8, 8, 3, 3), dict(pad=(1, 1)), "xla"),
    "stem-7x7-xla": ((1, 3, 30, 30), (16, 3, 7, 7), dict(stride=(2, 2), pad=(3, 3)), "xla"),
    "grouped-2-xla": ((1, 8, 10, 10), (6, 4, 3, 3), dict(num_group=2, pad=(1, 1)), "xla"),
    # no padding: computed padded at the end, the extra outputs sliced off (conv_xla's docstring)
    "unpadded-stride2-xla": ((2, 8, 20, 19), (8, 8, 3, 3), dict(stride=(2, 2)), "xla"),
    "nhwc-unpadded-dilate-xla": ((1, 21, 19, 4), (6, 3, 3, 4), dict(dilate=(2, 1), layout="NHWC"), "xla"),
    "1d-unpadded-xla": ((1, 4, 40), (3, 4, 5), dict(stride=(3,)), "xla"),
    "nhwc-depthwise-m2-stride2": ((2, 9, 8, 3), (6, 3, 3, 1), dict(stride=(2, 2), pad=(1, 1), num_group=3,
                                                                   layout="NHWC"), "taps"),
    "nhwc-small-map": ((1, 5, 6, 128), (16, 3, 3, 128), dict(pad=(1, 0), layout="NHWC"), "im2col"),
    "nhwc-pointwise": ((2, 7, 7, 8), (5, 1, 1, 8), dict(layout="NHWC", no_bias=True), "im2col"),
    "nhwc-large-map-xla": ((1, 20, 20, 4), (4, 3, 3, 4), dict(pad=(1, 1), layout="NHWC"), "xla"),
    "1d-depthwise-dilate": ((2, 4, 17), (4, 1, 3), dict(dilate=(2,), pad=(1,), num_group=4), "taps"),
    "1d-pointwise-stride": ((2, 6, 15), (5, 6, 1), dict(stride=(3,)), "im2col"),
    "1d-long-kernel": ((1, 512, 6), (8, 512, 3), dict(pad=(1,)), "im2col"),
    "nwc-depthwise": ((2, 13, 4), (8, 3, 1), dict(pad=(1,), num_group=4, layout="NWC"), "taps"),
    "3d-depthwise": ((1, 4, 5, 6, 5), (4, 1, 2, 3, 2), dict(pad=(1, 1, 0), stride=(1, 2, 1), num_group=4), "taps"),
    "3d-small-map": ((1, 64, 3, 4, 3), (8, 64, 3, 3, 3), dict(pad=(1, 1, 1), no_bias=True), "im2col"),
    "3d-pointwise": ((1, 5, 4, 3, 4), (3, 5, 1, 1, 1), dict(), "im2col"),
    # kernels with more cells than the output has positions: im2col's patches cut per output position
    "kernel-covers-input": ((2, 3, 24, 24), (8, 3, 24, 24), dict(), "im2col"),
    "big-kernel-stride-dilate-pad": ((1, 32, 13, 12), (4, 32, 7, 6), dict(pad=(2, 1), stride=(2, 3), dilate=(1, 2)),
                                     "im2col"),
    "nhwc-big-kernel": ((2, 10, 10, 16), (4, 9, 9, 16), dict(pad=(1, 1), layout="NHWC"), "im2col"),
    "1d-big-kernel-stride": ((2, 48, 30), (6, 48, 28), dict(stride=(2,)), "im2col"),
}

_TO_CF = {3: (0, 2, 1), 4: (0, 3, 1, 2), 5: (0, 4, 1, 2, 3)}
_TO_CL = {3: (0, 2, 1), 4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}


def _inputs(case_id):
    xs, ws, kw, _ = CASES[case_id]
    rng = np.random.default_rng(zlib.crc32(case_id.encode()))
    fan_in = int(np.prod(ws[1:]))
    x = rng.standard_normal(xs).astype("float32")
    w = (rng.standard_normal(ws) / np.sqrt(fan_in)).astype("float32")
    b = rng.standard_normal(ws[0]).astype("float32")
    kwargs = dict(kw, kernel=_kernel(ws, kw), num_filter=ws[0])
    y_shape = _ours(x, w, b, kwargs)[0].shape
    dy = rng.standard_normal(y_shape).astype("float32")
    return x, w, b, dy, kwargs


def _kernel(ws, kw):
    return tuple(ws[2:]) if kw.get("layout", "NC")[1] == "C" else tuple(ws[1:-1])


def _ours(x, w, b, kwargs, dy=None):
    """nd.Convolution under our autograd: y and, given dy, the gradients of x, w (and b)."""
    xs = [nd.array(a) for a in (x, w, b)]
    for a in xs:
        a.attach_grad()
    args = xs if not kwargs.get("no_bias") else xs[:2]
    with autograd.record():
        y = nd.Convolution(*args, **kwargs)
    if dy is None:
        return [y.asnumpy()]
    y.backward(nd.array(dy))
    return [y.asnumpy()] + [a.grad.asnumpy() for a in args]


def _mxnet_code(kwargs, ndim):
    kw = dict(kwargs)
    cl = kw.pop("layout", "NC")[1] != "C"
    bias = "" if kw.get("no_bias") else ", b"
    xx = f"x.transpose({_TO_CF[ndim]})" if cl else "x"
    ww = f"w.transpose({_TO_CF[ndim]})" if cl else "w"
    y = f"nd.Convolution({xx}, {ww}{bias}, **{kw!r})"
    if cl:
        y = f"({y}).transpose({_TO_CL[ndim]})"
    grads = "[x, w]" + ("" if kw.get("no_bias") else " + [b]")
    return f"""
x, w, b = (nd.array(inp[k]) for k in ('x', 'w', 'b'))
for a in (x, w, b):
    a.attach_grad()
with mx.autograd.record():
    y = {y}
y.backward(nd.array(inp['dy']))
out['0'] = y.asnumpy()
for i, a in enumerate({grads}):
    out[str(i + 1)] = a.grad.asnumpy()
"""


def _lowered(name, x, w, b, dy, kwargs):
    """The convolution by lowering ``name`` (plus bias) and its vjp: [y, dx, dw(, db)]."""
    nsp = x.ndim - 2
    cf = kwargs.get("layout", "NC")[1] == "C"
    stride, dilate = kwargs.get("stride", (1,) * nsp), kwargs.get("dilate", (1,) * nsp)
    pad = [(p, p) for p in kwargs.get("pad", (0,) * nsp)]
    groups = kwargs.get("num_group", 1)
    bshape = (1, -1) + (1,) * nsp if cf else (1,) * (nsp + 1) + (-1,)

    def f(x, w, b):
        y = convolve(x, w, stride, dilate, pad, groups, cf, lowering=name)
        return y if kwargs.get("no_bias") else y + b.reshape(bshape)

    y, vjp = jax.vjp(jax.jit(f), jnp.asarray(x), jnp.asarray(w), jnp.asarray(b))
    grads = vjp(jnp.asarray(dy))
    return [np.asarray(y)] + [np.asarray(g) for g in grads[:2 if kwargs.get("no_bias") else 3]]


def _lowerings(case_id):
    xs, ws, kw, _ = CASES[case_id]
    return applicable(xs, ws, kw.get("num_group", 1), kw.get("layout", "NC")[1] == "C")


def _close(got, want, what, rtol=1e-4):
    assert len(got) == len(want), what
    for i, (a, e) in enumerate(zip(got, want)):
        assert a.shape == e.shape, f"{what} output {i}: shape {a.shape} != {e.shape}"
        scale = max(1.0, float(np.max(np.abs(e))))
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * scale, err_msg=f"{what} output {i}")


@pytest.fixture(scope="module")
def mxnet_results(oracle):
    res = {}
    for cid in CASES:
        x, w, b, dy, kwargs = _inputs(cid)
        got = oracle.run(_mxnet_code(kwargs, x.ndim), x=x, w=w, b=b, dy=dy)
        res[cid] = [got[str(i)] for i in range(len(got))]
    return res


@pytest.mark.parametrize("cid", list(CASES))
def test_rule_picks_the_branch_the_case_is_for(cid):
    xs, ws, kw, expected = CASES[cid]
    nsp = len(xs) - 2
    pad = [(p, p) for p in kw.get("pad", (0,) * nsp)]
    cf = kw.get("layout", "NC")[1] == "C"
    got = choose(xs, ws, kw.get("stride", (1,) * nsp), kw.get("dilate", (1,) * nsp), pad,
                 kw.get("num_group", 1), cf)
    assert got == expected


@pytest.mark.slow     # every lowering of every shape, forward and backward
@pytest.mark.parametrize("cid", list(CASES))
def test_every_lowering_matches_xla_forward_and_backward(cid):
    x, w, b, dy, kwargs = _inputs(cid)
    ref = _lowered("xla", x, w, b, dy, kwargs)
    others = [n for n in _lowerings(cid) if n != "xla"]
    assert others or CASES[cid][3] == "xla"
    for name in others:
        _close(_lowered(name, x, w, b, dy, kwargs), ref, f"{cid}: {name} vs xla", rtol=2e-5)


@pytest.mark.parametrize("cid", list(CASES))
def test_every_lowering_matches_mxnet_forward_and_backward(mxnet_results, cid):
    x, w, b, dy, kwargs = _inputs(cid)
    for name in _lowerings(cid):
        _close(_lowered(name, x, w, b, dy, kwargs), mxnet_results[cid], f"{cid}: {name} vs MXNet")


@pytest.mark.parametrize("cid", list(CASES))
def test_the_op_matches_mxnet_forward_and_backward(mxnet_results, cid):
    x, w, b, dy, kwargs = _inputs(cid)
    _close(_ours(x, w, b, kwargs, dy), mxnet_results[cid], f"{cid}: nd.Convolution vs MXNet")


def test_the_op_matches_mxnet_inside_a_jitted_gradient(mxnet_results):
    """Under jax.jit(jax.grad) (a hybridized training step), the picked lowerings still give MXNet's values."""
    from ast_hybrid.ops.conv import Convolution

    for cid in ("depthwise-m2-stride2", "small-map-many-channels", "pointwise-stride2"):
        x, w, b, dy, kwargs = _inputs(cid)

        def loss(x, w, b, kwargs=kwargs):
            return jnp.sum(Convolution.__wrapped__(x, w, b, **kwargs) * dy)

        grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(x, w, b)
        _close([np.asarray(g) for g in grads], mxnet_results[cid][1:], f"{cid}: jit(grad) vs MXNet")


def test_the_environment_variable_overrides_the_rule_where_it_applies(monkeypatch):
    xs, ws, kw, _ = CASES["small-map-many-channels"]
    args = ((1, 1), (1, 1), [(1, 1)] * 2)
    assert choose(xs, ws, *args, 1, True) == "im2col"
    monkeypatch.setenv(ENV, "xla")
    assert choose(xs, ws, *args, 1, True) == "xla"
    monkeypatch.setenv(ENV, "taps")     # not a depthwise convolution: the rule stands
    assert choose(xs, ws, *args, 1, True) == "im2col"
    assert choose((1, 8, 9, 9), (8, 1, 3, 3), *args, 8, True) == "taps"


@pytest.mark.parametrize("cid", ["unpadded-stride2-xla", "nhwc-unpadded-dilate-xla", "1d-unpadded-xla"])
def test_an_unpadded_convolution_gives_xlas_unpadded_bits(cid):
    """conv_xla pads an unpadded convolution (XLA:CPU runs it faster so) and slices: the same windows, the
    same bits as XLA's own unpadded convolution."""
    from jax import lax

    from ast_hybrid.ops.conv_lowering import conv_xla

    x, w, _, _, kwargs = _inputs(cid)
    nsp = x.ndim - 2
    cf = kwargs.get("layout", "NC")[1] == "C"
    stride, dilate = kwargs.get("stride", (1,) * nsp), kwargs.get("dilate", (1,) * nsp)
    sp = "DHW"[3 - nsp:]
    dn = ("NC" + sp, "OI" + sp, "NC" + sp) if cf else ("N" + sp + "C", "O" + sp + "I", "N" + sp + "C")
    want = lax.conv_general_dilated(x, w, stride, "VALID", rhs_dilation=dilate, dimension_numbers=dn)
    got = conv_xla(jnp.asarray(x), jnp.asarray(w), stride, dilate, [(0, 0)] * nsp, 1, cf)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_kernel_as_large_as_its_input_lowers_to_a_few_operations():
    """MXNet's test_conv2d_16c convolves a 224x224 input with a 224x224 kernel: im2col's patches once took one
    window per kernel cell (50,176 slices, a program XLA compiled for over ten minutes); one per output
    position here."""
    x = jax.ShapeDtypeStruct((4, 3, 64, 64), jnp.float32)
    w = jax.ShapeDtypeStruct((8, 3, 64, 64), jnp.float32)
    for cf in (True, False):
        xs, ws = (x, w) if cf else (jax.ShapeDtypeStruct((4, 64, 64, 3), jnp.float32),
                                    jax.ShapeDtypeStruct((8, 64, 64, 3), jnp.float32))
        jaxpr = jax.make_jaxpr(lambda a, b: convolve(a, b, (1, 1), (1, 1), [(0, 0)] * 2, 1, cf, lowering="im2col"))(
            xs, ws)
        assert len(jaxpr.eqns) < 10, jaxpr
