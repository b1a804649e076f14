"""The runtime behind the one reserved name ``ah__`` in converted code.

Each conversion binds ``ah__`` to its own :class:`Runtime` (its options, and
the sites of its statements for diagnostics): no state is shared between
conversions.  Every operation mirrors Python exactly for Python values and
switches to ``lax`` only when a condition, bound or iterable is a traced array:

- ``if_stmt(cond, if_true, if_false, args, names)``: ``if``; traced: ``lax.cond``;
- ``while_stmt(test, body, args, names)``: ``while``; traced: ``lax.while_loop``
  (or a bounded loop of ``max_iterations`` steps, ``loops.bounded_loop``);
- ``for_stmt(iterable, extra_test, body, args, names)``: Python iteration;
  a traced ``range`` (from ``range_``): ``fori_loop``/``while_loop``; a traced
  array: ``lax.scan`` over its leading axis;
- ``and_(a, b)``/``or_(a, b)`` (``a`` a value, ``b`` a thunk, evaluated lazily), ``not_(x)``,
  ``ifexp(cond, a, b)``: Python's operators, or ``logical_*``/``lax.cond``;
- ``load_composite``/``store_composite``: an item or attribute carried as
  state (``d['h']``), read before and put back after each branch or body;
- ``assert_``, ``converted_call``, ``range_``, ``Undefined``,
  ``UndefinedReturn``, ``ld``, ``retval``.

``args`` are the current values of the state variables; each branch/body
function takes them as parameters and returns the ``names`` variables.

May import: jax, numpy, ``ast_hybrid.common`` (diagnostics, spans) and
``ast_tools.naming`` (the reserved names).  Never a pass, the pipeline, the
converter, the linter or the Gluon front: generated code and the runtime
know nothing of how the code was produced.
"""

from __future__ import annotations

import ast
import sys

import jax
import jax.numpy as jnp

from ast_hybrid.common.diagnostics import ConversionError, Diagnostic
from ast_hybrid.common.rules import RULES
from ..ast_tools.naming import RETVAL, is_synthetic
from ast_hybrid.common.source import Span
from . import calls, composites, conditionals, loops
from .values import Undefined, UndefinedReturn, as_pred, is_traced, ld, retval, unwrap

__all__ = ["Runtime"]


class Runtime:
    """``ah__`` for one conversion."""

    Undefined = Undefined
    UndefinedReturn = UndefinedReturn
    ld = staticmethod(ld)
    retval = staticmethod(retval)

    def __init__(self, options=None, source=None, sites=None, name="<function>", converter=None, refusals=()):
        self.options = dict(options or {})
        self.refusals = list(refusals)
        self.max_iterations = self.options.get("max_iterations")
        self.source = source
        self.sites = sites or {}
        self.name = name
        self._converter = converter

    # -- conditionals ------------------------------------------------------------
    def if_stmt(self, cond, if_true, if_false, args, names):
        traced, pred = as_pred(cond)
        if not traced:
            return if_true(*args) if pred else if_false(*args)
        line = sys._getframe(1).f_lineno
        self._check_supported(line)
        return self._traced(conditionals.traced_cond, pred, if_true, if_false, args, names, line)

    def ifexp(self, cond, if_true, if_false):
        traced, pred = as_pred(cond)
        if not traced:
            return if_true() if pred else if_false()
        line = sys._getframe(1).f_lineno
        (out,) = self._traced(conditionals.traced_cond, pred, lambda: (if_true(),), lambda: (if_false(),),
                                          (), ("<expression>",), line, kind="ifexp")
        return out

    def and_(self, va, b):
        traced, pa = as_pred(va)
        if not traced:
            return b() if pa else va
        tb, pb = as_pred(b())
        return jnp.logical_and(pa, pb)

    def or_(self, va, b):
        traced, pa = as_pred(va)
        if not traced:
            return va if pa else b()
        tb, pb = as_pred(b())
        return jnp.logical_or(pa, pb)

    def walrus_test(self, value, name, part, when, span):
        """``value`` (the operands before a ``:=`` in ``and``/``or``, or the condition of ``a if c else b``),
        which must be a Python value: whether the ``:=`` runs must be known while tracing (HY030)."""
        traced, _ = as_pred(value)
        if traced:
            line = sys._getframe(1).f_lineno
            self.fail([self._diag("HY030", Span(*span) if span is not None else self._span(line), "walrus",
                                  name=name, part=part, when=when)])
        return value

    def python_value(self, value, what, why, span):
        """``value``, which must not be traced: a comprehension's ``if`` (the list's length would depend on
        it), a ``match`` subject compared with patterns or a ``case`` guard (HY032, variant python-only)."""
        if is_traced(value):
            line = sys._getframe(1).f_lineno
            self.fail([self._diag("HY032", Span(*span) if span is not None else self._span(line), "python-only",
                                  what=what, why=why)])
        return value

    def not_(self, x):
        traced, p = as_pred(x)
        return jnp.logical_not(p) if traced else not p

    def assert_(self, test, msg):
        """``assert test, msg()``; a traced test is checked on every run of the compiled program."""
        traced, pred = as_pred(test)
        if not traced:
            if not pred:
                raise AssertionError(msg()) if msg is not None else AssertionError()
            return
        text = str(msg()) if msg is not None else "assertion failed"
        calls.run_time_assert(pred, text)

    def refuse_if_traced(self, k, values):
        """Raise the linter's diagnostic ``k`` (an in-place op, a host sync) when its statement
        meets a traced value; with concrete values the statement runs as written."""
        if any(is_traced(leaf) for leaf in jax.tree_util.tree_leaves(values)):
            self.fail([self.refusals[k]])

    # -- loops ---------------------------------------------------------------------
    def while_stmt(self, test, body, args, names):
        state = args
        while True:
            traced, pred = as_pred(test(*state))
            if traced:
                line = sys._getframe(1).f_lineno
                self._check_supported(line)
                return self._traced(loops.traced_while, test, body, state, names, line, self.max_iterations)
            if not pred:
                return state
            state = body(*state)

    def for_stmt(self, iterable, extra_test, body, args, names):
        if isinstance(iterable, loops.TracedRange):
            line = sys._getframe(1).f_lineno
            self._check_supported(line)
            return self._traced(loops.traced_range_for, iterable, extra_test, body, args, names, line,
                                          self.max_iterations)
        if is_traced(iterable):
            if jnp.shape(iterable)[:1] == (0,):   # no rows: the body never runs, as in Python
                return args
            line = sys._getframe(1).f_lineno
            self._check_supported(line)
            return self._traced(loops.traced_scan_for, iterable, extra_test, body, args, names, line)
        state, unrolled = args, False
        for k, item in enumerate(iterable):
            if extra_test is not None:
                traced, pred = as_pred(extra_test(*state))
                if traced:   # a traced break/return flag: guard the rest of the iterations
                    line = sys._getframe(1).f_lineno
                    if not unrolled and isinstance(iterable, range):   # the rest as one loop, if it can be
                        out = self._traced(loops.range_rest, iterable[k:], extra_test, body, state, names, line,
                                           self.max_iterations)
                        if out is not None:
                            return out
                        unrolled = True    # the state's types change: unrolled from here on
                    state = self._traced(
                        conditionals.traced_cond, pred, lambda *s, _x=item: body(_x, *s), lambda *s: s, state, names, line)
                    continue
                if not pred:
                    break
            state = body(item, *state)
        return state

    @staticmethod
    def range_(*args):
        """``range``, or a :class:`~.loops.TracedRange` when a bound is traced."""
        if any(is_traced(a) for a in args):
            args = tuple(unwrap(a) for a in args)
            if len(args) == 1:
                return loops.TracedRange(0, args[0], 1)
            if len(args) == 2:
                return loops.TracedRange(args[0], args[1], 1)
            return loops.TracedRange(*args)
        return range(*args)

    def _traced(self, run, *args, **kwargs):
        """``run(self, *args)``: a traced branch or loop, counted while jax traces it (recursion check)."""
        calls.TRACING.depth += 1
        try:
            return run(self, *args, **kwargs)
        finally:
            calls.TRACING.depth -= 1

    # -- items and attributes carried as state ------------------------------------------
    def load_composite(self, root, path, text):
        """The value of ``root`` + ``path`` (``d['h']``), or ``Undefined`` if a key or attribute is missing."""
        if any(is_traced(k) for k in composites.keys(path)):
            line = sys._getframe(1).f_lineno
            site = self._site(line)
            spans = site.assigns.get(text) if site is not None else None
            related = ((site.span, f"the traced `{site.kind}`"),) if site is not None else ()
            self.fail([self._diag("HY032", spans[0][0] if spans else self._span(line), "traced-key",
                                  related=related, what=text,
                                  where=site.kind_text() if site is not None else "traced control flow")])
        return composites.load(root, path, text)

    @staticmethod
    def store_composite(root, path, value):
        """Put ``value`` back at ``root`` + ``path`` (``Undefined``: remove the key or attribute)."""
        composites.store(root, path, value)

    # -- calls -----------------------------------------------------------------------
    def converted_call(self, f, args, kwargs):
        return calls.converted_call(self, f, args, kwargs)

    def convert_callee(self, fn):
        if self._converter is None:
            return fn
        return self._converter(fn, self.options)

    # -- diagnostics -------------------------------------------------------------------
    def _site(self, line):
        return self.sites.get(line)

    def _check_supported(self, line):
        site = self._site(line)
        if site is None or not site.unsupported:
            return
        self.fail([self._diag("HY032", what[1], *what[2:3], related=((site.span, f"the traced `{site.kind}`"),),
                              what=what[0], where=site.kind_text(), **(what[3] if len(what) > 3 else {}))
                   for what in site.unsupported])

    def _diag(self, code, span, variant="default", related=(), **values):
        """``code``'s diagnostic at ``span``: message, help and severity from the rule catalogue."""
        rule = RULES[code]
        message, help = rule.message(variant, **values)
        path = self.source.path if self.source is not None else "<unknown>"
        lines = None
        if self.source is not None:
            wanted = {span.line} | {s.line for s, _ in related}
            lines = {n: self.source.line(n) for n in wanted}
        return Diagnostic(code, message, path, span, help=help, severity=rule.severity("jax"),
                          related=tuple(related), source_lines=lines)

    def _span(self, line):
        site = self._site(line)
        return site.span if site is not None else Span.point(line, 1)

    def hy030(self, name, line, where, other):
        site = self._site(line)
        related = []
        if site is not None:
            related = [(s, f"`{name}` assigned here ({label})") for s, label in site.assigns.get(name, ())]
            read = site.read_after(name)
            if read is not None:
                related.append((read, f"`{name}` used here after the `if`"))
        return self._diag("HY030", self._span(line), related=related, name=name, where=where, other=other)

    def check_defined_by_loop(self, values, names, line):
        """HY030 for each variable with no value before a traced loop that may run zero times,
        assigned inside it and live after it (Python would leave it unassigned)."""
        site = self._site(line)
        if site is None:
            return
        diags = []
        for v, name in zip(values, names):
            if isinstance(v, Undefined) and not is_synthetic(name) and name in site.live_after:
                related = [(s, f"`{name}` assigned here") for s, _ in site.assigns.get(name, ())]
                read = site.read_after(name)
                if read is not None:
                    related.append((read, f"`{name}` used here after the loop"))
                diags.append(self._diag("HY030", site.span, "loop", related=related, name=name,
                                        where=site.kind_text()))
        if diags:
            self.fail(diags)

    def hy031(self, name, line, before, after):
        return self._diag("HY031", self._span(line), name=name, before=before, after=after)

    def hy033(self, name, line, a, b, kind="if"):
        variant = "returns" if name == RETVAL else "if" if kind == "if" else "ifexp"
        return self._diag("HY033", self._span(line), variant, name=name, a=a, b=b)

    def host_sync(self, name, variant, line):
        """HY004 at the call of ``name`` on user line ``line``: it needs a traced value on the host."""
        span = _call_span(self.source, line, name) if self.source is not None else None
        self.fail([self._diag("HY004", span or self._span(line), variant, name=name)])

    def recursion(self, name, line, depth):
        """HY032: ``name`` recursed ``depth`` times, each time under one more traced condition."""
        span = _call_span(self.source, line, name.rsplit(".", 1)[-1]) if self.source is not None else None
        self.fail([self._diag("HY032", span or self._span(line), "recursion", what=name, depth=depth)])

    def fail(self, diagnostics):
        raise ConversionError(diagnostics)


def _call_span(source, line, name):
    """The span of the first call of ``name`` (a name or a method) on user line ``line``, or None."""
    for node in ast.walk(source.parse_ast()):
        if type(node) is ast.Call:
            f = node.func
            if (type(f) is ast.Name and f.id == name) or (type(f) is ast.Attribute and f.attr == name):
                span = source.span(node)
                if span.line == line:
                    return span
    return None
