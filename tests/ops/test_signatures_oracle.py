"""Every MXNet 1.9.1 operator we have takes MXNet's positional parameters, in MXNet's order (user code calls
``F.clip(x, 0, 1)``, ``F.slice_axis(x, 1, 0, 2)``, ``nd.random_normal(0, 1, (2, 3))``) and under MXNet's
names (``nd.power(base=x, exp=2)``).  Ours may add parameters after MXNet's."""

import inspect

import pytest

from ast_hybrid import nd

pytestmark = pytest.mark.oracle

SUBMODULES = ("", "contrib", "random", "linalg", "image")

SIGNATURES = """
import inspect
sig = {}
for sub in %r:
    mod = getattr(nd, sub) if sub else nd
    for n in dir(mod):
        f = getattr(mod, n)
        if n.startswith('_') or not callable(f) or isinstance(f, type):
            continue
        try:
            ps = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            continue
        names = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        while names and names[-1] in ('out', 'name'):
            names.pop()
        sig[(sub + '.' if sub else '') + n] = names
meta['sig'] = sig
""" % (SUBMODULES,)

# ours differs on purpose: MXNet's deprecated BatchNorm_v1 keeps its moving statistics as hidden auxiliary
# states; here they are inputs, as in BatchNorm
DIFFERENT = {"BatchNorm_v1"}


def _ours(name):
    obj = nd
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


def test_operators_take_mxnets_positional_parameters(oracle):
    theirs = oracle.run(SIGNATURES)["meta"]["sig"]
    common = [n for n in theirs if _ours(n) is not None and n not in DIFFERENT]
    assert len(common) > 300
    bad = []
    for name in common:
        params = inspect.signature(_ours(name)).parameters.values()
        ours = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if ours[:len(theirs[name])] != theirs[name]:
            bad.append(f"{name}: ours {ours}, MXNet's {theirs[name]}")
    assert not bad
