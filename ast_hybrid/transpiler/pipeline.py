"""The transpiler's pipeline: one function, one list of passes, in order.

:func:`transform` takes the gast ``FunctionDef`` of one user function (parsed
by :mod:`ast_hybrid.common.source`) and returns the converted ``FunctionDef``; the
:class:`Context` carries what the passes share for this one conversion (the
source, fresh names, the sites the runtime reports from, diagnostics, and the
cached analysis).  Nothing outlives a conversion.

After the whole pipeline:

- no ``break``, ``continue``, early ``return``, ``and``/``or``/``not``,
  conditional expression or ``assert`` remains (they are flags and runtime calls);
- every ``if``/``while``/``for`` is a call of ``ah__.if_stmt``/``while_stmt``/
  ``for_stmt`` with explicit state;
- every call goes through ``ah__.converted_call``;
- every node carries a location in the user's source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from passes import (asserts, break_statements, call_trees, class_scope, composite_state, continue_statements,
                    control_flow, logical, loop_tests, refusals, return_statements, variables)

from .ast_tools.analysis import FunctionAnalysis
from .ast_tools.naming import Namer
from ast_hybrid.common.source import SourceFile

__all__ = ["Context", "transform", "PASSES"]


@dataclass
class Context:
    """What the passes of one conversion share.

    The analysis is computed on demand and dropped after every pass, except
    one that declares ``PRESERVES_ANALYSIS = True`` (its rewrite changes no
    variable's activity).
    """

    source: SourceFile
    namer: Namer
    #: the class a method is defined in (for ``super()`` and ``__private`` names), or None
    class_name: str | None = None
    #: user line -> :class:`~ast_hybrid.transpiler.sites.Site`, for the runtime's diagnostics
    sites: dict = field(default_factory=dict)
    #: names the function declares ``global``/``nonlocal`` (generated functions redeclare them)
    declared: dict = field(default_factory=dict)
    #: the linter's HY001-HY004 in this function: refused at run time if their values are traced
    refusals: list = field(default_factory=list)
    #: variable -> how diagnostics name it, for variables standing for an item or attribute (``d['h']``)
    display: dict = field(default_factory=dict)
    _analysis: tuple | None = None
    _unchanged: object = None

    def analysis(self, fn) -> FunctionAnalysis:
        """Activity/liveness of ``fn`` as it is now (cached until :meth:`invalidate`)."""
        if self._analysis is None or self._analysis[0] is not fn:
            self._analysis = (fn, FunctionAnalysis(fn))
        return self._analysis[1]

    def invalidate(self):
        self._analysis = None

    def unchanged(self, fn):
        """Said by a pass that returns ``fn`` as it found it: the analysis stays valid."""
        self._unchanged = fn
        return fn


#: The passes, in order.  Each is a module with ``transform(fn, ctx) -> fn``.
PASSES = (
    # The linter's in-place ops and host syncs: a run-time refusal before each flagged statement.
    # First, while every statement still stands at the user's line the linter reported.
    refusals,
    # What a method's body means only inside its class: super() and __private names.
    class_scope,
    # assert -> ah__.assert_ (a traced test is checked at run time).
    asserts,
    # Every call -> ah__.converted_call (recursive conversion, print, range).  Before the
    # passes below, so that the runtime calls they create are not wrapped.
    call_trees,
    # A while whose test assigns a name (:=) tests at the top of a `while True` body, so the name
    # is assigned in the loop's scope.  Before the jump passes, which lower the break it adds.
    loop_tests,
    # Jumps become flags, tested with plain `not`/`and` (lowered by the logical pass, last).
    # continue before break (a loop's continue flag is reset in its body, its break flag
    # tested before each iteration), return last (it guards loops that the break pass
    # may already have rewritten).
    continue_statements,
    break_statements,
    return_statements,
    # From here control flow is structured: the analysis (liveness, definite assignment) holds.
    # Items and attributes with static keys (d['h'], self.x) an if/while/for assigns get a variable
    # each, loaded and stored back at the statement's edges: state like any other variable.
    # After the jump passes (a block ends at its last statement); before the variables pass.
    composite_state,
    # Reads of variables that may be undefined are checked; global/nonlocal hoisted.
    variables,
    # if/while/for -> ah__.if_stmt/while_stmt/for_stmt, top-down, one scope at a time
    # (each generated function is analysed on its own).  It moves code into new scopes.
    control_flow,
    # Canonicalisation: and/or/not, `a if c else b`, chained comparisons -> lazy runtime calls
    # (thunks).  Last, so that no pass before it, and no analysis, meets the thunks' scopes:
    # the analysis of a function without lambdas or comprehensions needs no def-use chains.
    logical,
)


def transform(fn, ctx: Context, passes=PASSES):
    """Run every pass (or the given ones, in order) over ``fn`` (a gast FunctionDef)."""
    for p in passes:
        fn = p.transform(fn, ctx)
        kept, ctx._unchanged = ctx._unchanged is fn, None
        if not (kept or getattr(p, "PRESERVES_ANALYSIS", False)):
            ctx.invalidate()
    return fn
