"""Activity, liveness and definite assignment of a function, built on beniget.

The control-flow pass needs, for every ``if``/``while``/``for``: which
variables its parts *modify*, which are *live* (read before being written)
at the entry of each branch or loop body, which are live *after* it, and which
are *definitely assigned* before it.  :class:`FunctionAnalysis` computes all of
that in one backward sweep (liveness, with a fixed point for loops) and one
forward sweep (definite assignment) over the function's structured statements.

beniget's def-use chains give the scoping: which names are locals of the
function, and which names used inside nested scopes (user lambdas, closures,
comprehensions, an ``assert``'s lazy message) refer to the function's locals;
such a nested scope counts as reading those variables where it is defined.
A function with no nested scope needs no chains (building them is most of
the analysis' time): its locals are what it binds, less what it declares
``global``/``nonlocal`` (Python's own rule), and no name is read from
elsewhere.  ``tests/transpiler/test_analysis.py`` checks that both ways agree
on every function of MXNet's Gluon.

The analysis is cached by the pipeline and invalidated after each pass that
changes the tree (:meth:`ast_hybrid.transpiler.pipeline.Context.analysis`).  It expects
no ``break``/``continue`` and no early ``return`` (the passes before it remove
them), so control flow is structured.

>>> import gast
>>> fn = gast.parse('''
... def f(x, c):
...     if c:
...         y = x + 1
...     else:
...         z = 2
...     return y
... ''').body[0]
>>> a = FunctionAnalysis(fn)
>>> if_ = fn.body[0]
>>> sorted(a.modified(if_.body + if_.orelse)), sorted(a.live_after(if_))
(['y', 'z'], ['y'])
>>> sorted(a.defined_before(if_)), a.is_maybe_undefined(fn.body[1].value)
(['c', 'x'], True)
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import SCOPES, QuietChains, bound_names, children, parameters, walk_scope
from .annotations import Anno, anno_get

__all__ = ["FunctionAnalysis", "CONTROL_FLOW"]

#: The statements the control-flow pass converts (those :meth:`FunctionAnalysis.state` is for).
CONTROL_FLOW = (gast.If, gast.While, gast.For)

_EMPTY = frozenset()
_COMPREHENSIONS = frozenset({gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp})
_WRITE_CTX = frozenset({gast.Store, gast.Del})
_COMPOSITE_TARGETS = (gast.Attribute, gast.Subscript)


class FunctionAnalysis:
    """Activity/liveness/definite assignment of one ``FunctionDef`` (its own scope only)."""

    def __init__(self, fn):
        self.fn = fn
        # Name nodes inside nested scopes that refer to this function's locals.
        self._refs: dict[int, str] = {}
        bound = bound_names(fn)
        if bound is not None:
            self.locals = bound
        else:
            chains = QuietChains()
            chains.visit(gast.Module(body=[fn], type_ignores=[]))
            local_defs = chains.locals[fn]
            self.locals = frozenset(d.name() for d in local_defs)
            for d in local_defs:
                for user in d.users():
                    if isinstance(user.node, gast.Name):
                        self._refs[id(user.node)] = user.node.id
        self._reads: dict[int, frozenset] = {}
        self._writes: dict[int, frozenset] = {}
        self._live_after: dict[int, frozenset] = {}
        self._live_in: dict[int, tuple] = {}
        self._defined: dict[int, frozenset] = {}
        self._maybe_undef: set[int] = set()
        self._live_block(fn.body, _EMPTY)
        params = {a.id for a in parameters(fn.args)}
        self._da_block(fn.body, frozenset(params))

    # -- activity -----------------------------------------------------------
    def reads(self, node) -> frozenset:
        """Locals read by an expression or a simple statement's own expressions."""
        key = id(node)
        got = self._reads.get(key)
        if got is None:
            got = self._reads[key] = frozenset(self._iter_reads(node)) if node is not None else _EMPTY
        return got

    def _iter_reads(self, node):
        out, local, refs = set(), self.locals, self._refs
        todo = list(node) if isinstance(node, list) else [node]
        while todo:
            n = todo.pop()
            t = n.__class__
            if t is gast.Name:
                if n.ctx.__class__ is gast.Load and n.id in local:
                    out.add(n.id)
                continue
            if t in SCOPES:
                # evaluated where the scope is defined: decorators, defaults
                if t is not gast.Lambda and t not in _COMPREHENSIONS:
                    todo.extend(n.decorator_list)
                if t is not gast.ClassDef and t not in _COMPREHENSIONS:
                    todo.extend(n.args.defaults)
                    todo.extend(d for d in n.args.kw_defaults if d is not None)
                for sub in gast.walk(n):
                    if sub.__class__ is gast.Name and id(sub) in refs and sub.ctx.__class__ is gast.Load:
                        out.add(sub.id)
                continue
            if t is gast.AugAssign and n.target.__class__ is gast.Name and n.target.id in local:
                out.add(n.target.id)
            todo.extend(children(n))
        return out

    def writes(self, node) -> frozenset:
        """Locals a statement, a target expression (or a list of them) may assign, nested blocks included."""
        if isinstance(node, list):
            out = set()
            for n in node:
                out |= self.writes(n)
            return frozenset(out)
        if not isinstance(node, gast.stmt):
            return frozenset(self._iter_writes(node))
        key = id(node)
        got = self._writes.get(key)
        if got is None:
            got = self._writes[key] = frozenset(self._iter_writes(node))
        return got

    def test_writes(self, test) -> frozenset:
        """Locals a test assigns (``:=``) whenever it is evaluated: not in a later operand of
        ``and``/``or``, a value of ``a if c else b``, or a lambda or comprehension."""
        out, todo = set(), [test]
        while todo:
            n = todo.pop()
            t = n.__class__
            if t is gast.NamedExpr and n.target.__class__ is gast.Name and n.target.id in self.locals:
                out.add(n.target.id)
            if t is gast.BoolOp:
                todo.append(n.values[0])
            elif t is gast.IfExp:
                todo.append(n.test)
            elif t not in SCOPES:
                todo.extend(children(n))
        return frozenset(out)

    def _iter_writes(self, node):
        out, local = set(), self.locals
        todo = [node]
        while todo:
            n = todo.pop()
            t = n.__class__
            if t is gast.Name:
                if n.ctx.__class__ in _WRITE_CTX and n.id in local:
                    out.add(n.id)
                continue
            if t is gast.FunctionDef or t is gast.AsyncFunctionDef or t is gast.ClassDef:
                if n.name in local:
                    out.add(n.name)
                continue
            if t in SCOPES:
                continue
            if t is gast.Import or t is gast.ImportFrom:
                out.update(b for b in ((a.asname or a.name).split(".")[0] for a in n.names) if b in local)
                continue
            if n is not node and isinstance(n, gast.stmt):
                out |= self.writes(n)           # a nested statement: once, cached
                continue
            todo.extend(children(n))
        return out

    modified = writes

    def composite_targets(self, stmt) -> list:
        """The item and attribute targets (``d['h'] = ...``, ``self.x += ...``) a control-flow
        statement's blocks assign (its test, iterable and nested scopes aside), in source order;
        a ``for``'s own target included.  :mod:`.composites` says which slot each names."""
        t = type(stmt)
        blocks = stmt.body + stmt.orelse if t is gast.If else list(stmt.body)
        if t in (gast.For, gast.AsyncFor):
            blocks = [stmt.target, *blocks]
        out = []
        for top in blocks:
            for n in walk_scope(top):
                if n.__class__ in _COMPOSITE_TARGETS and n.ctx.__class__ is gast.Store:
                    out.append(n)
        out.sort(key=lambda n: (getattr(n, "lineno", 0) or 0, getattr(n, "col_offset", 0) or 0))
        return out

    # -- state of converted statements ------------------------------------------------
    def state(self, stmt) -> tuple:
        """What a converted ``if``/``while``/``for`` carries, sorted: the variables it may
        modify (a ``for``'s target included) that are live around it (after it, at the entry
        of a branch or of the body, in a loop's test)."""
        t = type(stmt)
        if t is gast.If:
            lt, lf = self.live_in(stmt)
            modified = self.writes(stmt.body + stmt.orelse)
            live = self.live_after(stmt) | lt | lf
        elif t is gast.While:
            modified = self.writes(stmt.body)
            live = self.live_after(stmt) | self.live_in(stmt)[0] | self.reads(stmt.test)
        elif t in (gast.For, gast.AsyncFor):
            tw = self.writes(stmt.target)
            modified = self.writes(stmt.body) | tw
            extra = anno_get(stmt, Anno.EXTRA_TEST)
            live = self.live_after(stmt) | (self.live_in(stmt)[0] - tw)
            if extra is not None:
                live = live | self.reads(extra)
        else:
            raise TypeError(f"not a control-flow statement: {type(stmt).__name__}")
        return tuple(sorted(modified & live))

    # -- liveness (backward) --------------------------------------------------
    def live_after(self, stmt) -> frozenset:
        """Locals read after ``stmt`` before being written again."""
        return self._live_after.get(id(stmt), _EMPTY)

    def live_in(self, stmt) -> tuple:
        """Live at the entry of each body: ``(body, orelse)`` of an ``if``, ``(body,)`` of a loop."""
        return self._live_in.get(id(stmt), (_EMPTY, _EMPTY))

    def _live_block(self, stmts, live):
        for s in reversed(stmts):
            live = self._live_stmt(s, live)
        return live

    def _live_stmt(self, s, out):
        t = type(s)
        if t is gast.If:
            lt, lf = self._live_block(s.body, out), self._live_block(s.orelse, out)
            self._live_after[id(s)], self._live_in[id(s)] = out, (lt, lf)
            return self.reads(s.test) | ((lt | lf) - self.test_writes(s.test))
        if t is gast.While:
            exit_ = self._live_block(s.orelse, out)
            head = exit_ | self.reads(s.test)
            while True:
                body_in = self._live_block(s.body, head)
                new = head | body_in
                if new == head:
                    break
                head = new
            self._live_after[id(s)], self._live_in[id(s)] = out, (body_in,)
            return head
        if t in (gast.For, gast.AsyncFor):
            exit_ = self._live_block(s.orelse, out)
            extra = anno_get(s, Anno.EXTRA_TEST)
            head = exit_ | (self.reads(extra) if extra is not None else _EMPTY)
            tw = self.writes(s.target)
            while True:
                body_in = self._live_block(s.body, head)
                new = head | (body_in - tw) | self.reads(s.target)
                if new == head:
                    break
                head = new
            self._live_after[id(s)], self._live_in[id(s)] = out, (body_in,)
            return head | self.reads(s.iter)
        if t in (gast.Return,):
            return self.reads(s.value) if s.value is not None else _EMPTY
        if t in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
            return (out - self.writes(s)) | self.reads(s)
        if t in (gast.With, gast.AsyncWith):
            body_in = self._live_block(s.body, out)
            items = [i.context_expr for i in s.items]
            targets = self.writes([i.optional_vars for i in s.items if i.optional_vars])
            return (body_in - targets) | self.reads(items)
        if t is gast.Try:
            fin = self._live_block(s.finalbody, out)
            after = self._live_block(s.orelse, fin) | fin
            handlers = _EMPTY
            for h in s.handlers:
                handlers |= self._live_block(h.body, fin) | self.reads(h.type)
            body_in = self._live_block(s.body, after | handlers)
            # any statement of the body may raise: everything live in a handler is live on entry
            return body_in | handlers | fin
        return (out - self.writes(s)) | self.reads(s)

    # -- definite assignment (forward) -------------------------------------------
    def defined_before(self, stmt) -> frozenset:
        """Locals assigned on every path reaching ``stmt`` (parameters included)."""
        return self._defined.get(id(stmt), _EMPTY)

    def is_maybe_undefined(self, name_node) -> bool:
        """Whether this Name load may run before its variable is assigned."""
        return id(name_node) in self._maybe_undef

    def any_maybe_undefined(self) -> bool:
        """Whether some Name load of the function may run before its variable is assigned."""
        return bool(self._maybe_undef)

    def _mark(self, expr, da):
        if expr is None:
            return
        for sub in walk_scope(expr):
            if (isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load)
                    and sub.id in self.locals and sub.id not in da):
                self._maybe_undef.add(id(sub))

    def _da_block(self, stmts, da):
        for s in stmts:
            da = self._da_stmt(s, da)
        return da

    def _da_stmt(self, s, da):
        self._defined[id(s)] = da
        t = type(s)
        if t is gast.If:
            self._mark(s.test, da)
            da = da | self.test_writes(s.test)
            return self._da_block(s.body, da) & self._da_block(s.orelse, da)
        if t is gast.While:
            self._mark(s.test, da)
            self._da_block(s.body, da)
            self._da_block(s.orelse, da)
            return da
        if t in (gast.For, gast.AsyncFor):
            self._mark(s.iter, da)
            extra = anno_get(s, Anno.EXTRA_TEST)
            if extra is not None:
                self._mark(extra, da)
            self._da_block(s.body, da | self.writes(s.target))
            self._da_block(s.orelse, da)
            return da
        if t in (gast.With, gast.AsyncWith):
            for item in s.items:
                self._mark(item.context_expr, da)
                if item.optional_vars is not None:
                    da = da | self.writes(item.optional_vars)
            return self._da_block(s.body, da)
        if t is gast.Try:
            self._da_block(s.body, da)
            for h in s.handlers:
                self._da_block(h.body, da | (self.writes(h.name) if h.name else _EMPTY))
            self._da_block(s.orelse, da)
            return self._da_block(s.finalbody, da)
        if t in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
            return da | self.writes(s)
        if t is gast.Delete:
            return da - self.writes(s)
        self._mark(s, da)
        return da | self.writes(s)

