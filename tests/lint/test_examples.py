"""examples/lint_model.py shows every rule; its fixed twin lints clean (read, never imported)."""

from pathlib import Path

import pytest

from ast_hybrid.linter import check_source
from ast_hybrid.common.rules import RULES
from ast_hybrid.common.source import read_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LINT_CODES = {c for c, r in RULES.items() if r.origin == "lint" and c != "HY020"}


def test_model_triggers_every_lint_rule():
    found = set()
    for target in ("jax", "mxnet"):
        found |= {d.code for d in check_source(read_file(EXAMPLES / "lint_model.py"), target=target)}
    assert found == LINT_CODES


@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_fixed_model_is_clean(target):
    assert check_source(read_file(EXAMPLES / "lint_model_fixed.py"), target=target) == []
