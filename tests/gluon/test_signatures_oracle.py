"""Every public class of MXNet 1.9.1's ``gluon``, ``gluon.nn``, ``gluon.rnn``, ``gluon.loss``, ``gluon.contrib.nn``
and ``gluon.contrib.rnn`` exists here with MXNet's constructor: the same parameters in the same order (user code
passes them positionally: ``rnn.RNN(5, 2, 'tanh')``, ``nn.AvgPool2D(3, 2, 1, True)``), the same defaults, and
``**kwargs`` where MXNet has it.  Ours may add keyword parameters after MXNet's."""

import importlib
import inspect

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

MODULES = ["gluon", "gluon.nn", "gluon.rnn", "gluon.loss", "gluon.contrib.nn", "gluon.contrib.rnn"]

SIGNATURES = """
import inspect, importlib
sig = {}
for m in %r:
    mod = importlib.import_module('mxnet.' + m)
    for n in dir(mod):
        c = getattr(mod, n)
        if isinstance(c, type) and not n.startswith('_'):
            ps = inspect.signature(c.__init__).parameters.values()
            sig[m + '.' + n] = [(p.name, str(p.kind), repr(p.default)) for p in ps]
meta['sig'] = sig
""" % MODULES

# defaults that differ in spelling only, each checked below
SAME_DEFAULT = {
    ("gluon.Parameter", "dtype"): ("<class 'numpy.float32'>", "'float32'"),
    ("gluon.nn.PReLU", "alpha_initializer"): None,           # MXNet: Constant(0.25) object; ours None -> 0.25
}
WIDER = {"gluon.SymbolBlock", "gluon.nn.SymbolBlock"}        # ours: outputs/inputs optional (SymbolBlock.imports)


@pytest.fixture(scope="module")
def mxnet_signatures(oracle):
    return oracle.run(SIGNATURES)["meta"]["sig"]


def _ours(name):
    module, cls = name.rsplit(".", 1)
    return getattr(importlib.import_module("ast_hybrid." + module), cls, None)


def test_every_class_is_here(mxnet_signatures):
    missing = sorted(n for n in mxnet_signatures if _ours(n) is None)
    assert not missing


@pytest.mark.parametrize("module", MODULES)
def test_constructors_are_mxnets(mxnet_signatures, module):
    bad = []
    for name, theirs in mxnet_signatures.items():
        if name.rsplit(".", 1)[0] != module or _ours(name) is None:
            continue
        ours = [(p.name, str(p.kind), repr(p.default)) for p in inspect.signature(_ours(name).__init__).parameters
                .values()]
        var = [p for p in theirs if p[1] == "VAR_KEYWORD"]
        if var and not any(p[1] == "VAR_KEYWORD" for p in ours):
            bad.append(f"{name}: no **kwargs")
        fixed_theirs = [p for p in theirs if p[1] != "VAR_KEYWORD"]
        fixed_ours = [p for p in ours if p[1] != "VAR_KEYWORD"]
        for i, t in enumerate(fixed_theirs):
            o = fixed_ours[i] if i < len(fixed_ours) else None
            if o is None or o[0] != t[0] or o[1] != t[1]:
                bad.append(f"{name}: parameter {i} is {o and o[0]!r}, MXNet's is {t[0]!r}")
                break
            if o[2] != t[2] and (name, t[0]) not in SAME_DEFAULT and name not in WIDER:
                bad.append(f"{name}({t[0]}=...): default {o[2]}, MXNet's {t[2]}")
        for extra in fixed_ours[len(fixed_theirs):]:
            if extra[2] == repr(inspect.Parameter.empty):
                bad.append(f"{name}: extra required parameter {extra[0]!r}")
    assert not bad


def test_defaults_spelled_differently_mean_the_same():
    from ast_hybrid.gluon import Parameter, nn

    assert np.dtype(Parameter("p", shape=(1,)).dtype) == np.float32
    prelu = nn.PReLU()
    prelu.initialize()
    prelu(np.ones((1, 3), "float32"))
    assert np.asarray(prelu.alpha.data()).tolist() == [0.25]
