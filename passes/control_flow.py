"""``if``, ``while`` and ``for`` become runtime calls over functions with explicit state.

- ``if test: body else: orelse`` -> two branch functions of the state returning
  the state, and ``state = ah__.if_stmt(test, true_fn, false_fn, state, names)``;
- ``while test: body`` -> a test function and a body function of the state, and
  ``state = ah__.while_stmt(test_fn, body_fn, state, names)``;
- ``for t in it: body`` -> a body function of the next item and the state
  (starting ``t = item``), the extra test left by the break/return passes
  (annotation ``EXTRA_TEST``) as a test function, and
  ``state = ah__.for_stmt(it, test_fn or None, body_fn, state, names)``.

The state is what the statement may modify that is live around it
(:meth:`~ast_hybrid.transpiler.ast_tools.analysis.FunctionAnalysis.state`).  At run time a Python
condition, range or iterable runs as plain Python, exactly as written; a
traced one becomes ``lax.cond``/``while_loop``/``fori_loop``/``scan``.

The pass works top-down: it converts the outermost control-flow statements
of the function, then those of each generated function, and so on.  The
states come from one analysis of the function before any of it moves (a
statement's state is the same whichever generated function it ends up in).
A generated function is a scope of its own: a state variable that is neither
one of its parameters nor assigned on every path inside it before its
statement is set to ``ah__.Undefined`` at its top (in a loop body: the top of
the body, so a value of an earlier iteration, which is a parameter, is never
clobbered).  Passing it to the runtime then never fails, and reading it still
does where Python would (``ah__.ld``, the variables pass).  Each converted
statement records a :class:`~ast_hybrid.transpiler.sites.Site` for the runtime's
diagnostics (HY030-HY033).

After this pass no ``if``, ``while`` or ``for`` statement remains (in nested
user functions aside: they are converted when they are called).

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x, n):
...     for i in range(n):
...         if x.sum() > 0:
...             x = x * 0.5
...     return x
... ''')
def f(x, n):
<BLANKLINE>
    def ah__for_body_0(ah__itr_0, x):
        i = ah__itr_0
<BLANKLINE>
        def ah__if_true_0(x):
            x = x * 0.5
            return (x,)
<BLANKLINE>
        def ah__if_false_0(x):
            pass
            return (x,)
        x, = ah__.if_stmt(x.sum() > 0, ah__if_true_0, ah__if_false_0, (x,), ('x',))
        return (x,)
    x, = ah__.for_stmt(range(n), None, ah__for_body_0, (x,), ('x',))
    return x
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import own_statements, parameters
from ast_hybrid.transpiler.ast_tools.analysis import CONTROL_FLOW
from ast_hybrid.transpiler.ast_tools.annotations import Anno, anno_get
from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.sites import LoadIndex, build_site
from ast_hybrid.transpiler.ast_tools.templates import make_function, replace, return_of, runtime_call, tuple_of
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


def _state_call(method: str, operands, state, display):
    """``a, b = ah__.method(*operands, (a, b), names)`` (the bare call when there is no state);
    ``names`` as diagnostics show the state (``display`` maps a variable carrying ``d['h']`` to that)."""
    names = gast.Tuple(elts=[gast.Constant(value=display.get(v, v), kind=None) for v in state], ctx=gast.Load())
    return [runtime_call(method, [*operands, tuple_of(state), names], tuple_of(state) if state else None)]


def _returning(state):
    return [return_of(tuple_of(state))]


class _Scope(Transformer):
    """Converts the outermost control-flow statements of one function's own scope."""

    skip_scopes = True  # generated functions are scopes of their own; user ones convert when called
    statements_only = True

    def __init__(self, ctx, states, loads, analysis, params, entry):
        self.ctx, self.states, self.loads, self.analysis = ctx, states, loads, analysis
        self.params = frozenset(params)
        self.entry = entry              # defined before this scope's statement, outside it
        self.undefined: list[str] = []
        self.generated: list = []       # (function, its parameters, what is defined before it)
        self._current = None

    def _function(self, name, params, body):
        fn = make_function(name, params, body, self.ctx.declared)
        self.generated.append((fn, params, self.analysis.defined_before(self._current)))
        return fn

    def _needs_placeholder(self, v, defined) -> bool:
        """Whether ``v`` may have no value in this scope when its statement runs: it is no
        parameter, and not assigned on every path inside this scope before the statement."""
        return v not in self.params and (v not in defined or v in self.entry)

    def _prepare(self, kind, node, header, blocks):
        self._current = node
        state = self.states[id(node)]
        defined = self.analysis.defined_before(node)
        self.undefined.extend(v for v in state if self._needs_placeholder(v, defined) and v not in self.undefined)
        site = build_site(kind, node, header, blocks, state, self.loads, self.ctx.source, self.ctx.declared,
                          self.ctx.display)
        site.live_after = frozenset(self.analysis.live_after(node))
        self.ctx.sites.setdefault(site.span.line, site)
        return state

    def visit_If(self, node):
        state = self._prepare("if", node, node.test, [("`if` branch", node.body), ("`else` branch", node.orelse)])
        t, f = self.ctx.namer.new("if_true"), self.ctx.namer.new("if_false")
        out = [self._function(t, state, node.body + _returning(state)),
               self._function(f, state, (node.orelse or [gast.Pass()]) + _returning(state)),
               *_state_call("if_stmt", [node.test, t, f], state, self.ctx.display)]
        return out

    def visit_While(self, node):
        state = self._prepare("while", node, node.test, [("loop body", node.body)])
        test, body = self.ctx.namer.new("while_test"), self.ctx.namer.new("while_body")
        out = [self._function(test, state, [return_of(node.test)]),
               self._function(body, state, node.body + _returning(state)),
               *_state_call("while_stmt", [test, body], state, self.ctx.display)]
        return out

    def visit_For(self, node):
        state = self._prepare("for", node, node.iter, [("loop body", node.body)])
        body, itr = self.ctx.namer.new("for_body"), self.ctx.namer.new("itr")
        head = replace("target = itr", target=node.target, itr=itr)
        out = [self._function(body, [itr, *state], head + node.body + _returning(state))]
        extra = anno_get(node, Anno.EXTRA_TEST)
        if extra is None:
            test = gast.Constant(value=None, kind=None)
        else:
            test = self.ctx.namer.new("for_test")
            out.append(self._function(test, state, [return_of(extra)]))
        out += _state_call("for_stmt", [node.iter, test, body], state, self.ctx.display)
        return out


def _convert_scope(scope, params, entry, conv_args):
    conv = _Scope(*conv_args, params, entry)
    body = conv.visit_block(scope.body)
    inits = [s for v in sorted(conv.undefined)
             for s in replace("v = ah__.Undefined(label)", v=v, label=gast.Constant(value=v, kind=None))]
    n_decls = next((i for i, s in enumerate(body) if not isinstance(s, (gast.Global, gast.Nonlocal))), len(body))
    scope.body = body[:n_decls] + copy_origin(scope, inits) + body[n_decls:]
    for fn, fn_params, fn_entry in conv.generated:
        if _has_control_flow(fn):
            _convert_scope(fn, fn_params, fn_entry, conv_args)


def _has_control_flow(fn) -> bool:
    return any(isinstance(n, CONTROL_FLOW) for n in own_statements(fn))


def transform(fn, ctx):
    statements = [n for n in own_statements(fn) if isinstance(n, CONTROL_FLOW)]
    if not statements:
        return fn
    a = ctx.analysis(fn)
    states = {id(n): a.state(n) for n in statements}
    params = [p.id for p in parameters(fn.args)]
    _convert_scope(fn, params, frozenset(), (ctx, states, LoadIndex(ctx.source, fn), a))
    return fn
