"""Lowering jumps into flags: the block walk shared by the break, continue and return passes.

A jump (``break``, ``continue``, ``return``) is replaced by statements that set
a flag; the statements after it in its block are unreachable and dropped; the
statements after any compound statement that *may* jump are wrapped in
``if not flag: ...`` (annotated :attr:`~ast_hybrid.transpiler.ast_tools.annotations.Anno.FLAG_GUARD`),
and so on outwards to the top of the block being lowered.  What is made is
plain Python (``not``, ``and``): the logical pass, last in the pipeline,
lowers it with the user's own operators.

Which nested blocks belong to the same jump target is the caller's choice
(``into_loops``): a ``break`` in a nested loop's body belongs to that loop, but
one in its ``else`` clause belongs to the outer loop; a ``return`` belongs to
the function wherever it is.  Nested functions, lambdas and classes are never
entered.

>>> import gast
>>> body = gast.parse('''
... if c:
...     a = 1
...     break
...     dead = 0
... b = 2
... ''').body
>>> out, jumped = lower_block(body, lambda s: isinstance(s, gast.Break),
...                           lambda s: [gast.parse("brk = True").body[0]], "brk")
>>> print(gast.unparse(gast.Module(body=out, type_ignores=[])).strip())
if c:
    a = 1
    brk = True
if not brk:
    b = 2
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import SCOPES
from .annotations import Anno, anno_get, anno_set
from .origin import copy_origin
from .templates import replace, replace_expr

__all__ = ["lower_block", "contains_jump", "guard", "add_loop_test"]

_LOOPS = (gast.For, gast.While, gast.AsyncFor)


def _blocks(stmt, into_loops: bool):
    """The statement lists of ``stmt`` where a jump would still belong to the same target."""
    if isinstance(stmt, gast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, _LOOPS):
        return [stmt.body, stmt.orelse] if into_loops else [stmt.orelse]
    if isinstance(stmt, (gast.With, gast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, gast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, gast.Match):
        return [c.body for c in stmt.cases]
    return []


def contains_jump(stmt, is_jump, into_loops: bool = False) -> bool:
    """Whether ``stmt`` is, or contains at this jump level, a jump."""
    if is_jump(stmt):
        return True
    if stmt.__class__ in SCOPES:
        return False
    return any(contains_jump(s, is_jump, into_loops) for b in _blocks(stmt, into_loops) for s in b)


def guard(flag: str, stmts: list, origin) -> gast.If:
    """``if not flag: stmts``, marked as made by a pass."""
    (node,) = replace("if not flag:\n    body", flag=flag, body=stmts)
    copy_origin(origin, node)
    anno_set(node, Anno.FLAG_GUARD, flag)
    return node


def lower_block(stmts, is_jump, lower_jump, flag: str, into_loops: bool = False, on_loop=None):
    """``(new statements, may_jump)`` for a block.

    ``lower_jump(stmt)`` gives the statements replacing one jump.  ``on_loop(loop)``
    is called for every nested loop entered (with ``into_loops``) that may jump.
    """
    out = []
    for i, s in enumerate(stmts):
        if is_jump(s):
            out.extend(copy_origin(s, lower_jump(s)))
            return out, True
        if s.__class__ in SCOPES or not contains_jump(s, is_jump, into_loops):
            out.append(s)
            continue
        for block in _blocks(s, into_loops):
            block[:], _ = lower_block(block, is_jump, lower_jump, flag, into_loops, on_loop)
        if isinstance(s, _LOOPS) and on_loop is not None:
            on_loop(s)
        out.append(s)
        rest, _ = lower_block(stmts[i + 1:], is_jump, lower_jump, flag, into_loops, on_loop)
        if rest:
            out.append(guard(flag, rest, stmts[i + 1]))
        return out, True
    return out, False


def add_loop_test(loop, flag: str):
    """Make ``loop`` stop once ``flag`` is set: ``while`` gets it in its test, ``for`` an extra test."""
    stop = replace_expr("not flag", flag=flag)
    if isinstance(loop, gast.While):
        loop.test = copy_origin(loop.test, replace_expr("stop and test", stop=stop, test=loop.test))
        return
    old = anno_get(loop, Anno.EXTRA_TEST)
    if old is not None:
        stop = replace_expr("old and stop", old=old, stop=stop)
    anno_set(loop, Anno.EXTRA_TEST, copy_origin(loop, stop))
