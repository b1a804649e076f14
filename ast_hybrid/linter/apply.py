"""Apply diagnostics' fixes to source text (``ast-hybrid lint --fix``).

Only safe fixes are applied, unsafe ones too when asked (``--unsafe-fixes``).
Fixes whose edits overlap an already accepted fix are left for the next
round; edits are applied back to front so earlier offsets stay valid.
:func:`fix_text` repeats lint-and-fix until nothing changes (at most
:data:`MAX_ROUNDS` rounds, as ruff), so running it twice changes nothing the
second time.  :func:`fix_file` writes the file back in its own encoding
(BOM included) and newline style, or returns a unified diff instead.

>>> from ast_hybrid.common.diagnostics import Diagnostic, Fix, Edit
>>> from ast_hybrid.common.source import Span
>>> d = Diagnostic("HY001", "in-place", "m.py", Span(2, 5, 2, 11),
...                fix=Fix("rewrite", (Edit(Span(2, 5, 2, 11), "x = x + 1"),)))
>>> apply_fixes("def f(x):\\n    x += 1\\n", [d])
('def f(x):\\n    x = x + 1\\n', 1)
"""

from __future__ import annotations

import difflib
import io
import os
import re
import tokenize
from dataclasses import dataclass

__all__ = ["apply_fixes", "fix_text", "fix_file", "FixResult", "MAX_ROUNDS"]

MAX_ROUNDS = 10
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _line_starts(text: str) -> list[int]:
    """Offsets of each line's first character, lines split as Python's tokenizer does."""
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _offset(starts: list[int], text: str, line: int, col: int) -> int:
    if line > len(starts):  # past the end: clamp
        return len(text)
    return min(starts[line - 1] + col - 1, len(text))


def _applicable(d, unsafe: bool) -> bool:
    return d.fix is not None and (unsafe or d.fix.applicability == "safe")


def apply_fixes(text: str, diagnostics, *, unsafe: bool = False, newline: str = "\n"):
    """``(new_text, n_fixed)``: the applicable, mutually non-overlapping fixes applied.

    ``newline`` replaces ``\\n`` inside edit contents (the file's style).
    """
    starts = _line_starts(text)
    chosen: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    n = 0
    candidates = [d for d in diagnostics if _applicable(d, unsafe)]
    candidates.sort(key=lambda d: min((e.span.line, e.span.col) for e in d.fix.edits)
                    if d.fix.edits else (0, 0))
    for d in candidates:
        edits = []
        for e in d.fix.edits:
            lo = _offset(starts, text, e.span.line, e.span.col)
            hi = _offset(starts, text, e.span.end_line, e.span.end_col)
            if hi < lo:
                break
            edits.append((lo, hi, e.content.replace("\n", newline) if newline != "\n" else e.content))
        else:
            if not edits:
                continue
            if any(_overlaps(lo, hi, a, b) for lo, hi, _ in edits for a, b in taken):
                continue  # the next round will see it again on the new text
            taken.extend((lo, hi) for lo, hi, _ in edits)
            chosen.extend(edits)
            n += 1
    for lo, hi, content in sorted(chosen, key=lambda t: (t[0], t[1]), reverse=True):
        text = text[:lo] + content + text[hi:]
    return text, n


def _overlaps(lo, hi, a, b) -> bool:
    if lo == hi == a == b:  # two insertions at one point: order would be arbitrary
        return True
    return lo < b and a < hi


@dataclass
class FixResult:
    path: str
    fixed: int                 # fixes applied over all rounds
    remaining: list            # diagnostics of the final text
    original: str
    text: str

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.original.splitlines(keepends=True), self.text.splitlines(keepends=True),
            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))


def fix_text(text: str, path: str, lint_text, *, unsafe: bool = False) -> FixResult:
    """Lint ``text`` with ``lint_text(text) -> diagnostics`` and fix until stable."""
    m = _NEWLINE.search(text)
    newline = m.group(0) if m else "\n"
    original, total = text, 0
    diags = lint_text(text)
    for _ in range(MAX_ROUNDS):
        new, n = apply_fixes(text, diags, unsafe=unsafe, newline=newline)
        if n == 0 or new == text:
            break
        text, total = new, total + n
        diags = lint_text(text)
    return FixResult(path, total, list(diags), original, text)


def fix_file(path: str, lint_source, *, unsafe: bool = False, write: bool = True) -> FixResult:
    """Fix one file in place (unless ``write=False``).

    ``lint_source(SourceFile) -> diagnostics``.  The file is decoded as Python
    does and written back in the same encoding; a file that cannot be read
    is returned unchanged with the reader's diagnostics.
    """
    from ast_hybrid.common.source import SourceFile

    with open(path, "rb") as fh:
        data = fh.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        encoding, text = None, None
    if text is None:
        from .api import lint_file  # reports the HY020 for us
        from .config import Settings
        diags = lint_file(path, Settings(target="jax"))
        return FixResult(path, 0, diags, "", "")
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]

    def run(t: str):
        return lint_source(SourceFile.from_text(t, path))

    result = fix_text(text, path, run, unsafe=unsafe)
    if write and result.changed:
        tmp = f"{path}.ast-hybrid-tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(result.text.encode(encoding))
            try:
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            except OSError:
                pass
            os.replace(tmp, path)
        except BaseException:
            if os.path.isfile(tmp):
                os.remove(tmp)
            raise
    return result
