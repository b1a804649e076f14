"""Early ``return`` becomes a single exit at the end of the function.

A function whose only ``return`` is its last statement is left alone.
Otherwise ``ah__ret`` (did we return?) and ``ah__retval`` (the value, an
``UndefinedReturn`` until set) are initialised first; each ``return v`` sets
both; everything after a statement that may return is guarded by
``if not ah__ret``; loops that contain a ``return`` stop once it is set; and
the function ends with ``return ah__.retval(ah__retval)`` (``None`` when no
``return`` ran, as in Python).  A function that may fall off its end (no
``return``/``raise`` closes every path) first gets an explicit ``return None``
there: where a traced condition decides between falling off and returning a
value, the two meet in a traced ``if`` (HY033) instead of a zero-filled value.

After this pass the function has exactly one ``return``, its last statement.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x):
...     if x.max() > 10:
...         return x * 0
...     return x + 1
... ''')
def f(x):
    ah__ret = False
    ah__retval = ah__.UndefinedReturn()
    if x.max() > 10:
        ah__retval = x * 0
        ah__ret = True
    if not ah__ret:
        ah__retval = x + 1
        ah__ret = True
    return ah__.retval(ah__retval)
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import own_statements
from ast_hybrid.transpiler.ast_tools.jumps import add_loop_test, lower_block
from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.ast_tools.templates import replace

__all__ = ["transform"]


def _is_return(stmt) -> bool:
    return isinstance(stmt, gast.Return)


def _closes(stmts) -> bool:
    """Whether no path through ``stmts`` reaches their end (each ends in a return or raise)."""
    if not stmts:
        return False
    s = stmts[-1]
    t = type(s)
    if t is gast.Return or t is gast.Raise:
        return True
    if t is gast.If:
        return _closes(s.body) and _closes(s.orelse)
    if t is gast.While:     # `while True` (a break would have made its test a flag by now)
        return type(s.test) is gast.Constant and bool(s.test.value)
    if t is gast.With:
        return _closes(s.body)
    if t is gast.Try:
        return _closes(s.finalbody) or ((_closes(s.body) or _closes(s.orelse))
                                        and all(_closes(h.body) for h in s.handlers))
    return False


def transform(fn, ctx):
    found = [s for s in own_statements(fn) if type(s) is gast.Return]
    if all(r is fn.body[-1] for r in found):
        return fn
    if not _closes(fn.body):
        fn.body.append(copy_origin(fn.body[-1], gast.Return(value=gast.Constant(value=None, kind=None))))
    flag, value = ctx.namer.fixed("ret"), ctx.namer.fixed("retval")

    def lower(ret):
        v = ret.value if ret.value is not None else gast.Constant(value=None, kind=None)
        return replace("value = v\nflag = True", value=value, v=v, flag=flag)

    body, _ = lower_block(fn.body, _is_return, lower, flag, into_loops=True,
                          on_loop=lambda loop: add_loop_test(loop, flag))
    head = copy_origin(fn.body[0], replace("flag = False\nvalue = ah__.UndefinedReturn()", flag=flag, value=value))
    tail = copy_origin(fn.body[-1], replace("return ah__.retval(value)", value=value))
    fn.body = head + body + tail
    return fn
