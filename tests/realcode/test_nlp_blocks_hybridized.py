"""GluonNLP's and MXNet's own plain ``nn.Block`` models, hybridized (issue 31, ``gluon/whole.py``: MXNet runs
them op by op whatever ``hybridize()`` asks): one compiled program, the same outputs and gradients as op by op.

GluonNLP 0.10.0 unmodified: ``BigRNN`` (embedding, LSTMP encoder unrolled over time, dense decoder; its
``forward`` a Block's) and ``NMTModel`` (a Block around a transformer encoder and decoder, source and target
embeddings and projection; valid lengths as inputs).  (GluonNLP's ``RNNCellLayer`` fails under MXNet 1.9.1
itself with a cell's own begin state; MXNet's ``SequentialRNNCell`` steps its cells in ``__call__``, never
through a forward, in MXNet as here: neither is used.)"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

from tests.realcode import gluon_packages

FOLDER = gluon_packages.packages_folder()


@pytest.fixture(scope="module")
def gluonnlp():
    if FOLDER is None:
        pytest.skip("GLUON PACKAGES UNAVAILABLE (no gluon-pkgs folder, $AST_HYBRID_GLUON_PKGS unset): NOT run")
    import ast_hybrid.mxnet as compat

    was_installed = compat.installed()
    try:
        yield gluon_packages.import_package("gluonnlp", FOLDER)
    finally:
        if not was_installed:
            compat.uninstall()


def _both_ways(make, inputs):
    """Outputs and every parameter's gradient of ``make()``'s block on ``inputs``, op by op and hybridized
    (the same initial parameters), and the hybridized block."""
    import mxnet as mx
    from mxnet import autograd

    from ast_hybrid.gluon.whole import HybridizeFallbackWarning

    runs = []
    for hybridize in (False, True):
        mx.random.seed(7)
        net = make()
        net.initialize(mx.init.Xavier())
        net(*inputs)                    # shapes (deferred), then the same parameters both ways
        if hybridize:
            net.hybridize()
        with warnings.catch_warnings():
            warnings.simplefilter("error", HybridizeFallbackWarning)      # a fallback fails the test
            with autograd.record():
                out = net(*inputs)
                flat = _arrays(out)
                loss = sum((o * o).sum() for o in flat)
            loss.backward()
        grads = {k: p.grad().asnumpy() for k, p in sorted(net._collect_params_with_prefix().items())
                 if p.grad_req != "null"}
        runs.append(([o.asnumpy() for o in flat], grads, net))
    return runs


def _arrays(out):
    if isinstance(out, (list, tuple)):
        return [a for item in out for a in _arrays(item)]
    return [] if out is None else [out]


def _same(runs):
    (outs0, grads0, _), (outs1, grads1, net) = runs
    assert net.__dict__.get("_whole") is not None and net._whole.compiled is not None, "not compiled"
    for a, b in zip(outs0, outs1):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert sorted(grads0) == sorted(grads1)
    top = max(np.abs(g).max() for g in grads0.values())
    for k in grads0:
        np.testing.assert_allclose(grads1[k], grads0[k], rtol=1e-4, atol=1e-6 * top, err_msg=k)


def test_gluonnlp_big_rnn(gluonnlp):
    from mxnet import nd

    def make():
        return gluonnlp.model.language_model.BigRNN(30, 8, 16, 2, 6)

    tokens = nd.array(np.random.RandomState(1).randint(0, 30, (4, 2)))          # TN
    state = make().begin_state(batch_size=2, func=nd.zeros)
    _same(_both_ways(make, [tokens, state]))


def test_gluonnlp_nmt_model_with_a_transformer(gluonnlp):
    from mxnet import nd

    def make():
        encoder, decoder, one_step = gluonnlp.model.transformer.get_transformer_encoder_decoder(
            num_layers=2, num_heads=2, units=8, hidden_size=16, dropout=0.0, max_src_length=10, max_tgt_length=10)
        src_vocab = gluonnlp.Vocab(collections.Counter("abcdefghij"))
        tgt_vocab = gluonnlp.Vocab(collections.Counter("klmnopqrst"))
        return gluonnlp.model.translation.NMTModel(src_vocab, tgt_vocab, encoder, decoder, one_step,
                                                   embed_size=8, prefix="nmt_")

    rs = np.random.RandomState(3)
    src, tgt = nd.array(rs.randint(0, 14, (2, 7))), nd.array(rs.randint(0, 14, (2, 6)))
    src_len, tgt_len = nd.array([7, 5]), nd.array([6, 4])
    _same(_both_ways(make, [src, tgt, src_len, tgt_len]))
