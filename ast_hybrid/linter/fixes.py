"""Fixes the linter attaches: text edits in user-file spans.

HY001 ``x op= v`` -> ``x = x op v`` (``v`` parenthesised unless it binds
tighter than ``op``).  The rewrite stops mutating the array ``x`` names, so
it is **safe** only when nothing else can see that array, i.e. when every
definition of ``x`` reaching the statement is a *fresh* value and no use of
those definitions lets the array escape:

- unsafe if a reaching definition is a parameter (the caller holds the
  array: in imperative MXNet ``x += y`` changes the caller's input), a loop
  or ``with`` target, an unpacking, or a plain copy of another reference
  (``x = y``, ``x = self.a``, ``x = xs[0]``, ``x = cond and y``...);
- unsafe if a use of such a definition can alias it: ``y = x``, ``x`` put
  in a tuple/list/dict/set, passed to a call that is not an ``F`` op or a
  tensor method, returned, yielded, or stored into an attribute;
- otherwise safe.  Fresh values are results of calls, arithmetic,
  comparisons and literals.

>>> import ast
>>> from ast_hybrid.linter import check_source
>>> from ast_hybrid.common.source import SourceFile
>>> code = '''
... class N(HybridBlock):
...     def hybrid_forward(self, F, x):
...         y = F.relu(x)
...         y *= x + 1
...         return y
... '''
>>> [(d.code, d.fix.edits[0].content, d.fix.applicability) for d in check_source(SourceFile.from_text(code))]
[('HY001', 'y = y * (x + 1)', 'safe')]

HY016 ``x.reshape(a, b)`` -> ``x.reshape((a, b))``: safe.

HY017 ``a - b`` -> ``F.broadcast_sub(a, b)``: safe.

HY007 ``nd.relu(x)`` -> ``F.relu(x)``: unsafe (``F`` may lack the op, or
the code may rely on an NDArray where a Symbol will come).
"""

from __future__ import annotations

import types

import gast

from ast_hybrid.common.diagnostics import Edit, Fix
from ast_hybrid.common.source import Span
from ast_hybrid.common.rules import RULES
from .module import module_family
from .tags import Tag, is_op

OPS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
       gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.LShift: "<<", gast.RShift: ">>",
       gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^"}
_PREC = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5,
         "*": 6, "/": 6, "//": 6, "%": 6, "@": 6, "**": 8}
_ATOMS = (gast.Name, gast.Attribute, gast.Subscript, gast.Call, gast.Constant, gast.List,
          gast.Tuple, gast.Dict, gast.Set, gast.ListComp, gast.SetComp, gast.DictComp,
          gast.GeneratorExp, gast.JoinedStr)


#: NDArray methods whose result may share memory with the array.
_VIEWS = frozenset({"reshape", "detach", "as_in_context", "as_in_ctx", "astype", "flatten",
                    "reshape_like", "T"})


def segment(src, node) -> str | None:
    """The exact text of ``node`` in ``src.text`` (None when it has no position)."""
    try:
        lines = src.lines
        l0, l1 = node.lineno - 1, node.end_lineno - 1
        c0, c1 = node.col_offset, node.end_col_offset
    except (AttributeError, TypeError):
        return None
    if l0 == l1:
        return lines[l0].encode("utf-8")[c0:c1].decode("utf-8")
    first = lines[l0].encode("utf-8")[c0:].decode("utf-8")
    last = lines[l1].encode("utf-8")[:c1].decode("utf-8")
    return "\n".join([first, *lines[l0 + 1:l1], last])


def _wrap(value, op: str, text: str) -> str:
    if isinstance(value, _ATOMS):
        if isinstance(value, gast.Tuple) and not text.startswith("("):
            return f"({text})"
        return text
    if isinstance(value, gast.UnaryOp) and not isinstance(value.op, gast.Not):
        return text
    if isinstance(value, gast.BinOp):
        inner = OPS.get(type(value.op))
        if inner and _PREC[inner] > _PREC[op] and op != "**":
            return text
    return f"({text})"


def augassign_fix(unit, src, node) -> Fix | None:
    op = OPS.get(type(node.op))
    name = node.target.id
    value = segment(src, node.value)
    if op is None or value is None or "\\\n" in value:
        return None
    content = f"{name} = {name} {op} {_wrap(node.value, op, value)}"
    safe = not _may_alias(unit, node.target)
    return _fix("HY001", (Edit(src.span(node), content),), "safe" if safe else "unsafe", name=name, op=op)


def _fix(code, edits, applicability, **values) -> Fix:
    """``code``'s fix, titled by the catalogue; its applicability must be one the catalogue declares."""
    rule = RULES[code]
    if applicability not in rule.fixes:
        raise ValueError(f"{code}: the catalogue declares {rule.fixes or 'no'} fixes, not {applicability!r}")
    return Fix(rule.fix_message(**values), tuple(edits), applicability)


def _fresh(unit, d) -> bool:
    parent = unit.parents.get(d)
    if isinstance(parent, gast.Assign) and d in parent.targets:
        return not isinstance(parent.value, (gast.Name, gast.Attribute, gast.Subscript,
                                             gast.BoolOp, gast.IfExp, gast.NamedExpr,
                                             gast.Starred))
    if isinstance(parent, gast.AugAssign):
        return True  # its prior definitions are checked by _may_alias itself
    if isinstance(parent, gast.AnnAssign):
        return parent.value is not None and not isinstance(parent.value, (gast.Name, gast.Attribute,
                                                                          gast.Subscript))
    return False


def _escapes(unit, use) -> bool:
    parent = unit.parents.get(use)
    if isinstance(parent, (gast.Assign, gast.AnnAssign, gast.NamedExpr)) and parent.value is use:
        return True
    if isinstance(parent, (gast.Tuple, gast.List, gast.Set, gast.Dict, gast.Starred,
                           gast.Return, gast.Yield, gast.YieldFrom, gast.IfExp, gast.BoolOp,
                           gast.withitem, gast.keyword, gast.Lambda)):
        if isinstance(parent, gast.keyword):
            call = unit.parents.get(parent)
            return not _op_call(unit, call)
        return True
    if isinstance(parent, gast.Call) and parent.func is not use:
        return not _op_call(unit, parent)
    if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is use:
        return True
    if isinstance(parent, gast.Subscript) and parent.value is use:
        return True  # basic slicing of an NDArray is a view
    if isinstance(parent, gast.Attribute) and parent.attr in _VIEWS:
        return True
    return False


def _op_call(unit, call) -> bool:
    if not isinstance(call, gast.Call):
        return False
    fk = unit.kind(call.func)
    if is_op(fk) or Tag.TENSOR_METHOD in fk:
        return True
    return module_family(unit.global_path(call.func)) in ("nd", "sym", "mxnp")


def _may_alias(unit, target) -> bool:
    todo, seen = list(unit.defs_of(target)), set()
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        if not _fresh(unit, d):
            return True
        for use in unit.users.get(d, ()):
            if use is target:
                continue
            if _escapes(unit, use):
                return True
        parent = unit.parents.get(d)
        if isinstance(parent, gast.AugAssign):
            todo.extend(unit.defs_of(d))
    return False


def shape_tuple_fix(src, args) -> Fix | None:
    """HY016 ``x.reshape(a, b)`` -> ``x.reshape((a, b))``: safe (NDArray and Symbol read one tuple as the shape)."""
    first, last = args[0], args[-1]
    whole = types.SimpleNamespace(lineno=first.lineno, col_offset=first.col_offset, end_lineno=last.end_lineno,
                                  end_col_offset=last.end_col_offset)
    text = segment(src, whole)
    if text is None or "\\\n" in text or "#" in text:
        return None
    a, b = src.span(first), src.span(last)
    return _fix("HY016", (Edit(Span(a.line, a.col, b.end_line, b.end_col), f"({text})"),), "safe")


def broadcast_fix(unit, src, node, a, b, f_op) -> Fix | None:
    """HY017 ``a - b`` -> ``F.broadcast_sub(a, b)``: safe (NDArray's operator broadcasts the same way)."""
    f_names = unit.f_names()
    left, right = segment(src, a), segment(src, b)
    if not f_names or left is None or right is None or "\\\n" in left + right:
        return None
    return _fix("HY017", (Edit(src.span(node), f"{f_names[0]}.{f_op}({left}, {right})"),), "safe",
                f=f_names[0], f_op=f_op)


def use_f_fix(unit, src, func) -> Fix | None:
    """``nd.relu`` / ``mx.nd.relu`` / ``mx.sym.random.uniform`` -> ``F.…``."""
    f_names = unit.f_names()
    if not f_names:
        return None
    # the module prefix: the longest value chain that is still an nd/sym module
    node = func.value
    while isinstance(node, gast.Attribute):
        path = unit.global_path(node) or ""
        if path in ("mxnet.nd", "mxnet.sym"):
            break
        node = node.value
    path = unit.global_path(node) or ""
    if path not in ("mxnet.nd", "mxnet.sym"):
        return None
    return _fix("HY007", (Edit(src.span(node), f_names[0]),), "unsafe", f=f_names[0])
