"""Composite symbols: an item or an attribute reached by static keys (``d['h']``, ``self.state.h``, ``out[0]``).

AutoGraph names them with qualified names (``pyct/qual_names.py``): ``a.b[c]`` is a
slot of an object as ``a`` is a slot of the frame.  Its *support* is the names
needed to find it (the root ``a`` and the key ``c``); its *owners* are the shorter
chains (``a``, ``a.b``) whose change moves it.  A composite whose support does not
change inside a statement names the same slot all through it, so the statement can
carry its value as state like a variable's (the ``composite_state`` pass).

A key is static when it is a constant (``'h'``, ``0``, ``-1``), a variable (``k``:
static as long as the statement does not assign ``k``) or a tuple of those; a
slice or any other expression is not (what it names may change between two reads).

>>> import gast
>>> c = composite(gast.parse("self.state.h[k, 0] = v").body[0].targets[0])
>>> c.text, c.root, sorted(c.support), c.owners
('self.state.h[k, 0]', 'self', ['k', 'self'], ('self', 'self.state', 'self.state.h'))
>>> composite(gast.parse("d[f(i)] = v").body[0].targets[0])
'its key `f(i)` is an expression, not a constant or a variable'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from .templates import clone

__all__ = ["Composite", "Refused", "composite", "ATTR", "ITEM"]

#: the kinds of step of a composite's path (as they appear in generated code)
ATTR, ITEM = "attr", "item"


@dataclass(frozen=True)
class Composite:
    """``root`` then ``steps`` (``(ATTR, name)`` or ``(ITEM, key)``, keys as gast nodes)."""

    text: str                       # as the user wrote it (normalised): ``d['h']``
    root: str
    support: frozenset              # the root and the variables the keys read
    owners: tuple                   # texts of the shorter chains, root first
    steps: tuple = field(compare=False, hash=False, repr=False)

    def path(self):
        """The gast tuple ``('attr', 'state', 'item', key, ...)`` the runtime walks."""
        elts = []
        for kind, key in self.steps:
            elts.append(gast.Constant(value=kind, kind=None))
            elts.append(gast.Constant(value=key, kind=None) if kind == ATTR else clone(key))
        return gast.Tuple(elts=elts, ctx=gast.Load())


@dataclass(frozen=True)
class Refused:
    """An item or attribute target a statement cannot carry: ``text`` as written, and why."""

    text: str
    reason: str


def _text(node) -> str:
    return gast.unparse(node).strip()


def _static_key(key):
    """The variables ``key`` reads if it is static, else a string saying why not."""
    t = key.__class__
    if t is gast.Constant and key.value is not Ellipsis:
        return frozenset()
    if t is gast.UnaryOp and isinstance(key.op, (gast.USub, gast.UAdd)) and key.operand.__class__ is gast.Constant:
        return frozenset()
    if t is gast.Name:
        return frozenset({key.id})
    if t is gast.Tuple:
        out = frozenset()
        for e in key.elts:
            got = _static_key(e)
            if isinstance(got, str):
                return got
            out |= got
        return out
    if t is gast.Slice:
        return f"its key `{_text(key)}` is a slice"
    return f"its key `{_text(key)}` is an expression, not a constant or a variable"


def composite(target):
    """The :class:`Composite` an ``Attribute``/``Subscript`` target names, or a string saying why
    it names no slot with static keys."""
    steps, support, node = [], set(), target
    while node.__class__ in (gast.Attribute, gast.Subscript):
        if node.__class__ is gast.Attribute:
            steps.append((ATTR, node.attr))
        else:
            got = _static_key(node.slice)
            if isinstance(got, str):
                return got
            support |= got
            steps.append((ITEM, node.slice))
        node = node.value
    if node.__class__ is not gast.Name:
        return f"it starts from `{_text(node)}`, an expression, not a variable"
    steps.reverse()
    owners, text = [node.id], node.id
    for kind, key in steps[:-1]:
        text = f"{text}.{key}" if kind == ATTR else f"{text}[{_text(key)}]"
        owners.append(text)
    support.add(node.id)
    return Composite(_text(target), node.id, frozenset(support), tuple(owners), tuple(steps))
