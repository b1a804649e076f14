"""Gluon losses against MXNet 1.9.1 (same constructor text, same inputs)."""

import numpy as np
import pytest

from ast_hybrid.gluon import loss as gloss  # noqa: F401  (used by eval)

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(5)
PRED = RNG.standard_normal((4, 5)).astype("float32")
CASES = [
    ("gloss.L2Loss()", RNG.standard_normal((4, 5)).astype("float32")),
    ("gloss.L1Loss(weight=0.5)", RNG.standard_normal((4, 5)).astype("float32")),
    ("gloss.SoftmaxCrossEntropyLoss()", RNG.integers(0, 5, (4,)).astype("float32")),
    ("gloss.SoftmaxCrossEntropyLoss(sparse_label=False)", np.eye(5, dtype="float32")[[0, 3, 1, 4]]),
    ("gloss.SigmoidBinaryCrossEntropyLoss()", RNG.integers(0, 2, (4, 5)).astype("float32")),
]


@pytest.mark.parametrize("ctor,label", CASES, ids=[c for c, _ in CASES])
def test_loss_matches_mxnet(oracle, ctor, label):
    ref = oracle.run(f"from mxnet.gluon import loss as gloss\nl = {ctor}\n"
                     "out['y'] = l(nd.array(inp['p']), nd.array(inp['l'])).asnumpy()", p=PRED, l=label)
    for hybridize in (False, True):
        fn = eval(ctor)
        if hybridize:
            fn.hybridize()
        np.testing.assert_allclose(np.asarray(fn(PRED, label)), ref["y"], rtol=1e-5, atol=1e-6)
