"""Which attributes of a block a later call reads back (for HY012), from the class's source.

``self.a = v`` inside a forward is state only if some call reads ``self.a`` before
setting it: a mask cached on the first step (``if self.mask is None: self.mask = ...``),
the previous step's output (``prev = self._prev_output``).  :func:`read_back` looks at
the methods a call can start from (every method of the class and of its in-file bases but
``__init__`` that no method of the class calls as ``self.m(...)``, and the forwards), in
source order (a store counts at the end of its statement, after the value it stores is
read), following ``self.m(...)`` into the method: a decoder whose forward first calls
``self.init_states()`` (which sets ``self.h``) and then ``self.step()`` (which reads it)
keeps nothing from one call to the next (Tacotron 2's port to Gluon).

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
    """Whether a call of ``cls`` (or of its in-file bases) can read ``self.<path>`` before setting it."""
    cache = facts.read_back
    key = (cls.name, path)
    if key not in cache:
        methods = {}
        for c in reversed([cls, *facts.parent_classes(cls)]):      # a subclass's method overrides its base's
            methods.update(c.methods)
        methods.pop("__init__", None)
        called = {name for m in methods.values() for name in _self_calls(m)}
        entries = [m for name, m in methods.items() if name not in called or name in _FORWARDS]
        cache[key] = any(_first(m, path, methods, set()) is _READ for m in entries)
    return cache[key]


_FORWARDS = frozenset({"hybrid_forward", "forward", "__call__"})
_READ, _STORE = "read", "store"


def _self_calls(fn) -> set:
    me = _me(fn)
    return {n.func.attr for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == me} if me else set()


def _me(fn):
    args = fn.args.posonlyargs + fn.args.args
    return args[0].arg if args else None


def _first(fn, path: str, methods: dict, seen: set):
    """What ``fn`` does first with ``self.<path>``, following its ``self.m(...)`` calls: _READ, _STORE or
    None (nothing)."""
    me = _me(fn)
    if me is None or id(fn) in seen:
        return None
    seen = seen | {id(fn)}
    events = []   # (position, what): _READ, _STORE, or a method called
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for tgt in targets:
                for t in ast.walk(tgt):
                    if _is_path(t, me, path):
                        end = (node.end_lineno, node.end_col_offset + 1)
                        events.append((end, _STORE))
                        if isinstance(node, ast.AugAssign):
                            events.append(((t.lineno, t.col_offset), _READ))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _is_path(node, me, path):
            events.append(((node.lineno, node.col_offset), _READ))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in methods
              and isinstance(node.func.value, ast.Name) and node.func.value.id == me):
            # the call runs after its arguments are read: at the end of the call expression
            events.append(((node.end_lineno, node.end_col_offset), methods[node.func.attr]))
    for _, what in sorted(events, key=lambda e: e[0]):
        if what is _READ or what is _STORE:
            return what
        got = _first(what, path, methods, seen)
        if got is not None:
            return got
    return None


def _is_path(node, me: str, path: str) -> bool:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return isinstance(node, ast.Name) and node.id == me and ".".join(reversed(parts)) == path
