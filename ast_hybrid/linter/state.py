"""Which attributes of a block a later call reads back (for HY012), from the class's source.

``self.a = v`` inside a forward is state only if some call reads ``self.a`` before
setting it: a mask cached on the first step (``if self.mask is None: self.mask = ...``),
the previous step's output (``prev = self._prev_output``).  :func:`read_back` looks at
every method of the class and of its in-file bases except ``__init__``, in source order
(a store counts at the end of its statement, after the value it stores is read).

>>> import ast
>>> from ast_hybrid.linter.module import ModuleFacts
>>> facts = ModuleFacts(ast.parse('''
... class Cell:
...     def __init__(self): self.prev = None
...     def hybrid_forward(self, F, x):
...         prev = self.prev
...         self.prev = x
...         self.scratch = [x]
...         return self.scratch, prev
... '''))
>>> read_back(facts, facts.classes["Cell"], "prev"), read_back(facts, facts.classes["Cell"], "scratch")
(True, False)
"""

from __future__ import annotations

import ast

__all__ = ["read_back"]


def read_back(facts, cls, path: str) -> bool:
    """Whether a method of ``cls`` (or its in-file bases) reads ``self.<path>`` before setting it."""
    cache = facts.read_back
    key = (cls.name, path)
    if key not in cache:
        cache[key] = any(_reads_first(m, path) for c in [cls, *facts.parent_classes(cls)]
                         for name, m in c.methods.items() if name != "__init__")
    return cache[key]


def _reads_first(fn, path: str) -> bool:
    args = fn.args.posonlyargs + fn.args.args
    if not args:
        return False
    me = args[0].arg
    events = []   # (position, is_store)
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for tgt in targets:
                for t in ast.walk(tgt):
                    if _is_path(t, me, path):
                        end = (node.end_lineno, node.end_col_offset + 1)
                        events.append((end, True))
                        if isinstance(node, ast.AugAssign):
                            events.append(((t.lineno, t.col_offset), False))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _is_path(node, me, path):
            events.append(((node.lineno, node.col_offset), False))
    events.sort()
    return bool(events) and not events[0][1]


def _is_path(node, me: str, path: str) -> bool:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return isinstance(node, ast.Name) and node.id == me and ".".join(reversed(parts)) == path
