"""Op coverage measured against real code: every ``F.<op>`` that MXNet 1.9.1's own ``gluon/nn``, ``gluon/rnn``,
``gluon/loss.py`` and ``gluon/model_zoo/vision`` use must exist in our ``F`` (``ast_hybrid.nd``).

The sites are collected statically (``ast``; the tree is read, never imported): attribute chains on the name
``F`` (calls and references such as ``fc = F.FullyConnected``), and ``getattr(F, name)`` with the op names
the file spells (``op_name='Convolution'``).  Chains through ``F.np`` / ``F.npx`` (and the lower-case op names
conv_layers picks for them) are MXNet 2's numpy-compatible branch, taken only under ``is_np_array()``: they
are reported, not required.  Anything else left out must be in ``NOT_DONE`` with a reason.
"""

from __future__ import annotations

import ast
import collections

import pytest

from ast_hybrid import nd

pytestmark = pytest.mark.corpus

SCOPE = ("nn", "rnn", "model_zoo/vision")
NUMPY_BRANCH = ("np", "npx")
NOT_DONE: dict[str, str] = {}     # op -> why it is deliberately not there (reviewed); empty: all are there


def _chain(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "F":
        return list(reversed(parts))
    return None


def collect(gluon_tree):
    """{op name: [file:line, ...]} of every F site in scope, and the numpy-branch sites apart."""
    files = [p for sub in SCOPE for p in sorted((gluon_tree / sub).rglob("*.py"))] + [gluon_tree / "loss.py"]
    sites, numpy_sites = collections.defaultdict(list), collections.defaultdict(list)
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                child.parent = node
        where = path.relative_to(gluon_tree).as_posix()
        op_names = {kw.value.value for kw in ast.walk(tree) if isinstance(kw, ast.keyword) and kw.arg == "op_name"
                    and isinstance(kw.value, ast.Constant)}
        op_names |= {n.args[1].value for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute) and n.func.attr == "pop" and len(n.args) == 2
                     and isinstance(n.args[0], ast.Constant) and n.args[0].value == "op_name"
                     and isinstance(n.args[1], ast.Constant)}
        for node in ast.walk(tree):
            chain = None
            if isinstance(node, ast.Attribute) and not isinstance(getattr(node, "parent", None), ast.Attribute):
                chain = _chain(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "F":
                names = [node.args[1].value] if isinstance(node.args[1], ast.Constant) else sorted(op_names)
                for name in names:
                    target = numpy_sites if name.islower() and name.lower() in {"convolution", "deconvolution"} \
                        else sites
                    target[name].append(f"{where}:{node.lineno}")
            if chain:
                target = numpy_sites if chain[0] in NUMPY_BRANCH else sites
                target[".".join(chain)].append(f"{where}:{node.lineno}")
    return sites, numpy_sites


def _resolve(name):
    obj = nd
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


@pytest.fixture(scope="module")
def found(gluon_tree):
    return collect(gluon_tree)


def test_every_op_gluon_calls_is_in_F(found):
    sites, numpy_sites = found
    missing = {op: where[:3] for op, where in sites.items() if _resolve(op) is None and op not in NOT_DONE}
    n_sites = sum(len(v) for v in sites.values())
    print(f"\nF ops used by mxnet/gluon nn+rnn+loss+model_zoo/vision: {len(sites)} distinct at {n_sites} sites; "
          f"numpy-branch (np/npx, not required): {len(numpy_sites)} distinct at "
          f"{sum(len(v) for v in numpy_sites.values())} sites; not done: {len(NOT_DONE)}")
    assert not missing, f"ops Gluon calls that F lacks: {missing}"
    assert len(sites) >= 40, f"the collector found only {len(sites)} ops: it is broken"


def test_not_done_entries_are_still_missing_and_explained(found):
    for op, why in NOT_DONE.items():
        assert _resolve(op) is None, f"{op} is implemented now: drop it from NOT_DONE"
        assert len(why) > 20, f"{op}: give a real reason"
