"""``mxnet.metric`` against MXNet 1.9.1: the same updates give the same ``get``/``get_global`` values."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

R = np.random.default_rng(1)
INPUTS = {
    "probs": R.dirichlet(np.ones(5), size=8).astype(np.float32),          # 8 samples, 5 classes
    "probs2": R.dirichlet(np.ones(5), size=6).astype(np.float32),
    "labels": R.integers(0, 5, 8).astype(np.float32),
    "labels2": R.integers(0, 5, 6).astype(np.float32),
    "bin": R.uniform(size=(10, 2)).astype(np.float32), "binlab": R.integers(0, 2, 10).astype(np.float32),
    "bin2": R.uniform(size=(7, 2)).astype(np.float32), "binlab2": R.integers(0, 2, 7).astype(np.float32),
    "reg": R.normal(size=(6,)).astype(np.float32), "reglab": R.normal(size=(6,)).astype(np.float32),
    "seq": R.dirichlet(np.ones(4), size=(3, 5)).astype(np.float32), "seqlab": R.integers(0, 4, (3, 5)).astype(np.float32),
}

CASES = [
    ("mx.metric.Accuracy()", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.Accuracy()", "A(l), A(p).argmax(axis=1)", "[A(l2), A(l)], [A(p2), A(p)]"),
    ("mx.metric.Accuracy(axis=0)", "[A(l)[:5]], [A(p)[:5].T]", "[A(l)[:5]], [A(p)[:5].T]"),
    ("mx.metric.TopKAccuracy(top_k=3)", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.TopKAccuracy(top_k=5)", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.F1()", "[A(bl)], [A(b)]", "[A(bl2)], [A(b2)]"),
    ("mx.metric.F1(average='micro')", "[A(bl)], [A(b)]", "[A(bl2)], [A(b2)]"),
    ("mx.metric.F1()", "[A(bl)], [A(b)]", "[nd.zeros((3,))], [nd.array([[1, 0], [1, 0], [1, 0]])]"),
    ("mx.metric.MCC()", "[A(bl)], [A(b)]", "[A(bl2)], [A(b2)]"),
    ("mx.metric.MCC(average='micro')", "[A(bl)], [A(b)]", "[A(bl2)], [A(b2)]"),
    ("mx.metric.MCC()", "[A(bl)], [A(b)]", "[nd.zeros((3,))], [nd.array([[1, 0], [1, 0], [1, 0]])]"),
    ("mx.metric.PearsonCorrelation()", "[A(rl)], [A(r)]", "[A(rl)[:4], A(l)], [A(r)[:4], A(p)[:, 1]]"),
    ("mx.metric.PearsonCorrelation(average='micro')", "[A(rl)], [A(r)]", "[A(rl)[:4]], [A(r)[:4] * 3]"),
    ("mx.metric.create('pearsonr', average='micro')", "[A(rl)], [A(r)]", "[A(l)], [A(p)[:, 1]]"),
    ("mx.metric.create('mcc')", "[A(bl)], [A(b)]", "[A(bl2)], [A(b2)]"),
    ("mx.metric.MAE()", "[A(rl)], [A(r)]", "[A(rl).reshape((3, 2))], [A(r).reshape((3, 2))]"),
    ("mx.metric.MSE()", "[A(rl)], [A(r)]", "[A(rl)[:4]], [A(r)[:4]]"),
    ("mx.metric.RMSE()", "[A(rl)], [A(r)]", "[A(rl)[:4]], [A(r)[:4]]"),
    ("mx.metric.CrossEntropy()", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.CrossEntropy(eps=0.1)", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.Perplexity(ignore_label=None)", "[A(l)], [A(p)]", "[A(sl)], [A(s).reshape((15, 4))]"),
    ("mx.metric.Perplexity(ignore_label=2)", "[A(l)], [A(p)]", "[A(sl)], [A(s).reshape((15, 4))]"),
    ("mx.metric.Perplexity(ignore_label=0, axis=1)", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.Loss()", "None, [A(r)]", "None, A(p)"),
    ("mx.metric.CompositeEvalMetric(['acc', mx.metric.CrossEntropy()])", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.create(['acc', 'ce', mx.metric.TopKAccuracy(2)])", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.create('acc')", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.create('top_k_accuracy', top_k=2)", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.create(lambda l, p: float((p.argmax(1) == l).mean()))", "[A(l)], [A(p)]", "[A(l2)], [A(p2)]"),
    ("mx.metric.np(lambda l, p: (float(abs(l - p).sum()), l.size), name='abs')", "[A(rl)], [A(r)]",
     "[A(rl)], [A(r) * 2]"),
]

_PRELUDE = ("A = nd.array\n"
            "p, p2, l, l2 = inp['probs'], inp['probs2'], inp['labels'], inp['labels2']\n"
            "b, b2, bl, bl2 = inp['bin'], inp['bin2'], inp['binlab'], inp['binlab2']\n"
            "r, rl, s, sl = inp['reg'], inp['reglab'], inp['seq'], inp['seqlab']\n"
            # names, and each value's type and exact digits (numpy 1 and 2 print numpy scalars differently)
            "def S(x):\n"
            "    if isinstance(x, (list, tuple)):\n        return [S(i) for i in x]\n"
            "    return x if isinstance(x, str) else [type(x).__name__, repr(float('%.*g' % (DIGITS, x)))]\n")


@pytest.mark.parametrize("ctor,first,second", CASES)
def test_metric(both, ctor, first, second):
    """Two updates, then a local reset and a third: ``get``, ``get_global``, ``get_name_value`` each time,
    to the last digit (Perplexity: 5 digits, its float32 ``nd.sum`` of logs adds in another order)."""
    digits = 5 if "Perplexity" in ctor else 17
    both(f"DIGITS = {digits}\n" + _PRELUDE + f"m = {ctor}\n"
         "meta['empty'] = S(m.get())\n"
         f"m.update({first})\n"
         "meta['one'] = S([m.get(), m.get_name_value()])\n"
         f"m.update({second})\n"
         "meta['two'] = S([m.get(), m.get_global(), m.get_global_name_value()])\n"
         "m.reset_local()\n"
         f"m.update({first})\n"
         "meta['three'] = S([m.get(), m.get_global()])\n"
         "m.reset()\n"
         "meta['reset'] = S([m.get(), m.get_global()])\n", **INPUTS)


def test_f1_refuses_more_than_two_classes(both):
    both("m = mx.metric.F1()\ntry:\n    m.update([nd.array([0, 1, 2])], [nd.ones((3, 2))])\n"
         "except ValueError as e:\n    meta['e'] = str(e)\n")


def test_label_shape_mismatch_is_mxnet_s_error(both):
    both("try:\n    mx.metric.Accuracy().update([nd.zeros(3), nd.zeros(3)], [nd.zeros((3, 2))])\n"
         "except ValueError as e:\n    meta['e'] = str(e)\n"
         "try:\n    mx.metric.create('no_such_metric')\nexcept AssertionError as e:\n    meta['create'] = str(e)\n")
