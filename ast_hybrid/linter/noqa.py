"""``# noqa`` comments, with flake8's and ruff's syntax.

A bare ``# noqa`` suppresses every finding on its line; ``# noqa: HY001,HY004``
(commas and/or spaces, any case) only those codes.  The comment belongs on
the line where the diagnostic *starts* (for a multi-line statement, its
first line).  Only real comments count: a ``# noqa`` inside a string does
not (checked with :mod:`tokenize`, only for files that mention ``noqa``).

>>> from ast_hybrid.common.source import SourceFile
>>> src = SourceFile.from_text("a = 1  # noqa\\nb = 2  # NOQA: hy001, HY004\\nc = '# noqa'\\n")
>>> m = noqa_map(src)
>>> m[1] is ALL, sorted(m[2]), 3 in m
(True, ['HY001', 'HY004'], False)
"""

from __future__ import annotations

import io
import re
import tokenize

__all__ = ["noqa_map", "suppressed", "ALL", "NOQA_COMMENT"]

ALL = object()
_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_SPLIT = re.compile(r"[,\s]+")
#: the comment's syntax (``codes`` the group of the codes, when given): the language server adds codes to it
NOQA_COMMENT = _NOQA


def noqa_map(src) -> dict:
    """User-file line -> ``ALL`` or a set of upper-case codes."""
    text = src.text
    if "noqa" not in text.lower():
        return {}
    out: dict = {}
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        comments = [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        comments = [(i, line[line.index("#"):]) for i, line in enumerate(src.lines, 1) if "#" in line]
    for lineno, comment in comments:
        m = _NOQA.search(comment)
        if not m:
            continue
        line = lineno + src.first_line - 1
        codes = m.group("codes")
        if not codes:
            out[line] = ALL
        elif out.get(line) is not ALL:
            out.setdefault(line, set()).update(c.upper() for c in _SPLIT.split(codes.strip()) if c)
    return out


def suppressed(diag, noqa: dict) -> bool:
    if diag.span is None:
        return False
    entry = noqa.get(diag.span.line)
    if entry is None:
        return False
    return entry is ALL or diag.code in entry
