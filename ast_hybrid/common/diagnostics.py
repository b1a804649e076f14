"""The one Diagnostic type, shared by the linter and the transpiler.

A :class:`Diagnostic` is a finding at a :class:`~ast_hybrid.common.source.Span` of a
user's file: a rule code (``HY001``), a severity, a message saying what is
wrong and why, a ``help`` line saying what to write instead, and optionally a
:class:`Fix` made of text :class:`Edit` s, marked safe or unsafe as in ruff.
Nothing here prints; renderers live in :mod:`ast_hybrid.common.render`.

>>> from ast_hybrid.common.source import Span
>>> d = Diagnostic("HY001", "in-place `+=` on tensor `x`", "m.py", Span(3, 5, 3, 11),
...                help="write `x = x + y`",
...                fix=Fix("Replace with `x = x + y`", (Edit(Span(3, 5, 3, 11), "x = x + y"),)))
>>> d.fixable, d.fix.applicability
(True, 'safe')
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from .source import Span

__all__ = ["Severity", "Edit", "Fix", "Diagnostic", "ConversionError", "RULE_URL"]

#: Where a rule's page lives; ``{code}`` is substituted: a path relative to the root of
#: ast-hybrid's repository (no website hosts the pages), to a page generated from the rule
#: catalogue (``python -m ast_hybrid.cli.rules --write-docs docs/rules``).  The same text is
#: printed by ``ast-hybrid rule CODE``.
RULE_URL = "docs/rules/{code}.md"


class Severity(str, Enum):
    """How bad a finding is.  ``note`` findings do not fail a lint run."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Edit:
    """Replace the text at ``span`` (user-file coordinates) with ``content``."""

    span: Span
    content: str


@dataclass(frozen=True)
class Fix:
    """A set of edits that together fix one diagnostic.

    ``applicability`` is ``"safe"`` (meaning is kept: applied by ``--fix``)
    or ``"unsafe"`` (may change meaning: needs ``--unsafe-fixes``).
    """

    message: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"

    def __post_init__(self):
        if self.applicability not in ("safe", "unsafe"):
            raise ValueError(f"applicability must be 'safe' or 'unsafe', not {self.applicability!r}")


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    path: str
    span: Span | None
    help: str | None = None
    severity: Severity = Severity.ERROR
    fix: Fix | None = None
    #: Extra locations worth showing (e.g. the other branch of an ``if``): (span, label).
    related: tuple[tuple[Span, str], ...] = field(default=(), compare=False)
    #: The user's source line(s), when the renderer cannot re-read the file
    #: (functions defined in a notebook, say): line number -> text.
    source_lines: dict | None = field(default=None, compare=False, hash=False)

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def url(self) -> str:
        return RULE_URL.format(code=self.code)

    def with_severity(self, severity: Severity) -> "Diagnostic":
        return replace(self, severity=severity)

    def sort_key(self):
        s = self.span or Span(0, 0, 0, 0)
        return (self.path, s.line, s.col, self.code)


class ConversionError(Exception):
    """Conversion of a function was refused; ``.diagnostics`` say where and why.

    ``str()`` renders them as the linter's text output does.
    """

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        super().__init__(self._render())

    def _render(self) -> str:
        try:
            from .render import render_text
            return "\n" + render_text(self.diagnostics, color=False)
        except Exception:  # rendering must never hide the real error
            return "; ".join(f"{d.path}:{d.span.line if d.span else '?'}: {d.code} {d.message}"
                             for d in self.diagnostics)
