"""Our diagnostics as LSP's: ranges in the client's encoding, fixes as edits, rule pages as hover.

A :class:`~ast_hybrid.common.source.Span` is 1-based lines and 1-based character
(code point) columns, end exclusive; LSP's ranges are 0-based lines and columns
counted in the unit the client and server agreed on (UTF-16 by default, the
document's ``position_codec`` converts).  A finding without a position (a file
that cannot be decoded, an internal error) is put on the first line.

Every function takes a pygls ``TextDocument`` (its lines and codec) and returns
lsprotocol types; none of them talks to the client.
"""

from __future__ import annotations

import re

from lsprotocol import types
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from ast_hybrid.common.diagnostics import Severity
from ast_hybrid.common.rule_pages import page
from ast_hybrid.common.rules import RULES
from ast_hybrid.linter.noqa import ALL, NOQA_COMMENT, noqa_map

__all__ = ["SOURCE", "FIX_ALL", "to_range", "to_lsp", "whole_range", "quick_fixes", "noqa_action",
           "hover_text", "contains", "overlaps"]

#: the ``source`` of every diagnostic we publish (editors show it beside the code)
SOURCE = "ast-hybrid"
#: the code action kind of "apply every safe fix", as ruff's server names its own
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"

_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning,
             Severity.NOTE: types.DiagnosticSeverity.Information}
_CODE = re.compile(r"\bHY\d{3}\b")


def _position(doc, line: int, col: int) -> ServerTextPosition:
    """A 1-based (line, character column) of ours as a 0-based server position, clamped to the text."""
    lines = doc.lines
    if not lines:
        return ServerTextPosition(0, 0)
    if line > len(lines):
        return ServerTextPosition(len(lines) - 1, len(lines[-1].rstrip("\r\n")))
    row = max(line, 1) - 1
    width = len(lines[row].rstrip("\r\n"))
    return ServerTextPosition(row, min(max(col, 1) - 1, width))


def to_range(doc, span) -> types.Range:
    """``span`` (ours; None: no position) as a range in the client's units."""
    if span is None:
        first = doc.lines[0].rstrip("\r\n") if doc.lines else ""
        return doc.range_to_client_units(ServerTextRange(ServerTextPosition(0, 0),
                                                         ServerTextPosition(0, len(first))))
    return doc.range_to_client_units(ServerTextRange(_position(doc, span.line, span.col),
                                                     _position(doc, span.end_line, span.end_col)))


def to_lsp(doc, d) -> types.Diagnostic:
    """One finding: its code, severity (a note is Information), message and help, related places."""
    message = d.message if not d.help else f"{d.message}\nhelp: {d.help}"
    related = [types.DiagnosticRelatedInformation(types.Location(doc.uri, to_range(doc, span)), label)
               for span, label in (d.related or ())]
    try:
        severity = _SEVERITY[Severity(d.severity)]
    except ValueError:
        severity = types.DiagnosticSeverity.Error
    return types.Diagnostic(range=to_range(doc, d.span), message=message, severity=severity, code=d.code,
                            source=SOURCE, related_information=related or None)


def whole_range(doc) -> types.Range:
    """From the document's start to its end (an edit over it replaces the whole text)."""
    lines = doc.lines
    if not lines:
        return types.Range(types.Position(0, 0), types.Position(0, 0))
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return types.Range(types.Position(0, 0), types.Position(len(lines), 0))
    end = ServerTextPosition(len(lines) - 1, len(last))
    return types.Range(types.Position(0, 0), doc.position_to_client_units(end))


def _edit(doc, e) -> types.TextEdit:
    return types.TextEdit(range=to_range(doc, e.span), new_text=e.content)


def quick_fixes(doc, d, lsp_diagnostic) -> list[types.CodeAction]:
    """The finding's fix as a quick fix; an unsafe one says so in its title and is never preferred."""
    if d.fix is None or not d.fix.edits:
        return []
    unsafe = d.fix.applicability != "safe"
    title = f"{d.fix.message} ({d.code}{', unsafe: may change meaning' if unsafe else ''})"
    return [types.CodeAction(
        title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[lsp_diagnostic], is_preferred=not unsafe,
        edit=types.WorkspaceEdit(changes={doc.uri: [_edit(doc, e) for e in d.fix.edits]}))]


def noqa_action(doc, src, d, lsp_diagnostic) -> types.CodeAction | None:
    """``# noqa: CODE`` on the line the finding starts on (added to a ``# noqa:`` already there)."""
    if d.span is None or not 1 <= d.span.line <= len(doc.lines):
        return None
    row = d.span.line - 1
    text = doc.lines[row].rstrip("\r\n")
    entry = noqa_map(src).get(d.span.line)
    if entry is ALL or (entry and d.code in entry):
        return None
    found = NOQA_COMMENT.search(text) if entry else None
    if found and found.group("codes"):
        at, insert = found.end(), f", {d.code}"
    else:
        at, insert = len(text.rstrip()), f"  # noqa: {d.code}"
    where = doc.range_to_client_units(ServerTextRange(ServerTextPosition(row, at), ServerTextPosition(row, at)))
    return types.CodeAction(
        title=f"Disable {d.code} for this line", kind=types.CodeActionKind.QuickFix, diagnostics=[lsp_diagnostic],
        edit=types.WorkspaceEdit(changes={doc.uri: [types.TextEdit(range=where, new_text=insert)]}))


def contains(rng: types.Range, pos: types.Position) -> bool:
    """Is ``pos`` inside ``rng`` (its end included: the cursor just after a finding still hovers it)?"""
    start, end = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    return start <= (pos.line, pos.character) <= end


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Do two ranges share a position (touching ends count: a cursor is an empty range)?"""
    return ((a.start.line, a.start.character) <= (b.end.line, b.end.character)
            and (b.start.line, b.start.character) <= (a.end.line, a.end.character))


def hover_text(doc, pos: types.Position, published) -> str | None:
    """The pages of the rules found under the cursor, else of an ``HY...`` code written there
    (a ``# noqa: HY001``); ``published`` is ``[(ours, lsp)]`` for the document."""
    codes = []
    for d, lsp_d in published:
        if contains(lsp_d.range, pos) and d.code not in codes:
            codes.append(d.code)
    if not codes and pos.line < len(doc.lines):
        line = doc.lines[pos.line]
        col = doc.position_from_client_units(pos).character
        codes = [m.group() for m in _CODE.finditer(line) if m.start() <= col <= m.end()]
    pages = [page(RULES[c]).rstrip() for c in codes if c in RULES]
    return "\n\n---\n\n".join(pages) or None
