"""Renderers for diagnostics, modelled on ruff's output formats.

- ``text`` (alias ``full``, ruff's name): ``path:line:col: CODE [*] message``, a numbered source excerpt
  with carets under the exact span, a ``help:`` line, and a summary;
- ``concise``: only the first line of each (ruff's ``concise``), and the summary;
- ``json``: ruff's JSON shape (``code``, ``message``, ``filename``,
  ``location``, ``end_location``, ``fix``, ``url``, ``noqa_row``; plus
  ``severity`` and ``related``: the places a finding lists, each with its location and message, as an
  imperative-only path's note lists its constructs; ``url`` is the rule's page, a path in ast-hybrid's repository,
  ``docs/rules/HY001.md``);
- ``sarif``: SARIF 2.1.0, one run, the rule catalogue as ``tool.driver.rules``;
- ``github``: GitHub Actions workflow commands (``::error ...::``).

Nothing here prints: every function returns a string.

>>> from ast_hybrid.common.diagnostics import Diagnostic
>>> from ast_hybrid.common.source import Span
>>> d = Diagnostic("HY001", "in-place `+=` on tensor `x`", "m.py", Span(2, 5, 2, 11),
...                help="write `x = x + 1`",
...                source_lines={1: "def f(F, x):", 2: "    x += 1"})
>>> print(render_text([d]))
m.py:2:5: HY001 in-place `+=` on tensor `x`
  |
1 | def f(F, x):
2 |     x += 1
  |     ^^^^^^ HY001
  |
  = help: write `x = x + 1`
<BLANKLINE>
>>> print(render_github([d]))  # doctest: +ELLIPSIS
::error title=ast-hybrid (HY001),file=m.py,line=2,col=5,endLine=2,endColumn=11::HY001 in-place ...
"""

from __future__ import annotations

import json
import os
from collections import Counter

from .diagnostics import Severity

__all__ = ["FORMATS", "STATISTICS_FORMATS", "render", "render_concise", "render_text", "render_summary",
           "render_statistics", "render_json", "render_sarif", "render_github", "is_fixable"]

FORMATS = ("text", "full", "concise", "json", "sarif", "github")
#: the formats ``--statistics`` can be written in (ruff's: its text layout, or JSON)
STATISTICS_FORMATS = ("text", "full", "concise", "json")

# ANSI styles, used only when color=True.
_BOLD, _RED, _YELLOW, _CYAN, _BLUE, _GREEN, _RESET = (
    "\x1b[1m", "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[34m", "\x1b[32m", "\x1b[0m")
_SEV_COLOR = {Severity.ERROR: _RED, Severity.WARNING: _YELLOW, Severity.NOTE: _CYAN}


def is_fixable(d, unsafe: bool = False) -> bool:
    """Would ``--fix`` (``--unsafe-fixes`` when ``unsafe``) apply ``d``'s fix?"""
    return d.fix is not None and (unsafe or d.fix.applicability == "safe")


def _severity(d) -> Severity:
    try:
        return Severity(d.severity)
    except ValueError:
        return Severity.ERROR


class _Lines:
    """The user's lines, from ``Diagnostic.source_lines`` or the file (cached per file)."""

    def __init__(self):
        self._files: dict[str, list[str] | None] = {}

    def get(self, d, lineno: int) -> str | None:
        if d.source_lines:
            text = d.source_lines.get(lineno)
            if text is not None:
                return text.rstrip("\r\n")
        lines = self._file(d.path)
        if lines is None or not 1 <= lineno <= len(lines):
            return None
        return lines[lineno - 1]

    def _file(self, path: str) -> list[str] | None:
        if path not in self._files:
            lines = None
            try:
                from .source import read_file  # late: renderers must not fail on import
                lines = read_file(path).text.split("\n")
                lines = [ln.rstrip("\r") for ln in lines]
            except Exception:  # gone, unreadable, undecodable: just no excerpt
                lines = None
            self._files[path] = lines
        return self._files[path]


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color and text else text


def render_text(diagnostics, color: bool = False, *, unsafe_fixes: bool = False,
                show_source: bool = True) -> str:
    """ruff's ``full`` format: one block per diagnostic, separated by blank lines."""
    cache = _Lines()
    blocks = []
    for d in diagnostics:
        blocks.append(_text_block(d, cache, color, unsafe_fixes, show_source))
    return "\n".join(blocks)


def _text_block(d, cache: _Lines, color: bool, unsafe_fixes: bool, show_source: bool) -> str:
    sev = _severity(d)
    out = [_head(d, color, unsafe_fixes)]
    if show_source and d.span is not None:
        out.extend(_excerpt(d, cache, color, sev))
    if d.help:
        if len(out) == 1:
            out.append("  |")
        out.append(f"  = {_paint('help', _BOLD, color)}: {d.help}")
    for span, label in getattr(d, "related", ()) or ():
        out.append(f"  = note: {label} ({d.path}:{span.line}:{span.col})")
    if d.fix is not None and not is_fixable(d, unsafe_fixes):
        out.append(f"  = fix: {d.fix.message} (unsafe: needs --unsafe-fixes)")
    out.append("")
    return "\n".join(out)


def _head(d, color: bool, unsafe_fixes: bool) -> str:
    """``path:line:col: CODE [*] [note:] message``: a diagnostic's first line (all of it in ``concise``)."""
    sev = _severity(d)
    loc = f"{d.span.line}:{d.span.col}:" if d.span else ""
    head = _paint(d.path, _BOLD, color) + ":" + loc + " "
    head += _paint(d.code, _SEV_COLOR[sev] + _BOLD, color)
    if is_fixable(d, unsafe_fixes):
        head += " " + _paint("[*]", _CYAN, color)
    if sev is not Severity.ERROR:
        head += " " + _paint(f"{sev.value}:", _SEV_COLOR[sev], color)
    return head + f" {d.message}"


def render_concise(diagnostics, color: bool = False, *, unsafe_fixes: bool = False) -> str:
    """ruff's ``concise`` format: one line per diagnostic.

    >>> from ast_hybrid.common.diagnostics import Diagnostic
    >>> from ast_hybrid.common.source import Span
    >>> print(render_concise([Diagnostic("HY010", "Python `if` on tensor `x`", "m.py", Span(3, 8, 3, 15),
    ...                                  severity=Severity.NOTE)]))
    m.py:3:8: HY010 note: Python `if` on tensor `x`
    """
    return "\n".join(_head(d, color, unsafe_fixes) for d in diagnostics)


def _excerpt(d, cache: _Lines, color: bool, sev: Severity) -> list[str]:
    s = d.span
    first, last = s.line, max(s.end_line, s.line)
    # An end at column 1 of the next line means "up to the end of the previous one".
    if last > first and s.end_col <= 1:
        last -= 1
    ctx_lo = max(first - 1, 1)
    shown = list(range(ctx_lo, last + 1))
    if len(shown) > 8:  # long multi-line spans: head and tail
        shown = shown[:4] + [None] + shown[-3:]
    texts = {n: cache.get(d, n) for n in shown if n is not None}
    if texts.get(first) is None:
        return []  # the file is gone or changed: no excerpt, never a crash
    after = cache.get(d, last + 1)
    if after and after.strip():  # one line of context after, as ruff shows
        shown.append(last + 1)
        texts[last + 1] = after
    width = len(str(shown[-1]))
    gutter = " " * width + " |"
    out = [_paint(gutter, _BLUE, color)]
    mark = _SEV_COLOR[sev]
    for n in shown:
        if n is None:
            out.append(_paint(" " * width + " :", _BLUE, color))
            continue
        text = (texts.get(n) or "").expandtabs(1)
        out.append(_paint(f"{n:>{width}} |", _BLUE, color) + (f" {text}" if text else ""))
        if first <= n <= last:
            if n == first:
                lo = s.col
            else:
                lo = len(text) - len(text.lstrip()) + 1
            hi = s.end_col if (n == s.end_line) else len(text) + 1
            hi = max(hi, lo + 1)
            carets = " " * (lo - 1) + "^" * (hi - lo)
            label = f" {d.code}" if n == last else ""
            out.append(_paint(gutter, _BLUE, color) + " " + _paint(carets + label, mark, color))
    out.append(_paint(gutter, _BLUE, color))
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_summary(diagnostics, *, unsafe_fixes: bool = False, fixed: int = 0,
                   fix_enabled: bool = False) -> str:
    """``Found N errors.`` and the ``[*] N fixable`` hint, as ruff prints them.

    Errors and warnings are counted as errors (they fail the run); notes are
    counted apart and never fail it.
    """
    diagnostics = list(diagnostics)
    failing = [d for d in diagnostics if _severity(d) is not Severity.NOTE]
    notes = len(diagnostics) - len(failing)
    lines = []
    if failing or fixed:
        if fixed:
            lines.append(f"Found {_plural(len(failing) + fixed, 'error')} "
                         f"({fixed} fixed, {len(failing)} remaining).")
        else:
            lines.append(f"Found {_plural(len(failing), 'error')}.")
    elif not notes:
        lines.append("All checks passed!")
    if notes:
        lines.append(f"{_plural(notes, 'note')} (notes do not fail the run).")
    safe = sum(1 for d in diagnostics if is_fixable(d, False))
    unsafe_only = sum(1 for d in diagnostics if d.fix is not None and not is_fixable(d, False))
    if not fix_enabled:
        if unsafe_fixes and safe + unsafe_only:
            lines.append(f"[*] {safe + unsafe_only} fixable with the --fix option.")
        elif safe:
            extra = (f" ({_hidden(unsafe_only)} with the `--unsafe-fixes` option)" if unsafe_only else "")
            lines.append(f"[*] {safe} fixable with the --fix option{extra}.")
        elif unsafe_only:
            lines.append(f"No fixes available ({_hidden(unsafe_only)} with the `--unsafe-fixes` option).")
    elif unsafe_only and not unsafe_fixes:
        lines.append(f"No more fixes available ({_hidden(unsafe_only)} with the `--unsafe-fixes` option).")
    return "\n".join(lines)


def _hidden(n: int) -> str:
    """ruff's words: "1 hidden fix can be enabled", "2 hidden fixes can be enabled"."""
    return f"{n} hidden fix can be enabled" if n == 1 else f"{n} hidden fixes can be enabled"


def render_statistics(diagnostics, fmt: str = "text", *, unsafe_fixes: bool = False,
                      color: bool = False) -> str:
    """``--statistics``: one row per code, most frequent first, as ruff writes them.

    Text (``text``, ``full``, ``concise``): ``count<TAB>code<TAB>[*] name``, the count right-aligned and
    the code left-aligned to their widest, the ``[*]``/``[ ]`` mark only when some code is fixable; a
    code is fixable when each of its findings has a fix ``--fix`` would apply.  ``json``: a list of
    ``{"code", "name", "count", "fixable"}``.  Other formats have no statistics (ValueError).
    """
    from .rules import RULES

    if fmt not in STATISTICS_FORMATS:
        raise ValueError(f"--statistics cannot be written as {fmt}; use {', '.join(STATISTICS_FORMATS)}")
    counts = Counter(d.code for d in diagnostics)
    unfixable = {d.code for d in diagnostics if not is_fixable(d, unsafe_fixes)}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    stats = [{"code": code, "name": RULES[code].name if code in RULES else "", "count": n,
              "fixable": code not in unfixable} for code, n in rows]
    if fmt == "json":
        return json.dumps(stats, indent=2)
    if not stats:
        return ""
    count_w = max(len(str(r["count"])) for r in stats)
    code_w = max(len(r["code"]) for r in stats)
    any_fixable = any(r["fixable"] for r in stats)
    out = []
    for r in stats:
        mark = ("[" + _paint("*", _CYAN, color) + "] " if r["fixable"] else "[ ] ") if any_fixable else ""
        out.append(f"{_paint(str(r['count']).rjust(count_w), _BOLD, color)}\t"
                   f"{_paint(r['code'].ljust(code_w), _RED + _BOLD, color)}\t{mark}{r['name']}".rstrip())
    return "\n".join(out)


# -- json -------------------------------------------------------------------
def _loc(line, col):
    return {"row": line, "column": col}


def _abs(path: str) -> str:
    if path.startswith("<") and path.endswith(">"):
        return path
    return os.path.abspath(path)


def _json_obj(d) -> dict:
    s = d.span
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability,
            "message": d.fix.message,
            "edits": [{"content": e.content,
                       "location": _loc(e.span.line, e.span.col),
                       "end_location": _loc(e.span.end_line, e.span.end_col)}
                      for e in d.fix.edits],
        }
    return {
        "cell": None,
        "code": d.code,
        "end_location": _loc(s.end_line, s.end_col) if s else _loc(1, 1),
        "filename": _abs(d.path),
        "fix": fix,
        "location": _loc(s.line, s.col) if s else _loc(1, 1),
        "message": d.message,
        "noqa_row": s.line if s else None,
        "related": [{"location": _loc(span.line, span.col), "end_location": _loc(span.end_line, span.end_col),
                     "message": label} for span, label in d.related or ()],
        "severity": _severity(d).value,
        "url": d.url,
    }


def render_json(diagnostics) -> str:
    """ruff's ``--output-format json``: a list of objects, keys sorted."""
    return json.dumps([_json_obj(d) for d in diagnostics], indent=2, sort_keys=True)


# -- sarif ------------------------------------------------------------------
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def _file_uri(path: str) -> str:
    if path.startswith("<"):
        return path
    from pathlib import Path
    return Path(os.path.abspath(path)).as_uri()


# SARIF 2.1.0 defines ``helpUri`` (a rule's documentation) and ``informationUri`` (the tool's) as
# absolute URIs.  ast-hybrid's pages are files of its repository (``docs/rules/HY001.md``, see
# ``diagnostics.RULE_URL``) with no website behind them, so neither property is written: a rule's page
# is named in its ``help`` text and as the ``page`` property (a path relative to the repository's root).
def _sarif_rule(rule) -> dict:
    full = " ".join(p for p in (rule.what, rule.why) if p) or rule.summary
    page = (f"`ast-hybrid rule {rule.code}` prints this rule's page "
            f"({rule.url} in ast-hybrid's repository).")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": f"{rule.instead or rule.summary}\n\n{page}"},
        "properties": {"origin": rule.origin, "page": rule.url},
    }


def _sarif_physical(path: str, span) -> dict:
    physical = {"artifactLocation": {"uri": _file_uri(path)}}
    if span is not None:
        physical["region"] = {"startLine": span.line, "startColumn": span.col,
                              "endLine": span.end_line, "endColumn": span.end_col}
    return physical


def render_sarif(diagnostics) -> str:
    """SARIF 2.1.0: the catalogue's rules as ``rules`` (an unknown code that occurs gets an
    entry of its own), one result per diagnostic."""
    from ast_hybrid import __version__
    from .rules import RULES

    rules = [_sarif_rule(rule) for rule in RULES.values()]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for d in diagnostics:
        if d.code not in index:
            index[d.code] = len(rules)
            rules.append({"id": d.code})
        res = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _SARIF_LEVEL[_severity(d)],
            "message": {"text": d.message + (f" (help: {d.help})" if d.help else "")},
            "locations": [{"physicalLocation": _sarif_physical(d.path, d.span)}],
        }
        if d.related:
            res["relatedLocations"] = [{"id": i, "physicalLocation": _sarif_physical(d.path, span),
                                        "message": {"text": label}} for i, (span, label) in enumerate(d.related)]
        if d.fix is not None:
            res["fixes"] = [{
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _file_uri(d.path)},
                    "replacements": [{
                        "deletedRegion": {"startLine": e.span.line, "startColumn": e.span.col,
                                          "endLine": e.span.end_line, "endColumn": e.span.end_col},
                        "insertedContent": {"text": e.content},
                    } for e in d.fix.edits],
                }],
            }]
        results.append(res)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ast-hybrid",
                "version": __version__,
                "rules": rules,
            }},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2)


# -- github -----------------------------------------------------------------
_GH_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics) -> str:
    """GitHub Actions workflow commands, one line per diagnostic."""
    out = []
    for d in diagnostics:
        props = [f"title={_gh_prop(f'ast-hybrid ({d.code})')}", f"file={_gh_prop(d.path)}"]
        if d.span is not None:
            s = d.span
            props += [f"line={s.line}", f"col={s.col}", f"endLine={s.end_line}", f"endColumn={s.end_col}"]
        out.append(f"::{_GH_LEVEL[_severity(d)]} {','.join(props)}::{_gh_data(f'{d.code} {d.message}')}")
    return "\n".join(out)


def render(diagnostics, fmt: str = "text", *, color: bool = False, unsafe_fixes: bool = False) -> str:
    """Render in one of :data:`FORMATS` (text without its summary)."""
    diagnostics = list(diagnostics)
    if fmt in ("text", "full"):
        return render_text(diagnostics, color=color, unsafe_fixes=unsafe_fixes)
    if fmt == "concise":
        return render_concise(diagnostics, color=color, unsafe_fixes=unsafe_fixes)
    if fmt == "json":
        return render_json(diagnostics)
    if fmt == "sarif":
        return render_sarif(diagnostics)
    if fmt == "github":
        return render_github(diagnostics)
    raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
