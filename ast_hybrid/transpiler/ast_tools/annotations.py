"""Notes the passes leave on nodes: one keyed enum, each value saying what its key holds.

A note lives in the node's own ``__dict__`` (under one attribute, never a field),
so gast's walks and :func:`gast.unparse` do not see it, and
:func:`~ast_hybrid.transpiler.ast_tools.templates.clone` copies it with the node
(:func:`anno_copy`).

>>> import gast
>>> loop = gast.parse("for i in xs:\\n    pass").body[0]
>>> anno_set(loop, Anno.EXTRA_TEST, "stop")
>>> anno_get(loop, Anno.EXTRA_TEST), anno_get(loop, Anno.FLAG_GUARD)
('stop', None)
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Anno", "anno_get", "anno_set", "anno_copy"]

#: the node attribute that holds a node's notes (a dict keyed by :class:`Anno`)
_ATTR = "_ah_anno"


class Anno(str, Enum):
    """Notes the passes leave on nodes (keys of :func:`anno_set`)."""

    EXTRA_TEST = ("extra loop test of a `for`: a gast expression over the break/return flags, "
                  "checked before each iteration (set by the break and return passes)")
    FLAG_GUARD = "this `if` was made by a pass to skip the rest of a block after a flag was set"
    COMPOSITES = ("what an `if`/`while`/`for` does with each item or attribute its blocks assign: "
                  "id(target node) -> the variable carrying its value as the statement's state (str), or "
                  "why it cannot be carried (a Refused); set by the composite_state pass, read by the sites")


def anno_set(node, key: Anno, value):
    node.__dict__.setdefault(_ATTR, {})[key] = value


def anno_get(node, key: Anno, default=None):
    return node.__dict__.get(_ATTR, {}).get(key, default)


def anno_copy(src, dst):
    """Give ``dst`` a copy of ``src``'s notes, if it has any."""
    notes = src.__dict__.get(_ATTR)
    if notes is not None:
        dst.__dict__[_ATTR] = dict(notes)
