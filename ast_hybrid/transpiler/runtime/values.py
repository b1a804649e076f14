"""Values the runtime works with: undefined sentinels, predicates, state layouts.

- :class:`Undefined` stands for a variable that has no value yet (Python would
  raise ``UnboundLocalError`` on reading it); :func:`ld` raises exactly that.
- :func:`as_pred` decides whether a condition is a Python value (then its
  Python truth value) or a traced array (then a boolean scalar tracer); an
  object with ``__ah_pred__()`` (the Gluon front's wrapper) is asked for its
  array first.
- :class:`Layout` splits a tuple of state values into static parts (pytree
  structure, non-array leaves) and dynamic leaves (arrays, Python numbers) that
  ``lax`` carries, and rebuilds it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

__all__ = ["Undefined", "UndefinedReturn", "ld", "retval", "is_traced", "unwrap", "as_pred", "Layout",
           "describe"]


class Undefined:
    """A variable with no value yet; any use raises ``UnboundLocalError``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        object.__setattr__(self, "name", name)

    def __repr__(self):
        return f"Undefined({self.name!r})"

    def _raise(self, *_a, **_k):
        raise UnboundLocalError(
            f"cannot access local variable '{self.name}' where it is not associated with a value")

    __bool__ = __call__ = __iter__ = __len__ = __getitem__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __neg__ = __lt__ = __gt__ = __le__ = __ge__ = _raise

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        self._raise()


class UndefinedReturn(Undefined):
    """The return value before any ``return`` ran (becomes ``None`` at the end)."""

    __slots__ = ()

    def __init__(self, name: str = "ah__retval"):
        super().__init__(name)


def ld(value):
    """A read of a variable that may be undefined: raise as Python would."""
    if isinstance(value, Undefined):
        value._raise()
    return value


def retval(value):
    """The function's result: ``None`` if no ``return`` ran."""
    return None if isinstance(value, UndefinedReturn) else value


def unwrap(value):
    """The array inside a wrapper that offers ``__ah_pred__`` (the Gluon front's NDArray), else ``value``."""
    get = getattr(type(value), "__ah_pred__", None)
    return value if get is None else get(value)


def is_traced(value) -> bool:
    """A tracer, or a wrapper around one."""
    return isinstance(value, Tracer) or isinstance(unwrap(value), Tracer)


def as_pred(cond):
    """``(traced, pred)``: a Python bool, or a boolean scalar tracer."""
    if cond.__class__ is bool:
        return False, cond
    get = getattr(type(cond), "__ah_pred__", None)
    if get is not None:
        cond = get(cond)
    if isinstance(cond, Tracer):
        if cond.shape != ():
            if int(np.prod(cond.shape)) != 1:
                raise ValueError(
                    f"The truth value of an array with shape {tuple(cond.shape)} is ambiguous: a traced "
                    "condition must have exactly one element (use .any() or .all())")
            cond = cond.reshape(())
        if cond.dtype != jnp.bool_:
            cond = cond != 0
        return True, cond
    return False, bool(cond)


_SCALARS = (bool, int, float, complex)


def _is_dynamic(leaf) -> bool:
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic) + _SCALARS)


class Layout:
    """A state tuple split into static structure and dynamic leaves.

    ``slots[i]`` is ``None`` for an :class:`Undefined` value (kept as
    ``undefined[i]``), else ``(treedef, statics, start, stop)``: the pytree
    structure, ``{leaf_index: static_leaf}``, and the range of its dynamic
    leaves in ``dyn``.
    """

    __slots__ = ("slots", "dyn", "undefined")

    def __init__(self, values):
        self.slots, self.dyn, self.undefined = [], [], {}
        for i, v in enumerate(values):
            if isinstance(v, Undefined):
                self.slots.append(None)
                self.undefined[i] = v
                continue
            leaves, treedef = jax.tree_util.tree_flatten(v)
            start = len(self.dyn)
            statics = {}
            for j, leaf in enumerate(leaves):
                if _is_dynamic(leaf):
                    self.dyn.append(leaf)
                else:
                    statics[j] = leaf
            self.slots.append((treedef, statics, start, len(self.dyn)))

    def rebuild(self, dyn) -> tuple:
        out = []
        for i, slot in enumerate(self.slots):
            if slot is None:
                out.append(self.undefined[i])
                continue
            treedef, statics, start, stop = slot
            it = iter(dyn[start:stop])
            leaves = [statics[j] if j in statics else next(it) for j in range(treedef.num_leaves)]
            out.append(jax.tree_util.tree_unflatten(treedef, leaves))
        return tuple(out)

    def slot_dyn(self, i):
        slot = self.slots[i]
        return [] if slot is None else self.dyn[slot[2]:slot[3]]

    def same_static(self, other, i) -> bool:
        a, b = self.slots[i], other.slots[i]
        if a is None or b is None:
            return a is b
        if a[0] != b[0] or a[1].keys() != b[1].keys() or (a[3] - a[2]) != (b[3] - b[2]):
            return False
        return all(_same_object(a[1][k], b[1][k]) for k in a[1])


def _same_object(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def describe(value) -> str:
    """A short type description for diagnostics: ``float32[3]``, ``None``, ``tuple of 2``."""
    if isinstance(value, Undefined):
        return "undefined"
    if value is None:
        return "None"
    if isinstance(value, _SCALARS):
        return f"Python {type(value).__name__}"
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{np.dtype(dtype).name}[{', '.join(map(str, shape))}]"
    leaves, treedef = jax.tree_util.tree_flatten(value)
    if len(leaves) != 1 or leaves[0] is not value:
        return f"{type(value).__name__} with {len(leaves)} leaves ({treedef})"
    return type(value).__name__
