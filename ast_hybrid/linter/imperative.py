"""Paths the author marked imperative-only: their findings become one HY015 note at the guard.

Model zoos keep host code (NumPy post-processing, ``asscalar()`` loops) behind a flag of their own:
``if self.hybridizable: return out`` and the imperative rest after it; the constructor ties other
options to it (``assert use_batch_box_nms or not hybridizable``).  The block hybridizes in its default
configuration; the guarded path fails under ``hybridize()`` only when built with the flag off.  One
finding per construct there says the model cannot be hybridized; one note at the guard says which
configuration cannot, with the constructs as its related locations.  The same holds for the nd
guards (``if F is nd:``, ``isinstance(x, nd.NDArray)``; :mod:`.checks`): what is still reported
under them (HY001-HY003, HY012) joins the guard's note.

A *flag* is a name or ``self`` attribute whose name says hybridizable (``self.hybridizable``,
``self._is_hybridizable``), or a ``self`` attribute the constructor ties to one: ``assert A or not
hybridizable`` with ``A`` a parameter (``self.A`` False is imperative-only) or ``A is not None``
(``self.A`` None is).  :func:`flag_test` reads a test; :class:`Region` is one path;
:func:`collapse` turns the findings of each path into its note (after severities and ``# noqa``, so
a construct not reported on the target is not counted).

>>> import ast
>>> init = ast.parse("def __init__(self, use_nms=True, size=None, hybridizable=True):\\n"
...                  "    assert use_nms or not hybridizable\\n    assert (size is not None) or not hybridizable\\n"
...                  "    self.use_nms = use_nms\\n    self._size = size\\n").body[0]
>>> sorted(constructor_ties(init))
['_size', 'use_nms']
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import gast

from ast_hybrid.common.diagnostics import Diagnostic
from ast_hybrid.common.rules import RULES, message

__all__ = ["Region", "Flag", "flag_test", "constructor_ties", "collapse"]

#: a flag's name that says it switches hybridization (``hybridizable``, ``is_hybridisable``)
FLAG_NAME = re.compile(r"hybridi[sz]able", re.I)


@dataclass(frozen=True, eq=False)
class Region:
    """One imperative-only path: the guard's test node (where the note goes), the message variant
    (``flag`` or ``nd``), the condition under which the path runs and (flag) what keeps it from running."""

    guard: object
    variant: str
    condition: str
    on: str = ""


@dataclass(frozen=True)
class Flag:
    """What a test says: ``hybridizable_when_true`` (the test holds in the hybridizable configuration),
    the text naming the test's subject, and the condition texts of both outcomes."""

    hybridizable_when_true: bool
    when_true: str
    when_false: str

    def negated(self) -> "Flag":
        return Flag(not self.hybridizable_when_true, self.when_false, self.when_true)

    def region(self, test, holds: bool) -> Region:
        """The region of the path where the test is ``holds``; its ``on`` is the other outcome."""
        cond, other = (self.when_true, self.when_false) if holds else (self.when_false, self.when_true)
        return Region(test, "flag", cond, other)


def _text(node) -> str:
    try:
        return gast.unparse(node).strip() if isinstance(node, gast.AST) else ast.unparse(node).strip()
    except Exception:  # noqa: BLE001 - a name for a message only
        return "the flag"


def flag_test(test, self_name: str | None, ties: dict) -> Flag | None:
    """What ``test`` says of the hybridizable configuration, or None when it is not a flag test."""
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        inner = flag_test(test.operand, self_name, ties)
        return inner.negated() if inner is not None else None
    attr = _self_attr(test, self_name)
    if attr is not None or isinstance(test, gast.Name):
        name = attr if attr is not None else test.id
        text = f"`{_text(test)}`"
        if FLAG_NAME.search(name):
            return Flag(True, f"{text} is True", f"{text} is False")
        tie = ties.get(name) if attr is not None else None
        if tie is not None and tie[0] == "truthy":
            why = f" (the constructor asserts `{tie[1]}`)"
            return Flag(True, f"{text} is True", f"{text} is False{why}")
        return None
    if (isinstance(test, gast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (gast.Is, gast.IsNot))
            and isinstance(test.comparators[0], gast.Constant) and test.comparators[0].value is None):
        attr = _self_attr(test.left, self_name)
        tie = ties.get(attr) if attr is not None else None
        if tie is not None and tie[0] == "notnone":
            text, why = f"`{_text(test.left)}`", f" (the constructor asserts `{tie[1]}`)"
            flag = Flag(True, f"{text} is not None", f"{text} is None{why}")
            return flag if isinstance(test.ops[0], gast.IsNot) else flag.negated()
    return None


def _self_attr(node, self_name) -> str | None:
    if (isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and self_name is not None
            and node.value.id == self_name):
        return node.attr
    return None


def constructor_ties(init) -> dict:
    """``self`` attribute -> (``"truthy"`` or ``"notnone"``, the assertion's text): the options the
    constructor ``init`` (a standard :mod:`ast` function) asserts are on, or set, when hybridizable."""
    if init is None or not init.args.args:
        return {}
    me = init.args.args[0].arg
    tied: dict = {}                      # parameter -> (kind, text)
    for stmt in ast.walk(init):
        if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.Or):
            values = stmt.test.values
            if not any(_is_not_flag(v, me) for v in values):
                continue
            for v in values:
                if isinstance(v, ast.Name):
                    tied[v.id] = ("truthy", ast.unparse(stmt.test))
                elif (isinstance(v, ast.Compare) and isinstance(v.left, ast.Name) and len(v.ops) == 1
                      and isinstance(v.ops[0], ast.IsNot) and isinstance(v.comparators[0], ast.Constant)
                      and v.comparators[0].value is None):
                    tied[v.left.id] = ("notnone", ast.unparse(stmt.test))
    out = {}
    for stmt in ast.walk(init):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in tied:
            for t in stmt.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                    out[t.attr] = tied[stmt.value.id]
    return out


def _is_not_flag(node, me) -> bool:
    """``not hybridizable`` / ``not self.hybridizable``."""
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return False
    x = node.operand
    if isinstance(x, ast.Name):
        return bool(FLAG_NAME.search(x.id))
    return (isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == me
            and bool(FLAG_NAME.search(x.attr)))


def collapse(found, src, target: str) -> list[Diagnostic]:
    """``found``: ``[(diagnostic, path)]`` after severities and ``# noqa``, ``path`` a :class:`Region`'s
    key (guard span, variant, condition, on) or None.  The diagnostics on no path, and one HY015 note per
    path listing its constructs (the note's ``related``, in position order)."""
    out, paths = [], {}
    for d, path in found:
        if path is None:
            out.append(d)
        else:
            paths.setdefault(path, []).append(d)
    severity = RULES["HY015"].severity(target)
    for (span, variant, condition, on), ds in paths.items():
        ds.sort(key=lambda d: d.sort_key())
        n = len(ds)
        text, help = message("HY015", variant, condition=condition, n=n, s="" if n == 1 else "s", on=on)
        related = tuple((d.span, f"{d.code} {d.message}") for d in ds if d.span is not None)
        out.append(Diagnostic("HY015", text, src.path, span, help=help, severity=severity, related=related))
    return out
