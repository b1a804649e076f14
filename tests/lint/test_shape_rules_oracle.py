"""HY016 (`x.reshape(a, b)`) and HY017 (an operator NDArray broadcasts and a Symbol does not), against MXNet 1.9.1:
each case the linter reports on target mxnet works imperatively and breaks hybridized (an error, or another
shape), and the source the linter's own safe fix writes gives MXNet's imperative values hybridized too."""

import textwrap

import pytest

from lint_helpers import apply_edits, check

HEAD = "import mxnet as mx\nfrom mxnet import nd\nfrom mxnet.gluon import HybridBlock\n"
#: forward bodies over x of shape (2, 3) (gluon-tacotron2, yolov4-gluoncv, GluonCV's GroupNorm, accel-brain-code,
#: tmnt, MXFusion: the shapes of the real trees' findings)
CASES = {
    "reshape-error": ("HY016", "return x.reshape(-1, 2)"),
    "reshape-silent": ("HY016", "return x.reshape(-1, 1)"),
    "reshape-three": ("HY016", "return x.reshape(1, -1, 3)"),
    "keepdims": ("HY017", "return x - x.max(axis=1, keepdims=True)"),
    "keepdims-int": ("HY017", "return x - F.sum(F.square(x), axis=1, keepdims=1)"),    # gluon_GMLoss's spelling
    "ones-like": ("HY017", "return x / F.sum(F.ones_like(x))"),
    "named-mean": ("HY017", "m = x.mean()\nreturn (x - m) ** 2"),
    "compare": ("HY017", "return x > F.mean(x)"),
    "outer": ("HY017", "return F.expand_dims(x, 2) * F.expand_dims(x, 1)"),
}


def _module(body):
    forward = "class Net(HybridBlock):\n    def hybrid_forward(self, F, x):\n"
    return HEAD + forward + textwrap.indent(body, " " * 8) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_reported_on_mxnet_only_with_a_safe_fix(name):
    code, body = CASES[name]
    src = _module(body)
    found = [d for d in check(src, "mxnet") if d.code == code]
    assert len(found) == 1 and found[0].fix is not None and found[0].fix.applicability == "safe"
    assert [d.code for d in check(src, "jax")] == []
    fixed = apply_edits(src, found, unsafe=False)
    assert [d.code for d in check(fixed, "mxnet")] == []


@pytest.mark.oracle
def test_mxnet_breaks_each_case_and_runs_its_fix(oracle):
    sources = {}
    for name, (code, body) in CASES.items():
        src = _module(body)
        sources[name] = (src, apply_edits(src, check(src, "mxnet"), unsafe=False))
    run = f"sources = {sources!r}\n" + """
import numpy as np
x = nd.array(np.arange(6, dtype='float32').reshape(2, 3) + 1)
for name, (bad, good) in sources.items():
    for which, text in (('bad', bad), ('good', good)):
        scope = {}
        exec(text, scope)
        out = {}
        for mode in ('imperative', 'hybridized'):
            net = scope['Net']()
            if mode == 'hybridized':
                net.hybridize()
            try:
                y = net(x).asnumpy()
                out[mode] = [list(y.shape), y.ravel().tolist()]
            except Exception as exc:
                out[mode] = type(exc).__name__
        meta[name + ' ' + which] = out
"""
    got = oracle.run(run)["meta"]
    for name in CASES:
        bad, good = got[name + " bad"], got[name + " good"]
        assert isinstance(bad["imperative"], list), (name, bad)          # NDArray's meaning
        assert bad["hybridized"] != bad["imperative"], (name, bad)       # an error, or another shape
        assert good["imperative"] == good["hybridized"] == bad["imperative"], (name, good, bad)
