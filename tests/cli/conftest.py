"""A stand-in checker for the CLI tests: HY001 with a fix on every ``NAME += EXPR`` line.

The real rules live in :mod:`ast_hybrid.linter` (another module); these
tests exercise the front (rendering, config, walking, fixing) with findings
whose positions and fixes we know exactly.
"""

import re

import pytest

from ast_hybrid.common.diagnostics import Diagnostic, Edit, Fix, Severity
from ast_hybrid.common.source import SourceError, Span

_AUG = re.compile(r"^(\s*)(\w+) ([-+*/])= (.+?)\s*$")


def fake_check(src, *, target="jax"):
    try:
        src.parse_ast()
    except SourceError as err:
        return [Diagnostic("HY020", err.message, err.path, err.span)]
    out = []
    for i, line in enumerate(src.text.split("\n"), 1):
        line = line.rstrip("\r")
        m = _AUG.match(line)
        if m:
            ind, name, op, rhs = m.groups()
            span = Span(i, len(ind) + 1, i, len(line.rstrip()) + 1)
            appl = "unsafe" if "alias" in rhs else "safe"
            out.append(Diagnostic("HY001", f"in-place `{op}=` on tensor `{name}`", src.path, span,
                                  help=f"write `{name} = {name} {op} {rhs}`",
                                  fix=Fix(f"Replace with `{name} = {name} {op} {rhs}`",
                                          (Edit(span, f"{name} = {name} {op} {rhs}"),), appl)))
        if "print(" in line:
            col = line.index("print(") + 1
            out.append(Diagnostic("HY006", "`print` of a tensor", src.path,
                                  Span(i, col, i, len(line) + 1), severity=Severity.NOTE))
    return out


@pytest.fixture
def fake_linter(monkeypatch):
    import ast_hybrid.linter as linter
    monkeypatch.setattr(linter, "check_source", fake_check)
    return fake_check
