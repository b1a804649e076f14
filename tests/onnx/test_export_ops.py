"""Each translation of ``mx.onnx.export_model`` on a small graph: ONNX Runtime runs the exported file and gives
what the graph gives here (``Symbol.eval``, ast-hybrid's ops, themselves checked against MXNet 1.9.1), for the
options that change the translation (groups and dilations, fix_gamma, pooling conventions, MXNet's reshape
codes, negative slice steps, ...)."""

import numpy as np
import pytest

from ast_hybrid import sym

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra: pip install -e '.[test]'")

from ast_hybrid.onnx import export_model  # noqa: E402
from ast_hybrid.onnx.emit import ExportError  # noqa: E402
from ast_hybrid.onnx.importer import import_model  # noqa: E402

R = np.random.RandomState(0)


def u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape).astype(np.float32)


def run_both(tmp_path, out, inputs, params=(), dynamic=False):
    params = dict(params)
    want = [o.asnumpy() for o in out.eval(**inputs, **params)]
    path = export_model(out, params, [v.shape for v in inputs.values()], [v.dtype for v in inputs.values()],
                        str(tmp_path / "m.onnx"), dynamic=dynamic)
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert [i.name for i in s.get_inputs()] == list(inputs)
    got = s.run(None, inputs)
    assert len(got) == len(want)
    return got, want


def check(tmp_path, out, inputs, params=(), atol=1e-5, back=True):
    """ONNX Runtime on the exported file gives the graph's outputs; ``back``: so does the file imported again
    (``mx.contrib.onnx.import_model``) and run here."""
    got, want = run_both(tmp_path, out, inputs, params)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol * max(1.0, float(np.abs(w).max())))
    if back:
        again, args, aux = import_model(str(tmp_path / "m.onnx"))
        feed = {k: v for k, v in inputs.items() if k in again.list_inputs()}
        for g, w in zip(again.eval(**feed, **args, **aux), want):
            np.testing.assert_allclose(g.asnumpy(), w, rtol=1e-5, atol=atol * max(1.0, float(np.abs(w).max())))


x, y = sym.var("x"), sym.var("y")
X4 = u(2, 3, 8, 8)

UNARY = ["relu", "sigmoid", "tanh", "exp", "abs", "negative", "floor", "ceil", "round", "square", "sin", "cos",
         "erf", "sign", "softsign", "fix", "trunc", "rint", "expm1", "arctan", "sinh"]
POSITIVE = ["log", "sqrt", "rsqrt", "reciprocal", "log1p", "log2", "log10"]


@pytest.mark.parametrize("op", UNARY + POSITIVE)
def test_unary(tmp_path, op):
    v = u(3, 5, lo=0.1, hi=3.0) if op in POSITIVE else np.concatenate([u(3, 4) * 3, [[0.5, -0.5, 1.5, -2.5]]])
    check(tmp_path, getattr(sym, op)(x), {"x": v.astype(np.float32)})


BINARY = ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
          "broadcast_minimum", "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
          "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
          "broadcast_logical_or", "broadcast_logical_xor"]


@pytest.mark.parametrize("op", BINARY)
def test_broadcast_binary(tmp_path, op):
    a, b = np.round(u(2, 3, 4) * 2), np.round(u(1, 3, 1) * 2)
    check(tmp_path, getattr(sym, op)(x, y), {"x": a, "y": b})


def test_elemwise_power_and_add_n(tmp_path):
    a, b = u(3, 4, lo=0.5, hi=2), u(3, 4)
    check(tmp_path, sym.broadcast_power(x, y) + sym.elemwise_mul(x, y) - sym.elemwise_div(y, x)
          + sym.add_n(x, y, x), {"x": a, "y": b})


SCALARS = [lambda s: s + 2, lambda s: 2 - s, lambda s: s * 3, lambda s: s / 3, lambda s: 3 / s, lambda s: s ** 2,
           lambda s: 2 ** s, lambda s: s > 0.2, lambda s: s <= 0.2, lambda s: s == 0.5, lambda s: s != 0.5,
           lambda s: sym.maximum(s, 0.1), lambda s: sym.minimum(s, 0.1)]


@pytest.mark.parametrize("i", range(len(SCALARS)))
def test_scalar_ops(tmp_path, i):
    v = u(3, 4, lo=0.1, hi=2)
    v[0, 0] = 0.5
    check(tmp_path, SCALARS[i](x), {"x": v})


def test_clip_cast_where_like(tmp_path):
    v = u(3, 4) * 2
    out = sym.Group([sym.clip(x, -0.5, 0.7), sym.Cast(x * 10, dtype="int32"), sym.where(x > 0, x, y),
                     sym.zeros_like(x), sym.ones_like(x), sym.hard_sigmoid(x), sym.logical_not(x > 0)])
    check(tmp_path, out, {"x": v, "y": u(3, 4)})


@pytest.mark.parametrize("opts", [dict(kernel=(3, 3), num_filter=4, pad=(1, 1)),
                                  dict(kernel=(3, 3), num_filter=6, stride=(2, 2), dilate=(2, 2), num_group=3),
                                  dict(kernel=(1, 1), num_filter=4, no_bias=True)])
def test_convolution(tmp_path, opts):
    cin = 3
    w = u(opts["num_filter"], cin // opts.get("num_group", 1), *opts["kernel"])
    params = {"w": w} if opts.get("no_bias") else {"w": w, "b": u(opts["num_filter"])}
    args = [x, sym.var("w")] + ([] if opts.get("no_bias") else [sym.var("b")])
    check(tmp_path, sym.Convolution(*args, **opts), {"x": X4}, params)


def test_convolution_1d_and_deconvolution(tmp_path):
    out = sym.Convolution(x, sym.var("w"), sym.var("b"), kernel=(3,), num_filter=2, pad=(1,))
    check(tmp_path, out, {"x": u(2, 3, 9)}, {"w": u(2, 3, 3), "b": u(2)})
    out = sym.Deconvolution(x, sym.var("w"), kernel=(3, 3), num_filter=2, stride=(2, 2), pad=(1, 1), adj=(1, 1))
    check(tmp_path, out, {"x": X4}, {"w": u(3, 2, 3, 3)})


@pytest.mark.parametrize("opts", [dict(fix_gamma=False), dict(fix_gamma=True), dict(fix_gamma=False, axis=-1),
                                  dict(fix_gamma=False, eps=1e-5)])
def test_batch_norm(tmp_path, opts):
    c = 4 if opts.get("axis") == -1 else 3
    params = {"g": u(c) + 2, "b": u(c), "m": u(c), "v": u(c, lo=0.5, hi=2)}
    out = sym.BatchNorm(x, *(sym.var(k) for k in "gbmv"), **opts)
    check(tmp_path, out, {"x": u(2, 3, 5, 4)}, params)


def test_norms(tmp_path):
    p = {"g": u(4) + 1, "b": u(4), "g3": u(3) + 1, "b3": u(3)}
    out = sym.Group([sym.LayerNorm(x, sym.var("g"), sym.var("b")),
                     sym.LayerNorm(x, sym.var("g3"), sym.var("b3"), axis=1, eps=1e-3),
                     sym.InstanceNorm(x, sym.var("g3"), sym.var("b3"))]
                    + [sym.L2Normalization(x, mode=m) for m in ("instance", "channel", "spatial")])
    check(tmp_path, out, {"x": u(2, 3, 5, 4)}, p)


@pytest.mark.parametrize("opts", [dict(kernel=(3, 3), pool_type="max", stride=(2, 2)),
                                  dict(kernel=(3, 3), pool_type="max", stride=(2, 2), pooling_convention="full"),
                                  dict(kernel=(3, 3), pool_type="avg", pad=(1, 1), count_include_pad=False),
                                  dict(kernel=(2, 2), pool_type="avg", pad=(1, 1)),
                                  dict(kernel=(2, 2), pool_type="sum", stride=(2, 2)),
                                  dict(kernel=(2, 2), pool_type="lp", p_value=2, stride=(2, 2)),
                                  dict(kernel=(1, 1), pool_type="avg", global_pool=True),
                                  dict(kernel=(1, 1), pool_type="max", global_pool=True)])
def test_pooling(tmp_path, opts):
    check(tmp_path, sym.Pooling(x, **opts), {"x": u(2, 3, 9, 9)})


def test_adaptive_pooling_fully_connected(tmp_path):
    out = sym.Group([sym.contrib.AdaptiveAvgPooling2D(x, output_size=1),
                     sym.contrib.AdaptiveAvgPooling2D(x, output_size=(2, 4)),
                     sym.FullyConnected(x, sym.var("w"), sym.var("b"), num_hidden=5),
                     sym.FullyConnected(x, sym.var("w2"), num_hidden=5, no_bias=True, flatten=False)])
    check(tmp_path, out, {"x": X4}, {"w": u(5, 192), "b": u(5), "w2": u(5, 8)})


def test_activations(tmp_path):
    acts = [sym.Activation(x, act_type=a) for a in ("relu", "sigmoid", "tanh", "softrelu", "softsign")]
    leaky = [sym.LeakyReLU(x, act_type=a, slope=0.3) for a in ("leaky", "elu", "selu", "gelu")]
    prelu = sym.LeakyReLU(x, sym.var("a"), act_type="prelu")
    check(tmp_path, sym.Group(acts + leaky + [prelu]), {"x": X4}, {"a": u(3)})


def test_softmaxes_embedding_resizes(tmp_path):
    out = sym.Group([sym.softmax(x, axis=1), sym.softmax(x, temperature=2.0), sym.log_softmax(x, axis=-1),
                     sym.SoftmaxActivation(x, mode="channel"), sym.SoftmaxActivation(x),
                     sym.UpSampling(x, scale=2, sample_type="nearest"),
                     sym.contrib.BilinearResize2D(x, height=5, width=11),
                     sym.contrib.BilinearResize2D(x, height=16, width=12, align_corners=False)])
    check(tmp_path, out, {"x": X4})
    check(tmp_path, sym.Embedding(x, sym.var("w"), input_dim=10, output_dim=4),
          {"x": np.array([[1, 9, 0], [3, 3, 2]], np.float32)}, {"w": u(10, 4)})


RESHAPES = [(2, -1), (0, -1), (-2,), (-3, 0, 0), (0, -4, 3, -1, 0, 0), (-1, 0)]


@pytest.mark.parametrize("shape", RESHAPES)
def test_reshape_codes(tmp_path, shape):
    check(tmp_path, sym.Reshape(x, shape=shape), {"x": u(2, 6, 4, 5)})


def test_reshape_reverse_and_like(tmp_path):
    check(tmp_path, sym.Group([sym.Reshape(x, shape=(-1, 0), reverse=True), sym.reshape_like(x, y)]),
          {"x": u(2, 6, 4), "y": u(12, 4)})


def test_shape_ops(tmp_path):
    out = sym.Group([sym.Flatten(x), sym.concat(x, x, dim=2), sym.stack(x, x, axis=1), sym.transpose(x),
                     sym.transpose(x, axes=(0, 2, 1, 3)), sym.swapaxes(x, 1, 3), sym.expand_dims(x, axis=-1),
                     sym.expand_dims(x, axis=0),
                     sym.squeeze(sym.slice_axis(x, axis=1, begin=1, end=2)), sym.squeeze(y, axis=(0,)),
                     sym.slice_axis(x, axis=-1, begin=-3, end=None), sym.slice(x, begin=(None, 1), end=(None, 3)),
                     sym.slice(x, begin=(1, None, 4), end=(None, None, 0), step=(-1, 2, -2)),
                     sym.slice_like(x, y, axes=(2, 3))])
    check(tmp_path, out, {"x": u(2, 3, 6, 5), "y": u(1, 3, 4, 2)})


def test_splits(tmp_path):
    halves = sym.split(x, num_outputs=2, axis=3, squeeze_axis=True)
    out = sym.Group(list(sym.split(x, num_outputs=3, axis=1)) + list(halves) + list(sym.split_v2(x, (1, 4), axis=2)))
    check(tmp_path, out, {"x": u(2, 3, 6, 2)})


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "norm"])
def test_reductions(tmp_path, op):
    f = getattr(sym, op)
    out = sym.Group([f(x), f(x, axis=1), f(x, axis=(1, 3), keepdims=True), f(x, axis=-1)]
                    + ([f(x, axis=(0, 2), exclude=True)] if op != "norm" else []))
    check(tmp_path, out, {"x": u(2, 3, 4, 5, lo=0.5, hi=1.5)})


def test_arg_dot_broadcast_tile_take_pad(tmp_path):
    out = sym.Group([sym.argmax(x, axis=1), sym.argmin(x, axis=2, keepdims=True), sym.argmax(x),
                     sym.broadcast_to(sym.slice_axis(x, axis=0, begin=0, end=1), shape=(3, 0, 0, 0)),
                     sym.broadcast_axis(sym.sum(x, axis=1, keepdims=True), axis=1, size=3),
                     sym.broadcast_like(sym.sum(x, axis=2, keepdims=True), x), sym.tile(x, reps=(2, 1)),
                     sym.tile(x, reps=(2, 1, 1, 1, 1)), sym.take(x, y, axis=1), sym.take(x, y, axis=2, mode="wrap"),
                     sym.Pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5),
                     sym.Pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
                     sym.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 2, 2, 1))])
    check(tmp_path, out, {"x": u(2, 3, 4, 5), "y": np.array([0, 2, 5, -1], np.float32)})
    a, b = u(3, 4), u(4, 5)
    out = sym.Group([sym.dot(x, y), sym.dot(y, x, transpose_a=True, transpose_b=True),
                     sym.batch_dot(sym.expand_dims(x, 0), sym.expand_dims(y, 0)),
                     sym.batch_dot(sym.expand_dims(y, 0), sym.expand_dims(x, 0), transpose_a=True, transpose_b=True)])
    check(tmp_path, out, {"x": a, "y": b})


def test_dynamic_batch(tmp_path):
    """``dynamic=True``: every input dimension free; the file runs at another batch size."""
    out = sym.softmax(sym.FullyConnected(sym.Flatten(sym.relu(x)), sym.var("w"), sym.var("b"), num_hidden=4))
    params = {"w": u(4, 12), "b": u(4)}
    path = export_model(out, params, [(2, 3, 4)], np.float32, str(tmp_path / "d.onnx"), dynamic=True)
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    v = u(5, 3, 4)
    np.testing.assert_allclose(s.run(None, {"x": v})[0], out.eval(x=v, **params)[0].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_what_cannot_be_written_is_named(tmp_path):
    with pytest.raises(ExportError, match=r"'UpSampling' \(layer 'up7'\) is a bilinear UpSampling"):
        export_model(sym.UpSampling(x, sym.var("w"), scale=2, sample_type="bilinear", num_filter=3, name="up7"),
                     {"w": u(3, 1, 4, 4)}, [(1, 3, 4, 4)], np.float32, str(tmp_path / "p.onnx"))
    with pytest.raises(ExportError, match=r"no translation of operator '_contrib_box_iou' \(layer 'iou0'\)"):
        export_model(sym.contrib.box_iou(x, y, name="iou0"), {}, [(3, 4), (2, 4)], np.float32,
                     str(tmp_path / "b.onnx"))
    with pytest.raises(ExportError, match="dynamic"):
        export_model(sym.Reshape(x, shape=(-3, 0)), {}, [(2, 3, 4)], np.float32, str(tmp_path / "r.onnx"),
                     dynamic=True)


def _boxes(batch, count, classes=3, seed=0):
    r = np.random.RandomState(seed)
    ids = r.randint(0, classes, (batch, count, 1))
    scores = np.round(r.uniform(0, 1, (batch, count, 1)), 2)       # ties: MXNet's order is the input's
    xy = r.uniform(0, 20, (batch, count, 2))
    wh = r.uniform(-2, 10, (batch, count, 2))                       # some of negative width or height
    return np.concatenate([ids, scores, xy, xy + wh], -1).astype(np.float32)


@pytest.mark.parametrize("opts", [dict(force_suppress=True), dict(id_index=0), dict(id_index=0, topk=10),
                                  dict(id_index=0, background_id=1, valid_thresh=0.3, overlap_thresh=0.3),
                                  dict(in_format="center", out_format="center", id_index=0)])
def test_box_nms(tmp_path, opts):
    """MXNet's box_nms, not ONNX's: candidates are the topk best, classes apart, boxes of negative extent
    overlap nothing, kept rows first in score order and the rest -1."""
    out = sym.contrib.box_nms(x, coord_start=2, score_index=1, **opts)
    check(tmp_path, out, {"x": _boxes(2, 60)}, atol=0, back=False)
    check(tmp_path, out, {"x": _boxes(1, 40, seed=1)[0]}, atol=0, back=False)


def test_detection_ops(tmp_path):
    r = np.random.RandomState(3)
    deltas, anchors = u(2, 10, 4), r.uniform(0, 1, (1, 10, 4)).astype(np.float32)
    out = sym.Group([sym.contrib.box_decode(x, y, std0=0.1, std1=0.1, std2=0.2, std3=0.2, clip=0.5, format=f)
                     for f in ("center", "corner")])
    check(tmp_path, out, {"x": deltas, "y": anchors}, back=False)
    feat = u(2, 3, 16, 16)
    rois = np.array([[0, 1, 1, 9, 12], [1, 0.5, 2, 15, 15], [0, 3, 3, 4, 4]], np.float32)
    out = sym.Group([sym.contrib.ROIAlign(x, y, pooled_size=(4, 4), spatial_scale=0.5, sample_ratio=2),
                     sym.contrib.ROIAlign(x, y, pooled_size=(3, 3), spatial_scale=1.0)])
    check(tmp_path, out, {"x": feat, "y": rois}, back=False)
    v = u(3, 7)
    ks = [sym.topk(x, k=2, axis=0), sym.topk(x, k=2, is_ascend=True, ret_typ="value")]
    out = sym.Group(list(sym.topk(x, k=3, ret_typ="both")) + ks
                    + [sym.gather_nd(x, y), sym.repeat(x, repeats=2, axis=1), sym.repeat(x, repeats=3),
                       sym.reverse(x, axis=1), sym.reverse(x, axis=(0, 1)), x % 0.4, 0.4 % x])
    check(tmp_path, out, {"x": v, "y": np.array([[0, 2, 1], [6, 0, 3]], np.float32)}, back=False)
    divisors = np.array([[0.7, -0.4, 0, 1.5]], np.float32)
    check(tmp_path, sym.broadcast_mod(x, y), {"x": u(3, 4) * 3, "y": divisors}, back=False)


@pytest.mark.parametrize("trans_b, bias_shape", [(1, (4,)), (0, (1, 4)), (1, ()), (1, (3, 4))])
def test_import_gemm_biases(trans_b, bias_shape):
    """Another exporter's Gemm: a bias per unit becomes a FullyConnected's; any other broadcast bias (a scalar,
    one per row) is added as given, never dropped."""
    from onnx import TensorProto, helper, numpy_helper

    w = u(4, 5) if trans_b else u(5, 4)
    c = u(*bias_shape) if bias_shape else np.float32(0.5)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "W", "C"], ["y"], transB=trans_b)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.asarray(c), "C")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    v = u(3, 5)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": v})[0]
    again, args, _ = import_model(model)
    np.testing.assert_allclose(again.eval(x=v, **args)[0].asnumpy(), want, rtol=1e-5, atol=1e-6)
