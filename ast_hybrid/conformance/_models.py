"""Which model, which input, how to call it: shared by both sides of the conformance run.

Imported by MXNet's side (a script run by the oracle's Python, numpy 1.x, real ``mxnet``) as a plain module and
by ours as ``ast_hybrid.conformance._models``: so it imports nothing but numpy, and is given ``mx`` and the
packages.  The input of each family is the first of ``SIZES`` that MXNet itself can run (smallest first).
"""

from __future__ import annotations

import numpy as np

# family -> input shapes tried in order by MXNet's side (the first it runs is the one compared)
SIZES = {
    "classification": [(1, 3, 32, 32), (1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 224, 224), (1, 3, 299, 299)],
    "segmentation": [(1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 256, 256), (1, 3, 480, 480)],
    "pose": [(1, 3, 64, 48), (1, 3, 128, 96), (1, 3, 256, 192)],
    "detection": [(1, 3, 128, 128), (1, 3, 256, 256), (1, 3, 512, 512)],
    "action": [(1, 3, 64, 64), (1, 3, 112, 112), (1, 3, 224, 224)],
    "action3d": [(1, 3, 8, 64, 64), (1, 3, 16, 112, 112), (1, 3, 32, 224, 224)],
    "other": [(1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 256, 256)],
    "nlp": [None],
}
NLP_MODELS = ("standard_lstm_lm_200", "standard_lstm_lm_650", "standard_lstm_lm_1500", "awd_lstm_lm_600",
              "awd_lstm_lm_1150", "big_rnn_lm_2048_512", "elmo_2x1024_128_2048cnn_1xhighway",
              "elmo_2x2048_256_2048cnn_1xhighway", "elmo_2x4096_512_2048cnn_2xhighway", "transformer_en_de_512",
              "distilbert_6_768_12", "bert_12_768_12", "roberta_12_768_12", "ernie_12_768_12", "bert_24_1024_16",
              "roberta_24_1024_16")
_ACTION = ("_kinetics400", "_ucf101", "_hmdb51", "_sthsthv2", "_custom", "_kinetics700")
_DETECTION = ("ssd_", "yolo3_", "faster_rcnn", "mask_rcnn", "center_net", "fcos", "rcnn")
_SEGMENTATION = ("fcn_", "psp_", "deeplab", "danet", "icnet", "fastscnn")
_POSE = ("simple_pose", "alpha_pose", "mobile_pose")
INIT = "Xavier(rnd_type='gaussian', factor_type='in', magnitude=2)"   # spreads logits: no ties in argmax/top-k


def family_of(name: str) -> str:
    low = name.lower()
    if low in NLP_MODELS:
        return "nlp"
    if low.endswith(_ACTION) or low.startswith(("i3d_", "slowfast_", "r2plus1d_", "c3d_", "p3d_", "tsn_")):
        return "action3d" if low.startswith(("i3d_", "slowfast_", "r2plus1d_", "c3d_", "p3d_")) else "action"
    if low.removeprefix("custom_").startswith(_DETECTION):
        return "detection"
    if low.startswith(_SEGMENTATION):
        return "segmentation"
    if low.startswith(_POSE):
        return "pose"
    if low.startswith(("monodepth", "siamrpn", "smot")):
        return "other"
    return "classification"


def sizes(name: str, family: str):
    if name.startswith("ssd_300"):
        return [(1, 3, 300, 300)]
    if name.startswith("ssd_512"):
        return [(1, 3, 512, 512)]
    if name.startswith("inceptionv3"):
        return [(1, 3, 299, 299)]
    return SIZES[family]


def inputs(name: str, shape) -> dict:
    """The arrays given to the model (float32; ids as floats, as Gluon's models take them)."""
    rng = np.random.default_rng(0)
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


def build(name: str, family: str, mx, pkgs: dict, kwargs: dict):
    """The network, unmodified package code, ``pretrained=False``."""
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
