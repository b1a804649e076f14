"""Gluon under ``npx.set_np()`` (issue 30 item 1) against MXNet 1.9.1: a d2l-style training loop (a
``DataLoader`` over an ``ArrayDataset``, a ``HybridSequential`` MLP, a ``HybridBlock`` whose ``hybrid_forward``
calls ``F.np``/``F.npx``, a plain ``Block`` whose ``forward`` uses ``mx.np``, softmax cross-entropy, SGD), op
by op and hybridized.  MXNet initialises and saves the parameters; we load them.  The losses per epoch, the
trained weights and the classes of what each piece returns (``mx.np`` arrays throughout) must be MXNet's."""

from __future__ import annotations

import runpy

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

CODE = """
from mxnet import np as mnp, npx, autograd, gluon, init
from mxnet.gluon import nn
npx.set_np()
try:
    class Scale(nn.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = nn.Dense(8, in_units=16)

        def hybrid_forward(self, F, x):
            h = F.npx.relu(self.dense(x))
            return h * 0.5 + F.np.ones_like(h) * 0.1

    class Head(nn.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.out = nn.Dense(3, in_units=8)

        def forward(self, x):
            return self.out(mnp.tanh(x))

    body = nn.HybridSequential()
    body.add(nn.Dense(16, activation='relu', in_units=4), Scale())
    net = nn.Sequential()
    net.add(body, Head())
    if LOAD:
        net.load_parameters(PATH)
    else:
        net.initialize(init.Normal(0.5))
        net.save_parameters(PATH)
    if HYBRID:
        body.hybridize()
    X, y = mnp.array(inp['X']), mnp.array(inp['y'])
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(X, y), batch_size=5, shuffle=False)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.3})
    losses = []
    for epoch in range(4):
        for Xb, yb in loader:
            with autograd.record():
                l = loss(net(Xb), yb)
            l.backward()
            trainer.step(Xb.shape[0])
        losses.append(float(loss(net(X), y).mean()))
    out['losses'] = onp.array(losses)
    out['w'] = body[0].weight.data().asnumpy()
    out['prob'] = npx.softmax(net(X)).asnumpy()
    meta['types'] = [type(v).__name__ for v in (Xb, yb, net(X), body(X), l, body[0].weight.data(),
                                                 body[0].weight.grad(), l.mean())]
    meta['shapes'] = [list(l.shape), list(l.mean().shape)]
finally:
    npx.reset_np()
"""


@pytest.mark.parametrize("hybrid", [False, True])
def test_d2l_style_training_in_np_mode_matches_mxnet(oracle, tmp_path, hybrid):
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (20, 4)).astype("float32")
    y = rng.integers(0, 3, 20).astype("float32")
    path = str(tmp_path / "np_mlp.params")
    head = f"import numpy as onp\nLOAD = False\nHYBRID = {hybrid}\nPATH = {path!r}\n"
    ref = oracle.run(head + CODE, X=X, y=y)

    import numpy as onp

    import ast_hybrid.mxnet as mx
    from ast_hybrid.mxnet import npx
    script = tmp_path / "d2l_style.py"          # a file: hybridize() converts from the source
    script.write_text(CODE)
    given = {"onp": onp, "LOAD": True, "HYBRID": hybrid, "PATH": path, "inp": {"X": X, "y": y}, "out": {},
             "meta": {}}
    was = mx.installed()
    mx.install()
    try:
        runpy.run_path(str(script), init_globals=given)
    finally:
        if not was:
            mx.uninstall()
    assert not npx.is_np_array()
    out, meta = given["out"], given["meta"]
    assert meta["types"] == ref["meta"]["types"] == ["ndarray"] * 8
    assert meta["shapes"] == ref["meta"]["shapes"]
    np.testing.assert_allclose(out["losses"], ref["losses"], rtol=1e-5)
    assert ref["losses"][-1] < ref["losses"][0]        # it learned: the comparison decides something
    np.testing.assert_allclose(out["w"], ref["w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["prob"], ref["prob"], rtol=1e-5, atol=1e-6)
