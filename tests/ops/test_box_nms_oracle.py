"""``contrib.box_nms`` against MXNet 1.9.1: MXNet's order (filter by ``valid_thresh`` and background, keep the
``topk`` best by score, then suppress greedily), its tie order, -1 rows, formats and classes, and memory that
stays linear in the boxes times ``topk`` (SSD's 174,640 candidates once asked for a 30 GB IoU matrix)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.ops import contrib
from ast_hybrid.ops._core import OpError

pytestmark = pytest.mark.oracle


def boxes(seed, shape, classes=3, span=10.0, ties=False):
    """Rows (id, score, x1, y1, x2, y2); ids from -1 (MXNet's default background) to classes - 1."""
    g = np.random.default_rng(seed)
    xy = g.uniform(0, span, shape + (2,))
    wh = g.uniform(0.5, 4, shape + (2,))
    score = g.uniform(0, 1, shape + (1,))
    if ties:                                       # many equal scores: MXNet keeps the earlier box first
        score = np.round(score * 5) / 5
    ids = g.integers(-1, classes, shape + (1,))
    return np.concatenate([ids, score, xy, xy + wh], -1).astype("float32")


OPTIONS = [
    {}, {"topk": 5}, {"topk": 3, "id_index": 0},
    {"overlap_thresh": 0.1, "id_index": 0, "force_suppress": True, "topk": 7},
    {"valid_thresh": 0.4, "id_index": 0, "background_id": 1, "topk": 20},
    {"in_format": "center", "out_format": "corner", "topk": 10}, {"out_format": "center", "id_index": 0},
    {"topk": 0}, {"topk": 1000}, {"valid_thresh": 2.0}, {"overlap_thresh": 0.3, "id_index": 0, "topk": 8},
    {"coord_start": 0, "score_index": 4, "id_index": 5, "topk": 6},
]
CASES = [(i, opts, (2, 40) if i % 2 else (300,), not i % 2) for i, opts in enumerate(OPTIONS)] + \
    [(i, OPTIONS[i], (2, 1, 25), False) for i in (2, 5)]


def _layout(x, opts):
    if opts.get("coord_start") == 0:             # (x1, y1, x2, y2, score, id)
        return np.concatenate([x[..., 2:], x[..., 1:2], x[..., :1]], -1)
    return x


@pytest.fixture(scope="module")
def references(oracle):
    inputs = {f"x{n}": _layout(boxes(n, shape, ties=ties), opts) for n, (_, opts, shape, ties) in enumerate(CASES)}
    code = "\n".join(f"out['y{n}'] = nd.contrib.box_nms(nd.array(inp['x{n}']), **{opts!r}).asnumpy()"
                     for n, (_, opts, _, _) in enumerate(CASES))
    return inputs, oracle.run(code, **inputs)


@pytest.mark.parametrize("n", range(len(CASES)), ids=[f"{c[0]}-{'x'.join(map(str, c[2]))}" for c in CASES])
def test_box_nms_matches_mxnet(references, n):
    inputs, ref = references
    opts = CASES[n][1]
    ours = nd.contrib.box_nms(nd.array(inputs[f"x{n}"]), **opts).asnumpy()
    assert ours.shape == ref[f"y{n}"].shape
    np.testing.assert_allclose(ours, ref[f"y{n}"], rtol=1e-6, atol=1e-6)


def test_many_candidates_small_topk_and_suppression_by_rows(oracle):
    """SSD-like: thousands of candidates, topk 400, per-class suppression; and topk=-1 over 3,000 boxes, which
    suppresses one IoU row per step instead of a matrix (the path for large topk)."""
    big = boxes(11, (1, 20_000), classes=20, span=1.0)
    big[..., 4:] = big[..., 2:4] + (big[..., 4:] - big[..., 2:4]) * 0.05
    many = boxes(12, (3000,), classes=2, span=40.0)
    ref = oracle.run("out['a'] = nd.contrib.box_nms(nd.array(inp['big']), overlap_thresh=0.45, valid_thresh=0.01,"
                     " topk=400, id_index=0).asnumpy()\n"
                     "out['b'] = nd.contrib.box_nms(nd.array(inp['many']), overlap_thresh=0.5, id_index=0,"
                     " force_suppress=True).asnumpy()", big=big, many=many)
    a = nd.contrib.box_nms(nd.array(big), overlap_thresh=0.45, valid_thresh=0.01, topk=400, id_index=0).asnumpy()
    b = nd.contrib.box_nms(nd.array(many), overlap_thresh=0.5, id_index=0, force_suppress=True).asnumpy()
    assert 100 < (a[0, :, 0] >= 0).sum() <= 400 and (b[:, 0] >= 0).sum() > 500
    np.testing.assert_array_equal(a, ref["a"])
    np.testing.assert_array_equal(b, ref["b"])


def test_memory_is_linear_in_boxes_times_topk():
    """200,000 candidates with topk 400: the compiled program's scratch memory is far below N * topk floats (the
    N x N matrix would be 160 GB), and it runs."""
    impl = contrib.box_nms.__wrapped__
    n, k = 200_000, 400
    for topk in (k, -1):
        compiled = jax.jit(lambda d, topk=topk: impl(d, topk=topk, id_index=0)).lower(
            jax.ShapeDtypeStruct((1, n, 6), jnp.float32)).compile()
        assert compiled.memory_analysis().temp_size_in_bytes < n * k * 4
    x = boxes(5, (1, n), classes=20, span=1.0)
    out = nd.contrib.box_nms(nd.array(x), overlap_thresh=0.45, topk=k, id_index=0).asnumpy()
    kept = out[0, :, 0] >= 0
    assert 0 < kept.sum() <= k and not kept[k:].any() and (out[0, ~kept] == -1).all()


def test_hybridized_equals_eager():
    from ast_hybrid.gluon import nn

    class NMS(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.contrib.box_nms(x, overlap_thresh=0.3, topk=12, id_index=0, valid_thresh=0.05)

    net, x = NMS(), nd.array(boxes(4, (2, 60)))
    eager = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_array_equal(net(x).asnumpy(), eager)


@pytest.mark.parametrize("opts, words", [
    ({"score_index": 3}, "score_index"), ({"coord_start": 3}, "coordinates"), ({"id_index": 1}, "id_index"),
    ({"in_format": "xywh"}, "in_format"),
])
def test_bad_arguments_name_the_argument(opts, words):
    with pytest.raises(OpError, match=words):
        nd.contrib.box_nms(nd.array(boxes(0, (5,))), **opts)


def test_gradient_goes_to_the_kept_rows(oracle):
    """MXNet's backward copies each output row's gradient to the input row it came from (suppressed, filtered
    and dropped rows get 0); ours differentiates through the same gather."""
    from ast_hybrid import autograd

    x = boxes(3, (2, 30))
    w = np.random.default_rng(1).uniform(-1, 1, x.shape).astype("float32")
    ref = oracle.run("""
from mxnet import autograd
x = nd.array(inp['x']); x.attach_grad()
with autograd.record():
    loss = (nd.contrib.box_nms(x, overlap_thresh=0.3, topk=10, id_index=0) * nd.array(inp['w'])).sum()
loss.backward()
out['g'] = x.grad.asnumpy()
""", x=x, w=w)
    ours = nd.array(x)
    ours.attach_grad()
    with autograd.record():
        loss = (nd.contrib.box_nms(ours, overlap_thresh=0.3, topk=10, id_index=0) * nd.array(w)).sum()
    loss.backward()
    assert (ref["g"] != 0).any(axis=-1).sum() >= 10
    np.testing.assert_array_equal(ours.grad.asnumpy(), ref["g"])
