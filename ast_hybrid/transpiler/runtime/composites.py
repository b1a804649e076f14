"""Items and attributes carried as state (the composite_state pass): read a slot, put it back.

A slot is ``root`` then a path ``('attr', name, 'item', key, ...)``.  :func:`load` gives its
value, or :class:`~.values.Undefined` when an attribute or key on the way is missing;
:func:`store` puts a value back (removes the attribute or key for ``Undefined``; a
list's index is never removed) and sets nothing when the value is already there, so on
Python values the generated stores cost a lookup and change nothing.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from .values import Undefined

__all__ = ["load", "store", "keys"]

_MISSING = object()


def keys(path):
    """The keys of ``path`` that are items (a traced one names no slot while tracing)."""
    return [path[i + 1] for i in range(0, len(path), 2) if path[i] == "item"]


def _get(obj, kind, key):
    try:
        return getattr(obj, key) if kind == "attr" else obj[key]
    except (AttributeError, KeyError, IndexError):
        return _MISSING


def load(root, path, text):
    obj = root
    for i in range(0, len(path), 2):
        obj = _get(obj, path[i], path[i + 1])
        if obj is _MISSING:
            return Undefined(text)
    return obj


def store(root, path, value):
    obj = root
    for i in range(0, len(path) - 2, 2):
        obj = _get(obj, path[i], path[i + 1])
        if obj is _MISSING:
            return      # the slot's owner is gone: nothing holds it (its value was Undefined)
    kind, key = path[-2], path[-1]
    current = _get(obj, kind, key)
    if current is value:
        return
    if isinstance(value, Undefined):
        if current is _MISSING:
            return
        if kind == "attr":
            if key in getattr(obj, "__dict__", ()):
                delattr(obj, key)
        elif isinstance(obj, MutableMapping):
            del obj[key]
        return
    if kind == "attr":
        setattr(obj, key, value)
    else:
        obj[key] = value
