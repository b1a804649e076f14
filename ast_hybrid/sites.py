"""What the runtime needs to know about each converted statement, to explain failures.

The control-flow pass records one :class:`Site` per converted ``if``/``while``/
``for`` (keyed by the user's line, which is also the line the converted code
runs at, since it is compiled with the user's line numbers).  When the runtime
finds at trace time that a traced branch leaves a variable undefined (HY030),
changes a loop variable's shape (HY031), contains a statement that cannot be
traced (HY032) or gives mismatched structures (HY033), it builds the
:class:`~ast_hybrid.diagnostics.Diagnostic` from the site: the statement's span,
and where each variable is assigned in each branch.  No jax here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .source import Span

__all__ = ["Site"]


@dataclass
class Site:
    kind: str                      # "if", "while", "for", "ifexp"
    span: Span                     # the statement (its first line, for loops)
    #: name -> [(span, label)] of assignments, label "`if` branch"/"`else` branch"/"loop body"
    assigns: dict = field(default_factory=dict)
    #: name -> span of its first read after the statement (for HY030)
    used_after: dict = field(default_factory=dict)
    #: (what, span) of statements that cannot live inside traced control flow (HY032)
    unsupported: list = field(default_factory=list)
