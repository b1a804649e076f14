"""Items and attributes with static keys that control flow assigns become its state.

AutoGraph carries "composite symbols" (``d['h']``, ``self.x``) through its loops as it
carries variables; so does this pass, by giving each one a variable.  For every
``if``/``while``/``for`` that assigns a composite (:mod:`~ast_hybrid.transpiler.ast_tools.composites`)

- whose root is a variable of the function (a parameter such as ``self`` included),
- whose support (the root, the variables its keys read) the statement does not assign,
- none of whose owners (``self.state`` for ``self.state.h``) the statement assigns,
- and which is not a ``for``'s own target,

a fresh variable ``v`` carries the slot's value across the statement's boundaries:

- before the statement ``v = ah__.load_composite(root, path, text)`` (the slot's value,
  or ``ah__.Undefined`` when the key or attribute is missing);
- first in each branch, in the loop body and in a ``while``'s test,
  ``ah__.store_composite(root, path, v)`` puts the slot back as the statement found it
  (jax traces both branches of a traced ``if``, and a loop's body with values of its own;
  a missing key or attribute is removed again);
- last in each branch and in the body, ``v = ah__.load_composite(...)``;
- after the statement, ``ah__.store_composite(root, path, v)``.

``v`` is then an ordinary variable, modified by the statement and live around it, so the
control-flow pass makes it state (``lax.cond``'s outputs, a loop's carry), checked like
any other (HY030, HY031, HY033), and named by ``text`` in diagnostics (``ctx.display``).
On Python values a store whose value is already in place sets nothing.

Each statement is annotated (``Anno.COMPOSITES``) with what became of every item or
attribute target in it: the variable carrying it, or a
:class:`~ast_hybrid.transpiler.ast_tools.composites.Refused` saying why it cannot be
carried (a key that is an expression or a slice or that the statement assigns, a root
that the statement assigns or that is a global or closure variable, an owner assigned
too); if the statement is traced, the runtime reports those as HY032.

After this pass every item or attribute assignment inside an ``if``/``while``/``for`` is
carried by a variable of that statement or recorded as refused.  After the jump passes
(every block then ends at its last statement), before the variables pass.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x, n):
...     d = {'h': x}
...     for i in range(n):
...         d['h'] = d['h'] + i
...     return d['h']
... ''')
def f(x, n):
    d = {'h': x}
    ah__cs_0 = ah__.load_composite(d, ('item', 'h'), "d['h']")
    for i in range(n):
        ah__.store_composite(d, ('item', 'h'), ah__cs_0)
        d['h'] = d['h'] + i
        ah__cs_0 = ah__.load_composite(d, ('item', 'h'), "d['h']")
    ah__.store_composite(d, ('item', 'h'), ah__cs_0)
    return d['h']
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import own_statements
from ast_hybrid.transpiler.ast_tools.analysis import CONTROL_FLOW
from ast_hybrid.transpiler.ast_tools.annotations import Anno, anno_set
from ast_hybrid.transpiler.ast_tools.composites import Refused, composite
from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.ast_tools.templates import clone, replace, replace_expr
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


def _decide(stmt, analysis):
    """``(decisions, carried)``: id(target) -> alias text or :class:`Refused`; the carried
    composites in order of first assignment (one per slot)."""
    writes = analysis.writes(stmt)
    targets = analysis.composite_targets(stmt)
    found = [(t, composite(t)) for t in targets]
    assigned = {c.text for _, c in found if not isinstance(c, str)}
    loop_target = set()
    if isinstance(stmt, (gast.For, gast.AsyncFor)):
        loop_target = {id(n) for n in gast.walk(stmt.target)}
    decisions, carried = {}, {}
    for t, c in found:
        text = gast.unparse(t).strip()
        if isinstance(c, str):
            why = c
        elif c.root not in analysis.locals:
            why = f"`{c.root}` is not a variable of this function (a global or closure variable)"
        elif c.root in writes:
            why = f"`{c.root}` itself is assigned inside it"
        elif (c.support - {c.root}) & writes:
            why = f"its key `{sorted((c.support - {c.root}) & writes)[0]}` is assigned inside it"
        elif any(o in assigned for o in c.owners[1:]):
            why = f"`{next(o for o in c.owners[1:] if o in assigned)}` is assigned inside it too"
        elif id(t) in loop_target:
            why = "it is the loop's own target"
        else:
            carried.setdefault(c.text, c)
            decisions[id(t)] = c.text
            continue
        decisions[id(t)] = Refused(text, why)
    return decisions, list(carried.values())


class _Carry(Transformer):
    skip_scopes = True
    statements_only = True

    def __init__(self, ctx, plans):
        self.ctx, self.plans = ctx, plans

    def _statement(self, node):
        self.generic_visit(node)
        decisions, carried = self.plans.get(id(node), ({}, []))
        if not decisions:
            return node
        aliases = {}
        for c in carried:
            aliases[c.text] = alias = self.ctx.namer.new("cs")
            self.ctx.display[alias] = c.text
        anno_set(node, Anno.COMPOSITES, {k: (aliases[v] if isinstance(v, str) else v)
                                         for k, v in decisions.items()})
        if not carried:
            return node
        text = {c.text: gast.Constant(value=c.text, kind=None) for c in carried}
        load = [s for c in carried for s in replace("v = ah__.load_composite(root, path, text)", v=aliases[c.text],
                                                    root=c.root, path=c.path(), text=text[c.text])]
        store = [s for c in carried for s in replace("ah__.store_composite(root, path, v)", root=c.root,
                                                     path=c.path(), v=aliases[c.text])]
        copy_origin(node, load)
        copy_origin(node, store)
        node.body = clone(store) + node.body + clone(load)
        if isinstance(node, gast.If):
            node.orelse = clone(store) + node.orelse + clone(load)
        elif isinstance(node, gast.While):
            restore = gast.Tuple(elts=[s.value for s in clone(store)] + [node.test], ctx=gast.Load())
            node.test = copy_origin(node.test, replace_expr("restore[-1]", restore=restore))
        return [*clone(load), node, *store]

    visit_If = visit_While = visit_For = _statement


def _stores_into_containers(fn) -> bool:
    """Whether ``fn`` (nested scopes aside) assigns any item or attribute: most functions (no
    ``d[k] = ...``, no ``self.x = ...``) need nothing else from this pass.  An item or attribute is
    stored only as (part of) a statement's target, so only the targets are looked at (not every
    expression: conversion time)."""
    for s in own_statements(fn):
        t = s.__class__
        if t is gast.Assign:
            todo = list(s.targets)
        elif t in _ONE_TARGET:
            todo = [s.target]
        elif t is gast.With or t is gast.AsyncWith:
            todo = [i.optional_vars for i in s.items if i.optional_vars is not None]
        else:
            continue
        while todo:
            n = todo.pop()
            c = n.__class__
            if c in _CONTAINERS:
                if n.ctx.__class__ is gast.Store:
                    return True
            elif c is gast.Tuple or c is gast.List:
                todo.extend(n.elts)
            elif c is gast.Starred:
                todo.append(n.value)
    return False


_ONE_TARGET = frozenset({gast.AugAssign, gast.AnnAssign, gast.For, gast.AsyncFor})
_CONTAINERS = frozenset({gast.Subscript, gast.Attribute})


def transform(fn, ctx):
    statements = [s for s in own_statements(fn) if isinstance(s, CONTROL_FLOW)]
    if not statements or not _stores_into_containers(fn):
        return fn
    analysis = ctx.analysis(fn)
    plans = {}
    for s in statements:
        if analysis.composite_targets(s):
            plans[id(s)] = _decide(s, analysis)
    if not plans:
        return ctx.unchanged(fn)    # the variables pass reuses the analysis
    return _Carry(ctx, plans).transform_body(fn)
