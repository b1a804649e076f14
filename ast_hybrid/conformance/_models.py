"""Which model, which input, how to call it: shared by both sides of the conformance run.

Imported by MXNet's side (a script run by the oracle's Python, numpy 1.x, real ``mxnet``) as a plain module and
by ours as ``ast_hybrid.conformance._models``: so it imports nothing but numpy, and is given ``mx`` and the
packages.  The input of each family is the first of ``SIZES`` that MXNet itself can run (smallest first).
"""

from __future__ import annotations

import os

import numpy as np

# family -> input shapes tried in order by MXNet's side (the first it runs is the one compared)
SIZES = {
    "classification": [(1, 3, 32, 32), (1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 224, 224), (1, 3, 299, 299)],
    "segmentation": [(1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 256, 256), (1, 3, 480, 480)],   # crop_size = side
    "pose": [(1, 3, 64, 48), (1, 3, 128, 96), (1, 3, 256, 192)],
    "detection": [(1, 3, 128, 128), (1, 3, 256, 256), (1, 3, 512, 512)],
    "action": [(1, 3, 32, 32), (1, 3, 64, 64), (1, 3, 112, 112), (1, 3, 224, 224)],
    # video: N, C, T, H, W (C3D's classifier takes exactly 16x112x112; SlowFast its slow + fast frames, below)
    "action3d": [(1, 3, 4, 32, 32), (1, 3, 8, 64, 64), (1, 3, 16, 112, 112), (1, 3, 32, 224, 224)],
    "other": [(1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 256, 256)],
    "nlp": [None],
}
NLP_MODELS = ("standard_lstm_lm_200", "standard_lstm_lm_650", "standard_lstm_lm_1500", "awd_lstm_lm_600",
              "awd_lstm_lm_1150", "big_rnn_lm_2048_512", "elmo_2x1024_128_2048cnn_1xhighway",
              "elmo_2x2048_256_2048cnn_1xhighway", "elmo_2x4096_512_2048cnn_2xhighway", "transformer_en_de_512",
              "distilbert_6_768_12", "bert_12_768_12", "roberta_12_768_12", "ernie_12_768_12", "bert_24_1024_16",
              "roberta_24_1024_16")
_ACTION = ("_kinetics400", "_ucf101", "_hmdb51", "_sthsthv2", "_custom", "_kinetics700")
_DETECTION = ("ssd_", "yolo3_", "faster_rcnn", "mask_rcnn", "center_net", "fcos", "rcnn", "doublehead_rcnn")
_SEGMENTATION = ("fcn_", "psp_", "deeplab", "danet", "icnet", "fastscnn")
_POSE = ("simple_pose", "alpha_pose", "mobile_pose")
INIT = "Xavier(rnd_type='gaussian', factor_type='in', magnitude=2)"   # spreads logits: no ties in argmax/top-k
# Where MXNet's own output under INIT is ill-conditioned (measured on MXNet's side: x * (1 + 1e-6) moves its
# output by 3.6e-4..5.1e-1 of its scale): He-scaled weights with the randomised BatchNorm statistics grow the
# activations through these deep stacks (se_resnet101_v1's logits reach 1.1e3; the attention nets' (1 + sigmoid
# mask) * trunk up to doubles them per module: cifar_residualattentionnet452's reach 2.4e7 even at magnitude 1), so
# a tiny relative change is a large absolute one at the sigmoids and ReLUs.  A smaller magnitude keeps them small:
# under these MXNet's output moves <= 1.2e-6 of its scale (a random 1e-6 per-element change too) and stays spread:
# distinct logits (999/1000 for residualattentionnet92, 1000/1000 or 10/10 for the others), std/scale 0.27..0.59.
SMALL_INIT = {
    # before: 6.0e-4, 1.7e-3, 5.1e-1, 3.6e-4, 4.1e-1; after 5.3e-7, 1.1e-6, 9.5e-7, 1.2e-6, 1.2e-6 (32x32 input)
    **dict.fromkeys(("resnest101", "se_resnet101_v1", "se_resnet152_v1", "se_resnet101_v2", "se_resnet152_v2"),
                    "Xavier(rnd_type='gaussian', factor_type='in', magnitude=1)"),
    # 92..452 at 224x224, before 1.0e-3..4.4e-2, after 5.2e-7..1.1e-6 (magnitude 0.5 leaves 452 at 9.6e-6);
    # CIFAR 92/452 at 32x32, before 1.1e-3/2.5e-2, after 3.5e-7/2.8e-7
    **dict.fromkeys(["residualattentionnet%d" % d for d in (92, 128, 164, 200, 236, 452)]
                    + ["cifar_residualattentionnet92", "cifar_residualattentionnet452"],
                    "Xavier(rnd_type='gaussian', factor_type='in', magnitude=0.25)"),
}
CUSTOM_CLASSES = ["a", "b", "c"]       # what GluonCV's *_custom detectors ask for (``classes``)
# SiamRPN's forward takes a template crop and a search crop; GluonCV's tracker crops them at EXEMPLAR_SIZE=127
# and INSTANCE_SIZE=287, and its cross-correlation head reshapes to their features (4x4 and 24x24) by constants
SIAMRPN_TEMPLATE, SIAMRPN_SEARCH = (1, 3, 127, 127), (1, 3, 287, 287)
SLOWFAST_FRAMES = {"4x16": 4 + 32, "8x8": 8 + 32, "16x8": 16 + 64}   # slow + fast frames, as its presets set


def mxnet_env(name: str) -> dict:
    """Environment variables MXNet's side runs under for this model, beyond the engine settings.  SiamRPN's head
    convolves with a kernel that is a ``reshape`` view of another output: MXNet's MKLDNN convolution refuses a view
    ("Check failed: !is_view", ndarray.cc:649) in the plain forward, so MXNet runs it with MKLDNN off (its reference
    convolution; the output is the same operation)."""
    return {"MXNET_MKLDNN_ENABLED": "0"} if name.startswith("siamrpn") else {}


def family_of(name: str) -> str:
    low = name.lower().removesuffix("_int8")
    if low in NLP_MODELS:
        return "nlp"
    if low.removeprefix("custom_").startswith(_DETECTION):
        return "detection"
    if low.endswith(_ACTION) or low.startswith(("i3d_", "slowfast_", "r2plus1d_", "c3d_", "p3d_", "tsn_")):
        return "action3d" if low.startswith(("i3d_", "slowfast_", "r2plus1d_", "c3d_", "p3d_")) else "action"
    if low.startswith(_SEGMENTATION) or low.startswith("hrnet_") and low.endswith("_s"):   # HRNet's _s: segmentation
        return "segmentation"
    if low.startswith(_POSE):
        return "pose"
    if low.startswith(("monodepth", "siamrpn", "smot")):
        return "other"
    return "classification"


def sizes(name: str, family: str):
    if name.startswith("slowfast_"):         # its forward slices the frame axis into fast and slow frames
        frames = SLOWFAST_FRAMES[name.split("_")[1]]
        return [(1, 3, frames, side, side) for side in (32, 64, 112, 224)]
    if name.startswith("ssd_300"):
        return [(1, 3, 300, 300)]
    if name.startswith("ssd_512"):
        return [(1, 3, 512, 512)]
    if name.startswith("inceptionv3"):
        return [(1, 3, 299, 299)]
    if name.startswith("siamrpn"):          # its search crop (the template's is SIAMRPN_TEMPLATE, see ``inputs``)
        return [SIAMRPN_SEARCH]
    return SIZES[family]


def inputs(name: str, shape) -> dict:
    """The arrays given to the model (float32; ids as floats, as Gluon's models take them)."""
    rng = np.random.default_rng(0)
    if name.startswith("siamrpn"):         # ``x`` the template, ``search`` the search crop (``shape``)
        return {"x": rng.uniform(-1, 1, SIAMRPN_TEMPLATE).astype("float32"),
                "search": rng.uniform(-1, 1, shape).astype("float32")}
    if shape is not None:
        return {"x": rng.uniform(-1, 1, shape).astype("float32")}
    if name.startswith("elmo"):
        return {"x": rng.integers(1, 260, (2, 3, 50)).astype("float32"), "mask": np.ones((2, 3), "float32")}
    if name.startswith(("bert", "ernie", "roberta", "distilbert")):
        return {"x": rng.integers(5, 40, (1, 8)).astype("float32"), "tt": np.zeros((1, 8), "float32"),
                "vl": np.array([6], "float32")}
    if name.startswith("transformer"):
        return {"x": rng.integers(5, 40, (1, 4)).astype("float32"), "y": rng.integers(5, 40, (1, 4)).astype("float32"),
                "vl": np.array([4], "float32"), "tvl": np.array([3], "float32")}
    return {"x": rng.integers(0, 40, (5, 2)).astype("float32")}


def keyword_sets(name: str, family: str, shape) -> list:
    """Constructor keywords tried in order at one input shape (the first MXNet builds and runs is kept): no
    pretrained base; segmentation nets also told their crop size (their hybridized upsampling is sized by it,
    480 by default: GluonCV's training scripts pass it), then without it."""
    if family == "nlp":
        return [{}]
    sets = [{"pretrained_base": False}, {}]
    if family == "segmentation" and shape is not None:
        sets.insert(0, {"pretrained_base": False, "crop_size": shape[-1]})
    return sets


def init_of(name: str) -> str:
    """The initializer (an ``mx.init`` expression), as tests/realcode/test_detection_oracle.py found for detectors:
    SSD on VGG and the R-CNNs with GluonCV's own Xavier (He-scaled, SSD's scores saturate), SSD on the other
    backbones ``INIT`` (under Xavier() all its class scores are equal); CenterNet's heatmap head
    saturates every score at 1.0 unless scaled down (``after_first_call``); the deep classifiers of ``SMALL_INIT``
    a smaller magnitude (under ``INIT`` MXNet's own output is ill-conditioned); YOLOv3 and the rest ``INIT``."""
    if name.startswith("ssd_") and "resnet" in name:     # He-scaled overflows on ResNet backbones (all scores
        return "Xavier(rnd_type='gaussian', factor_type='in', magnitude=0.5)"     # 1.0, output not finite)
    if name.startswith("ssd_") and "vgg16" not in name:    # FeatureExpander backbones: under Xavier() every
        return INIT                                        # class score is 1/21 (all tie); He-scaled: distinct
    if name.startswith(("ssd_", "faster_rcnn", "mask_rcnn", "custom_")):
        return "Xavier()"
    if name.startswith("center_net"):
        return "Xavier(rnd_type='gaussian', factor_type='in', magnitude=1)"
    if name in SMALL_INIT:                      # deep SE-ResNets, ResNeSt-101, residual attention nets
        return SMALL_INIT[name]
    if name.startswith("yolo3_darknet53"):      # He-scaled: YOLO's exp() of box sizes overflows to inf here
        return "Xavier(rnd_type='gaussian', factor_type='in', magnitude=0.5)"
    return INIT


def initialize(name: str, net, mx) -> None:
    """``init_of(name)`` for every parameter, but a vector without an initializer of its own (a SymbolBlock's,
    e.g. GluonCV's FPN and quantized networks: MXNet hands such a parameter the global initializer as its
    ``__init__`` and Xavier refuses vectors) gets what Gluon's layers give theirs: zeros for biases, betas and
    means, ones for gammas and variances."""
    net.initialize(eval("mx.init." + init_of(name)), force_reinit=True)
    for key, p in net.collect_params().items():
        if p.init is None and key.endswith(("bias", "beta", "running_mean", "moving_mean")):
            p.initialize(init=mx.init.Zero(), force_reinit=True)
        elif p.init is None and key.endswith(("gamma", "running_var", "moving_var")):
            p.initialize(init=mx.init.One(), force_reinit=True)


def after_first_call(name: str, net, mx=None, arrays=None) -> None:
    """Adjust parameters once shapes are known and BatchNorm's statistics set (MXNet's side only: ours loads
    what MXNet saved).  CenterNet: its heatmap's logits (its last convolution's output less the -2.19 prior
    bias) scaled to at most 3 in magnitude on the row's input, so the scores (sigmoids) spread and the top-k
    order is not decided by ties: a fixed factor 0.01 left resnet101's scores all 1.0 and DLA's 40 best within
    3e-5 of each other.  The COCO R-CNNs: ``_spread_rcnn_classes``."""
    if name.startswith(RCNN_COCO) and name.endswith("_coco") and arrays is not None:
        _spread_rcnn_classes(name, net, mx, arrays)
        return
    if not name.startswith("center_net"):
        return
    last = net.heads[0][-1]
    if arrays is None:
        last.weight.set_data(last.weight.data() * 0.01)
        return
    logits = net.heads[0](net.base_network(mx.nd.array(arrays["x"])))
    spread = float((logits - last.bias.data().reshape((1, -1, 1, 1))).abs().max().asscalar())
    if spread > 0:
        last.weight.set_data(last.weight.data() * (3.0 / spread))


RCNN_COCO = ("faster_rcnn", "mask_rcnn")
RCNN_CLASS_SPREAD = 10.0


def _spread_rcnn_classes(name: str, net, mx, arrays: dict) -> None:
    """The class head of a COCO R-CNN (``class_predictor``, GluonCV's Normal(0.01)) scaled so its logits (less
    the bias) reach ``RCNN_CLASS_SPREAD`` in magnitude on the row's input.  Under Normal(0.01) they stay within
    0.6, so the softmax over 81 classes is near 1/81 everywhere: every (proposal, class) pair passes box_nms's
    1e-4 valid threshold (faster_rcnn_resnet50_v1b_coco kept 31728 rows, scores within 1e-7 of each other)
    and their order decides nothing (MXNet's own output moved 0.90 of its scale for a 1e-6 input change).
    Spread to 10 it keeps 1380 rows, all distinct; the swaps a 1e-6 change still makes are of rows whose
    scores lie within 2e-6 of each other (``align_near_ties`` pairs those, in the comparison and in the
    sensitivity alike).  The RPN's score head is left as it is: scaling its logits keeps their order, so its
    proposals do not change."""
    head, seen = net.class_predictor, []
    handle = head.register_forward_hook(lambda block, inputs, out: seen.append(out))
    try:
        call(name, "detection", net, mx, arrays)
    finally:
        handle.detach()
    bias = head.bias.data().reshape((1, -1))
    spread = max(float((o.reshape((-1, bias.shape[1])) - bias).abs().max().asscalar()) for o in seen)
    if spread > 0:
        head.weight.set_data(head.weight.data() * (RCNN_CLASS_SPREAD / spread))


def serve_base_weights(gluoncv, mx, folder: str, shape, used: list, create: bool) -> None:
    """Offline stand-in for GluonCV's download of a pretrained BASE network (``model_store.get_model_file``).

    Some constructors load one whatever ``pretrained_base`` says (the video models' ActionRecResNetV1b,
    -VGG16, -InceptionV1/V3 build their base with ``pretrained=True``-equivalents from their own default), so
    offline even MXNet cannot build them.  Here the file is the base network itself, built by GluonCV with
    ``pretrained=False`` and initialised, run once at the input's height and width (its shapes), saved in the
    work folder by MXNet's side; ours is handed the same file.  The whole model is initialised again after
    it is built, so these values never reach an output.  A 3D video network served (the UCF101/HMDB51/custom I3D
    and SlowFast constructors copy a Kinetics400 one's weights) runs at the whole N,C,T,H,W input.  Each base
    served is listed in ``used`` (the row)."""
    store = gluoncv.model_zoo.model_store

    def get_model_file(name, tag=None, root=None):
        side = tuple(shape[-2:]) if shape else (224, 224)
        given = tuple(shape) if shape and len(shape) == 5 and family_of(name) == "action3d" else (1, 3) + side
        path = os.path.join(folder, "base-%s-%s.params" % (name, "x".join(map(str, given[2:]))))
        if not os.path.exists(path):
            if not create:
                raise FileNotFoundError(f"MXNet's side saved no base network {path}")
            net = gluoncv.model_zoo.get_model(name, pretrained=False)
            net.initialize(mx.init.Xavier())
            net(mx.nd.zeros(given))
            net.save_parameters(path)
        used.append(name)
        return path
    store.get_model_file = get_model_file


def build(name: str, family: str, mx, pkgs: dict, kwargs: dict):
    """The network, unmodified package code, ``pretrained=False``."""
    if family == "detection" and "custom" in name:
        kwargs = dict(kwargs, classes=CUSTOM_CLASSES)
    if family != "nlp":
        return pkgs["gluoncv"].model_zoo.get_model(name, pretrained=False, **kwargs)
    nlp = pkgs["gluonnlp"]
    import collections
    words = collections.Counter("w%d" % i for i in range(40))
    if name.startswith("elmo"):
        return nlp.model.get_model(name, pretrained=False)[0]
    if name.startswith(("bert", "ernie", "distilbert")):
        return nlp.model.get_model(name, vocab=nlp.vocab.BERTVocab(words), pretrained=False, dataset_name=None,
                                   use_decoder=False, use_classifier=False)[0]
    if name.startswith("roberta"):
        return nlp.model.get_model(name, vocab=nlp.Vocab(words), pretrained=False, dataset_name=None,
                                   use_decoder=False)[0]
    if name.startswith("transformer"):
        vocab = nlp.Vocab(words)
        return nlp.model.get_model(name, dataset_name="WMT2014", src_vocab=vocab, tgt_vocab=vocab,
                                   pretrained=False)[0]
    return nlp.model.get_model(name, vocab=nlp.Vocab(words), pretrained=False)[0]


def call(name: str, family: str, net, mx, arrays: dict):
    """One forward of ``net`` on ``arrays`` (numpy), as the model's own API asks."""
    a = {k: mx.nd.array(v) for k, v in arrays.items()}
    if name.startswith("siamrpn"):
        return net(a["x"], a["search"])
    if family != "nlp":
        return net(a["x"])
    if name.startswith("elmo"):
        return net(a["x"], net.begin_state(mx.nd.zeros, batch_size=2), a["mask"])
    if name.startswith(("bert", "ernie")):
        return net(a["x"], a["tt"], a["vl"])
    if name.startswith(("roberta", "distilbert")):
        return net(a["x"], a["vl"])
    if name.startswith("transformer"):
        return net(a["x"], a["y"], a["vl"], a["tvl"])
    return net(a["x"], net.begin_state(batch_size=2, func=mx.nd.zeros))      # the language models


def flatten(out) -> list:
    """Every array of a (nested) output, in order, as numpy."""
    if hasattr(out, "asnumpy"):
        return [out.asnumpy()]
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in flatten(o)]
    return []


def repeats(family: str) -> int:
    """Timed calls after the warm one (best of): one for the heavy families, to keep a run cheap."""
    return 1 if family in ("detection", "action3d", "other") else 3


def detections(outs: list) -> tuple[int, int]:
    """(rows kept, distinct scores among them) of a detector's (ids, scores, boxes, ...) output: a reference
    with nothing kept, or with tied scores, decides little (ties may be ordered either way)."""
    if len(outs) < 2:
        return 0, 0
    scores = outs[1]
    kept = scores[..., 0] >= 0 if scores.ndim == 3 else scores >= 0
    return int(kept.sum()), int(len(np.unique(scores[kept])))


def align_near_ties(got: list, ref: list, tol: float = 1e-5) -> list:
    """A detector's (ids, scores, boxes, ...) output with ours' rows reordered among the rows whose REFERENCE
    scores lie within ``tol`` of each other (relative to the largest score): the top-k order of two scores one
    float32 step apart is decided by rounding (CenterNet-DLA: 0.4974667 and 0.49746665 came out swapped, every
    value equal to 7e-7), so within such a run each of MXNet's rows is paired with the closest of ours
    (same id, nearest boxes), which is then compared as usual.  Anything else is left as it is."""
    if len(got) < 3 or len(ref) != len(got) or any(g.shape != r.shape for g, r in zip(got, ref)):
        return got
    if ref[1].ndim not in (2, 3) or ref[1].shape[:2] != ref[0].shape[:2] or ref[2].shape[:2] != ref[1].shape[:2]:
        return got
    scores = ref[1].reshape(ref[1].shape[:2]).astype("float64")
    scale = max(float(np.abs(scores).max()), 1e-12)
    aligned = [g.copy() for g in got]
    rows = [k for k in range(len(got)) if got[k].ndim >= 2 and got[k].shape[:2] == scores.shape]
    for b in range(scores.shape[0]):
        # one vector per row (every array of the row), ours and MXNet's, to pair rows by their distance
        mine = np.concatenate([got[k][b].reshape(scores.shape[1], -1).astype("float64") for k in rows], axis=1)
        theirs = np.concatenate([ref[k][b].reshape(scores.shape[1], -1).astype("float64") for k in rows], axis=1)
        i, n = 0, scores.shape[1]
        while i < n:
            j = i + 1
            while j < n and abs(scores[b, j] - scores[b, j - 1]) <= tol * scale:
                j += 1
            # a run of identical reference rows (e.g. box_nms's -1 rows) is compared the same in any order
            if j - i > 1 and not (theirs[i:j] == theirs[i]).all():
                free = list(range(i, j))
                order = []
                for r in range(i, j):
                    cost = np.abs(mine[free] - theirs[r]).sum(axis=1)
                    order.append(free.pop(int(np.argmin(cost))))
                for k in rows:
                    aligned[k][b, i:j] = got[k][b, order]
            i = j
    return aligned


def randomise_batchnorm(net, mx) -> int:
    """Running statistics away from 0/1, so loading them is checked; returns how many were set."""
    rng, n = np.random.default_rng(1), 0
    for key, p in net.collect_params().items():
        if key.endswith(("running_mean", "moving_mean")):
            p.set_data(mx.nd.array(rng.uniform(-0.2, 0.2, p.shape).astype("float32")))
            n += 1
        elif key.endswith(("running_var", "moving_var")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape).astype("float32")))
            n += 1
    return n
