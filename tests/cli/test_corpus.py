"""The CLI over real Gluon code nobody here wrote: no internal error, no traceback."""

import json

import pytest

from ast_hybrid.cli import main


@pytest.mark.corpus
@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_gluon_tree_lints_without_internal_errors(gluon_tree, target, capsys):
    rc = main(["lint", "--isolated", "--target", target, "--output-format", "json", str(gluon_tree)])
    data = json.loads(capsys.readouterr().out)
    assert [d for d in data if d["code"] in ("HY999", "HY020")] == []
    assert rc in (0, 1)
