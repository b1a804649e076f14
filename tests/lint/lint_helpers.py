"""Small helpers shared by the linter's tests (imported as a sibling module)."""

from __future__ import annotations

import ast
import textwrap

from ast_hybrid.linter import check_source
from ast_hybrid.common.source import SourceFile


def model(body: str, *, params: str = "x, y", header: str = "") -> str:
    """A module with one HybridBlock whose hybrid_forward has ``body`` (dedented)."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return (f"from mxnet import nd\nfrom mxnet.gluon import HybridBlock, nn\n{header}\n"
            f"class Net(HybridBlock):\n"
            f"    def hybrid_forward(self, F, {params}):\n{body}\n")


def check(text: str, target: str = "jax"):
    return check_source(SourceFile.from_text(text, "m.py"), target=target)


def codes(text: str, target: str = "jax") -> list[str]:
    return [d.code for d in check(text, target)]


def apply_edits(text: str, diagnostics, *, unsafe: bool) -> str:
    """Apply the fixes' edits (user-file spans), back to front; fail on overlaps."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def off(line, col):
        return starts[line - 1] + col - 1

    edits = []
    for d in diagnostics:
        if d.fix is None or (d.fix.applicability == "unsafe" and not unsafe):
            continue
        for e in d.fix.edits:
            edits.append((off(e.span.line, e.span.col), off(e.span.end_line, e.span.end_col), e.content))
    edits.sort(reverse=True)
    for (lo, hi, _), (lo2, hi2, _) in zip(edits, edits[1:]):
        assert hi2 <= lo, "overlapping edits"
    for lo, hi, content in edits:
        text = text[:lo] + content + text[hi:]
    ast.parse(text)
    return text
