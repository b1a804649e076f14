"""The linter on real Gluon code nobody here wrote: MXNet 1.9.1's own ``mxnet/gluon`` tree.

Every finding below was reviewed by hand (see the linter's report):
- loss.py PoissonNLLLoss: ``stirling_factor *= ...`` and ``loss += ...`` (compute_full=True): HY001;
- loss.py SDMLLoss: ``x1.shape[0]`` in hybrid_forward (target mxnet): HY008;
- contrib/rnn VariationalDropoutCell and rnn ZoneoutCell keep masks/outputs on ``self``: HY012.
"""

import collections

import pytest

from ast_hybrid.linter import check_source
from ast_hybrid.common.source import read_file


def _lint_tree(tree, target):
    found = []
    for path in sorted(tree.rglob("*.py")):
        for d in check_source(read_file(path), target=target):
            found.append((path.relative_to(tree).as_posix(), d))
    return found


@pytest.mark.corpus
@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_gluon_tree_no_internal_errors(gluon_tree, target):
    found = _lint_tree(gluon_tree, target)
    assert [d for _, d in found if d.code in ("HY999", "HY020")] == []


@pytest.mark.corpus
def test_gluon_tree_finds_poisson_nll_inplace(gluon_tree):
    found = _lint_tree(gluon_tree, "mxnet")
    text = (gluon_tree / "loss.py").read_text().splitlines()
    hy001 = [(p, d) for p, d in found if d.code == "HY001"]
    lines = {text[d.span.line - 1].strip() for p, d in hy001 if p == "loss.py"}
    assert "stirling_factor *= target_gt_1" in lines
    # inside PoissonNLLLoss.hybrid_forward
    start = next(i for i, ln in enumerate(text, 1) if ln.startswith("class PoissonNLLLoss"))
    assert all(d.span.line > start for p, d in hy001)


@pytest.mark.corpus
def test_gluon_tree_findings_are_the_reviewed_ones(gluon_tree):
    counts = {t: collections.Counter(d.code for _, d in _lint_tree(gluon_tree, t)) for t in ("jax", "mxnet")}
    assert counts["mxnet"] == {"HY001": 2, "HY008": 1, "HY012": 4}
    assert counts["jax"] == {"HY001": 2, "HY012": 4}
