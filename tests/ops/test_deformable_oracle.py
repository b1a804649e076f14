"""``nd.contrib.DeformableConvolution`` and ``nd.contrib.ModulatedDeformableConvolution`` against MXNet 1.9.1.

The same code runs in MXNet and here (``ops_harness``): forward values of both ops for groups, deformable
groups, stride, pad, dilate, non-square kernels, integer and non-integer offsets, offsets that carry the
samples across and beyond the image's edge (where the two ops' border rules differ), and MXNet's errors; and
the v1 op's gradients w.r.t. data, offset, weight and bias (MXNet's CPU backward).  MXNet 1.9.1 has no CPU
backward for the v2 op ("only implemented in GPU"): its gradients w.r.t. data, offset, mask, weight and bias
are checked against central differences of MXNet's own forward in float64, with every sample point kept off
the integer grid (where the bilinear sample has kinks), so that the differences are exact up to rounding."""

import jax
import numpy as np
import pytest
from ops_harness import _ours, check, mx_results

from ast_hybrid import autograd, nd

pytestmark = pytest.mark.oracle

g = np.random.default_rng(12)


def _u(shape, low, high):
    return g.uniform(low, high, shape).astype("float32")


# data (2, 4, 7, 6); per configuration its offset (and mask) maps, sized by the output
ARR = {"x": _u((2, 4, 7, 6), -1, 1), "w": _u((6, 4, 3, 3), -1, 1), "wg": _u((6, 2, 3, 3), -1, 1),
       "w23": _u((4, 1, 2, 3), -1, 1), "w11": _u((3, 4, 1, 1), -1, 1), "b6": _u((6,), -1, 1),
       "b4": _u((4,), -1, 1), "b3": _u((3,), -1, 1),
       # A: 3x3, pad 1 -> 7x6; offsets up to 3 pixels carry many samples out of the image
       "oa": _u((2, 18, 7, 6), -3, 3), "ma": _u((2, 9, 7, 6), 0, 2),
       "oi": g.integers(-2, 3, (2, 18, 7, 6)).astype("float32"),          # integer offsets: on the grid
       "of": _u((2, 18, 7, 6), -100, 100),                                 # (nearly) every sample outside
       # B: groups 2, deformable groups 2, stride 2, pad 1, dilate 2 -> 3x2
       "ob": _u((2, 36, 3, 2), -2.5, 2.5), "mb": _u((2, 18, 3, 2), 0, 2),
       # C: kernel (2, 3), stride (1, 2), pad (0, 1), 4 deformable groups, num_group 4 -> 6x3
       "oc": _u((2, 48, 6, 3), -1.5, 1.5), "mc": _u((2, 24, 6, 3), -1, 1),
       # D: 1x1, no pad: offsets within 1.2 of each pixel put samples in (-1, 0) and (H - 1, H)
       "od": _u((2, 2, 7, 6), -1.2, 1.2), "md": _u((2, 1, 7, 6), 0, 1)}

DCN, MDCN = "nd.contrib.DeformableConvolution", "nd.contrib.ModulatedDeformableConvolution"
CONFIGS = {   # name: (offset, mask, weight, bias or None, options)
    "A": ("oa", "ma", "w", "b6", "kernel=(3, 3), pad=(1, 1), num_filter=6"),
    "A-int": ("oi", "ma", "w", "b6", "kernel=(3, 3), pad=(1, 1), num_filter=6"),
    "A-far": ("of", "ma", "w", "b6", "kernel=(3, 3), pad=(1, 1), num_filter=6"),
    "B": ("ob", "mb", "wg", "b6", "kernel=(3, 3), stride=(2, 2), pad=(1, 1), dilate=(2, 2), num_filter=6, "
                                  "num_group=2, num_deformable_group=2"),
    "C": ("oc", "mc", "w23", None, "kernel=(2, 3), stride=(1, 2), pad=(0, 1), num_filter=4, num_group=4, "
                                   "num_deformable_group=4, no_bias=True"),
    "D": ("od", "md", "w11", "b3", "kernel=(1, 1), num_filter=3"),
}


def _call(op, name, tensors=None):
    off, mask, w, b, opts = CONFIGS[name]
    off, mask, w, b = tensors or (off, mask, w, b)
    args = ["x", off] + ([mask] if op == MDCN else []) + [w] + ([b] if b else [])
    return f"{op}({', '.join(args)}, {opts})"


def _backward(name):
    """v1's output and gradients, for a cotangent that differs per output element."""
    off, _, w, b, _ = CONFIGS[name]
    names = ["x", off, w] + ([b] if b else [])
    copies = [f"{n}_" for n in names]
    lines = [f"{c} = {n}.copy()\n{c}.attach_grad()" for n, c in zip(names, copies)]
    call = _call(DCN, name, (copies[1], None, copies[2], copies[3] if b else None)).replace("(x,", "(x_,", 1)
    lines.append(f"with autograd.record():\n    y = {call}\n    loss = (y * nd.sin(nd.arange(y.size).reshape(y.shape)"
                 " * 0.7)).sum()\nloss.backward()")
    lines.append(f"res = [y] + [t.grad for t in ({', '.join(copies)},)]")
    return "\n".join(lines)


V2_ONES = f"{MDCN}(x, od, md * 0 + 1, w11, b3, kernel=(1, 1), num_filter=3)"
CASES = [_call(op, name) for name in CONFIGS for op in (DCN, MDCN)] + [_backward(name) for name in CONFIGS] + [
    V2_ONES,
    # modulated: im2col_step must divide a larger batch; it changes nothing
    f"{MDCN}(x, oa, ma, w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6, im2col_step=1)",
    f"{MDCN}(x, oa, ma, w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6, im2col_step=3)",
    # MXNet's errors
    f"{DCN}(x, oa, w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6, im2col_step=1)",    # v1 has no im2col_step
    f"{DCN}(x, oa, w, b6, kernel=(3, 3), num_filter=6)",                          # offset sized for pad 1
    f"{MDCN}(x, oa, ma[:, :4], w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6)",  # mask channels
    f"{DCN}(x, oa, w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6, no_bias=True)",  # a bias and no_bias
    f"{DCN}(x, oa, w, kernel=(3, 3), pad=(1, 1), num_filter=6)",                  # no bias and no no_bias
    f"{DCN}(x, oa, w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6, layout='NHWC')",
    f"{DCN}(x, oa, w, b6, kernel=(3, 3), pad=(1, 1), num_filter=6, num_deformable_group=3)",
    f"{MDCN}(x, ob, mb, wg, b6, kernel=(3, 3), stride=(2, 2), pad=(1, 1), dilate=(2, 2), num_filter=6, "
    "num_group=2, num_deformable_group=4)",                                      # offset channels for 2 groups
    f"{DCN}(x, oa, wg, b6, kernel=(3, 3), pad=(1, 1), num_filter=6)",             # weight for 2 groups
]


@pytest.fixture(scope="module")
def ref(oracle):
    """MXNet's result (or error) for every case, from one MXNet process."""
    return mx_results(oracle, [(c, c) for c in CASES], ARR)


def test_compiled_matches_mxnet(ref):
    """Every single-call case that MXNet runs, traced into ONE jax.jit program (inputs as traced NDArrays, as a
    hybridized block has them), gives MXNet's values."""
    cases = [c for c in CASES if "\n" not in c and ref[c][0] == "ok"]
    names = sorted(ARR)

    def program(*xs):
        env = {k: nd.NDArray(x) for k, x in zip(names, xs)}
        return {c: _ours(c, {}, env=env)._arr for c in cases}

    got = jax.jit(program)(*[ARR[k] for k in names])
    assert len(got) == 15
    for c in cases:
        np.testing.assert_allclose(np.asarray(got[c]), ref[c][1][0], rtol=1e-5, atol=1e-5, err_msg=c)


@pytest.mark.parametrize("code", CASES)
def test_matches_mxnet(ref, code):
    """Values (and gradients) to 1e-5; where MXNet raises, we raise."""
    check(ref[code], code, ARR, tol=(1e-5, 1e-5))


def test_the_cases_reach_where_the_border_rules_differ(ref):
    """Configuration D puts samples in (-1, 0) and (H - 1, H), where v1 reads 0 before the first row and the
    last row past it while v2 mixes in zeros beyond the edge: MXNet's two ops (v2 with a mask of ones) give
    different outputs there, so the cases above check both rules."""
    v1 = ref[_call(DCN, "D")][1][0]
    v2 = ref[V2_ONES][1][0]
    assert np.abs(v1 - v2).max() > 0.1


# --- v2's gradients: central differences of MXNet's float64 forward ------------------------------------------

FD = r'''
import json
d = 'float64'
args = [nd.array(inp[k], dtype=d) for k in ('x', 'off', 'mask', 'w', 'b')]
ct = nd.array(inp['ct'], dtype=d)
opts = json.loads(str(inp['opts']))
opts['kernel'] = tuple(opts['kernel'])
def loss(a):
    return float((nd.contrib.ModulatedDeformableConvolution(*a, **opts) * ct).sum().asscalar())
eps = 1e-4
for i, name in enumerate(('x', 'off', 'mask', 'w', 'b')):
    base = args[i].asnumpy()
    grad = np.zeros_like(base)
    flat = grad.reshape(-1)
    for j in range(base.size):
        for sign in (1, -1):
            moved = base.copy().reshape(-1)
            moved[j] += sign * eps
            a = list(args)
            a[i] = nd.array(moved.reshape(base.shape), dtype=d)
            flat[j] += sign * loss(a) / (2 * eps)
    out[name] = grad
'''

FD_CONFIGS = [   # (data shape, options): offsets get an integer part and a fraction in [0.1, 0.9]
    ((1, 4, 5, 5), {"kernel": [3, 3], "pad": [1, 1], "num_filter": 4, "num_group": 2, "num_deformable_group": 2}),
    ((2, 2, 6, 5), {"kernel": [2, 3], "stride": [2, 1], "dilate": [2, 1], "pad": [1, 0], "num_filter": 3}),
]


@pytest.mark.parametrize("shape,opts", FD_CONFIGS, ids=["groups", "stride-dilate"])
def test_modulated_gradients_match_differences_of_mxnet_forward(oracle, shape, opts):
    import json

    rng = np.random.default_rng(5)
    n, c, h, w = shape
    (kh, kw), dg = opts["kernel"], opts.get("num_deformable_group", 1)
    s, p, dl = opts.get("stride", [1, 1]), opts.get("pad", [0, 0]), opts.get("dilate", [1, 1])
    ho, wo = [(size + 2 * pp - (dd * (k - 1) + 1)) // ss + 1 for size, pp, dd, k, ss in zip((h, w), p, dl, (kh, kw), s)]
    f, grp = opts["num_filter"], opts.get("num_group", 1)
    arrays = {"x": rng.uniform(-1, 1, shape), "w": rng.uniform(-1, 1, (f, c // grp, kh, kw)),
              "b": rng.uniform(-1, 1, (f,)), "mask": rng.uniform(0, 2, (n, dg * kh * kw, ho, wo)),
              "off": rng.integers(-3, 3, (n, dg * 2 * kh * kw, ho, wo))
              + rng.uniform(0.1, 0.9, (n, dg * 2 * kh * kw, ho, wo)),
              "ct": rng.uniform(-1, 1, (n, f, ho, wo))}
    arrays = {k: v.astype("float32") for k, v in arrays.items()}
    ref = oracle.run(FD, opts=np.array(json.dumps(opts)), **arrays)
    inputs = [nd.array(arrays[k]) for k in ("x", "off", "mask", "w", "b")]
    for t in inputs:
        t.attach_grad()
    with autograd.record():
        y = nd.contrib.ModulatedDeformableConvolution(*inputs, **opts)
        loss = (y * nd.array(arrays["ct"])).sum()
    loss.backward()
    for name, t in zip(("x", "off", "mask", "w", "b"), inputs):
        expected = ref[name]
        scale = np.abs(expected).max()
        assert scale > 0.1, name
        np.testing.assert_allclose(t.grad.asnumpy(), expected, rtol=1e-5, atol=1e-5 * scale,
                                   err_msg=f"gradient w.r.t. {name}, {opts}")
