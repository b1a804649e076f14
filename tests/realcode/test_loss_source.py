"""MXNet 1.9.1's own ``gluon/loss.py``, run unchanged on ast-hybrid's ``F``, against real MXNet.

Every loss class of the file is built with the same constructor text in both,
called on the same inputs, op by op and hybridized.  ``PoissonNLLLoss(compute_full=True)``
updates a tensor in place (``stirling_factor *= ...``): hybridizing it must be
refused with the linter's HY001 at MXNet's own line, as MXNet's hybridize() fails on it.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.oracle, pytest.mark.corpus]

R = np.random.RandomState(0)
PRED = R.uniform(-2, 2, (4, 5)).astype("float32")
POS = R.uniform(0.1, 2, (4, 5)).astype("float32")
PROB = R.uniform(0.05, 0.95, (4, 5)).astype("float32")
SIGN = np.where(R.rand(4, 5) > 0.5, 1.0, -1.0).astype("float32")
CLASSES = R.randint(0, 5, (4,)).astype("float32")
SEQ = R.uniform(-1, 1, (2, 6, 4)).astype("float32")   # NTC
SEQ_LABEL = np.array([[1, 2, 0], [3, 3, 1]], "float32")

# constructor text, input names (arrays above, by name)
CASES = [
    ("L2Loss()", ("PRED", "POS")), ("L1Loss(weight=0.5)", ("PRED", "POS")),
    ("SigmoidBinaryCrossEntropyLoss()", ("PRED", "PROB")),
    ("SigmoidBinaryCrossEntropyLoss(from_sigmoid=True)", ("PROB", "PROB")),
    ("SoftmaxCrossEntropyLoss()", ("PRED", "CLASSES")),
    ("SoftmaxCrossEntropyLoss(sparse_label=False)", ("PRED", "PROB")),
    ("KLDivLoss()", ("PRED", "PROB")), ("KLDivLoss(from_logits=False)", ("PRED", "PROB")),
    ("CTCLoss()", ("SEQ", "SEQ_LABEL")),
    ("HuberLoss(rho=0.5)", ("PRED", "POS")), ("HingeLoss()", ("PRED", "SIGN")),
    ("SquaredHingeLoss()", ("PRED", "SIGN")), ("LogisticLoss()", ("PRED", "SIGN")),
    ("LogisticLoss(label_format='binary')", ("PRED", "PROB")),
    ("TripletLoss()", ("PRED", "POS", "PROB")),
    ("PoissonNLLLoss()", ("PRED", "POS")), ("PoissonNLLLoss(from_logits=False)", ("POS", "POS")),
    ("CosineEmbeddingLoss()", ("PRED", "POS", "CLASSES_PM")),
    ("SDMLLoss()", ("PRED", "POS")),
]
ARRAYS = dict(PRED=PRED, POS=POS, PROB=PROB, SIGN=SIGN, CLASSES=CLASSES, SEQ=SEQ, SEQ_LABEL=SEQ_LABEL,
              CLASSES_PM=np.array([1, -1, 1, -1], "float32"))


@pytest.mark.parametrize("ctor,names", CASES, ids=[c for c, _ in CASES])
def test_mxnet_loss_source_matches_mxnet(oracle, mxnet_source, ctor, names):
    arrays = {n: ARRAYS[n] for n in names}
    args = ", ".join(f"nd.array(inp[{n!r}])" for n in names)
    want = oracle.run(f"from mxnet.gluon import loss\nl = loss.{ctor}\nout['y'] = l({args}).asnumpy()",
                      **arrays)["y"]
    from mxnet.gluon import loss
    from ast_hybrid import nd
    assert loss.__file__.endswith("mxnet/gluon/loss.py")       # MXNet's own file
    block = eval(f"loss.{ctor}")                               # the same constructor text
    inputs = [nd.array(arrays[n]) for n in names]
    np.testing.assert_allclose(block(*inputs).asnumpy(), want, rtol=1e-4, atol=1e-5, err_msg=ctor)
    block.hybridize()
    np.testing.assert_allclose(block(*inputs).asnumpy(), want, rtol=1e-4, atol=1e-5, err_msg=ctor)


def test_poisson_compute_full_inplace_is_refused_with_hy001(mxnet_source):
    from mxnet.gluon import loss
    from ast_hybrid import ConversionError, nd

    block = loss.PoissonNLLLoss(compute_full=True)
    block(nd.array(PRED), nd.array(POS))                        # op by op: MXNet's NDArray semantics
    block.hybridize()
    with pytest.raises(ConversionError) as info:
        block(nd.array(PRED), nd.array(POS))
    lines = open(loss.__file__).read().splitlines()
    found = {lines[d.span.line - 1].strip() for d in info.value.diagnostics if d.code == "HY001"}
    assert "stirling_factor *= target_gt_1" in found
