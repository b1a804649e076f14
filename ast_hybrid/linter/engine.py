"""Steps 2-4 of the linter's pipeline (see :mod:`ast_hybrid.linter`).

Finds the entry points, builds one :class:`~ast_hybrid.linter.kinds.Unit`
per function reached (entries and the same-file helpers they pass ``F``
to), propagates parameter and return tags between units until they are
stable, then runs the :class:`~ast_hybrid.linter.checks.Checker` on each.
No state outlives one call of :func:`analyse`.
"""

from __future__ import annotations

import re

import gast

from ast_hybrid.common.diagnostics import Diagnostic
from ast_hybrid.common.rules import message
from . import MAX_ROUNDS
from .checks import Checker
from .evidence import declared_host, element_evidence, param_evidence, refine, used_as_number
from .kinds import Unit
from .tags import EMPTY, Tag
from .module import ModuleFacts

__all__ = ["analyse"]

_STATES = re.compile(r"(^|_)states?$")


def _entry_tags(unit: Unit, style: str) -> dict:
    fn = unit.fn
    names = [p.id for p in unit.params]
    tags = {}
    if names:
        tags[names[0]] = frozenset((Tag.SELF,))
    rest = names[1:]
    if style == "F" and rest:
        tags[rest[0]] = frozenset((Tag.OP_NAMESPACE,))
        rest = rest[1:]
    for n in rest:
        # Gluon's recurrent cells take `states` as a list of tensors
        tags[n] = frozenset((Tag.TENSOR_OR_TUPLE,)) if _STATES.search(n) else frozenset((Tag.TENSOR,))
    for p in fn.args.kwonlyargs:
        tags[p.id] = frozenset((Tag.TENSOR,))
    for n in unit.flags:       # `is_train=True`: a Python value the caller sets
        tags.pop(n, None)
    if fn.args.vararg is not None:
        tags[fn.args.vararg.id] = frozenset((Tag.SEQUENCE_OF_TENSORS,))
    if fn.args.kwarg is not None:
        tags[fn.args.kwarg.id] = frozenset((Tag.DICT_OF_TENSORS,))
    return tags


class _Session:
    def __init__(self, src, tree, target):
        self.src = src
        self.target = target
        self.facts = ModuleFacts(tree, src.path)
        self.units: dict = {}        # key -> Unit
        self.pinned: dict = {}       # key -> entry tags (never widened by call sites)
        self.errors: list[Diagnostic] = []
        self.spare: dict = {}        # key -> Unit read only for its parameters' evidence
        self.evidence: dict = {}     # (unit, name) -> (tensor, sequence); (unit, name, "host"/"number") -> bool

    def unit(self, key, *, checked: bool = True):
        """The unit of ``key``; ``checked=False``: read for evidence, not linted (unless it is)."""
        if key in self.units:
            return self.units[key]
        if not checked:
            if key not in self.spare:
                self.spare[key] = self._make(key)
            return self.spare[key]
        u = self.spare.pop(key, None) or self._make(key)
        if u is not None:
            self.units[key] = u
        return u

    def _make(self, key):
        cls_name, fname = key
        if cls_name is None:
            fn, cls = self.facts.functions.get(fname), None
        else:
            cls = self.facts.classes.get(cls_name)
            fn = cls.methods.get(fname) if cls else None
        if fn is None:
            return None
        u = Unit(fn, self.facts, cls, "F", is_method=cls is not None)
        self._connect(u)
        if cls is not None and u.is_method and u.params:
            u.param_tags[u.params[0].id] = frozenset((Tag.SELF,))
        return u

    def _connect(self, u: Unit) -> None:
        """Give ``u`` the other units' returns and what uses say of its names."""
        u.unit_lookup = self.units.get
        u.param_refine = self._refine
        u.element_refine = self._refine_element

    # -- what parameters' uses say (lists of tensors vs tensors) -------------
    def _refine(self, unit, name, tags):
        if Tag.TENSOR not in tags:
            return tags
        if self._host(unit, name):     # documented `n : int`: what callers pass is not a tensor
            return tags - {Tag.TENSOR, Tag.TENSOR_OR_TUPLE}
        evidence = self._evidence(unit, name)
        if not evidence[0] and self._number(unit, name):   # `range(n)`, only `float(n)`: a number
            return tags - {Tag.TENSOR, Tag.TENSOR_OR_TUPLE}
        return refine(tags, evidence, optional=name in unit.optional)

    def _host(self, unit, name) -> bool:
        return self._param_fact(unit, name, "host", declared_host)

    def _number(self, unit, name) -> bool:
        return self._param_fact(unit, name, "number", used_as_number)

    def _param_fact(self, unit, name, what, test) -> bool:
        key = (unit, name, what)
        found = self.evidence.get(key)
        if found is None:
            param = next((p for p in unit.params if p.id == name), None)
            found = self.evidence[key] = param is not None and test(unit, param)
        return found

    @staticmethod
    def _refine_element(unit, target, tags):
        return refine(tags, element_evidence(unit, target), optional=False)

    def _evidence(self, unit, name, depth=0):
        key = (unit, name)
        found = self.evidence.get(key)
        if found is None:
            self.evidence[key] = (0, 0)          # a recursive helper: no evidence while in progress
            found = self.evidence[key] = param_evidence(
                unit, name, lambda call, where: self._helper_evidence(unit, call, where, depth))
        return found

    def _helper_evidence(self, unit, call, where, depth):
        target = unit.call_target(call)
        if target is None or target[0] != "unit" or depth > 4:
            return None
        callee = self.unit(target[1], checked=False)
        if callee is None:
            return None
        names = [p.id for p in callee.params]
        if target[2] and callee.is_method:
            names = names[1:]
        if isinstance(where, int):
            if any(type(a) is gast.Starred for a in call.args[:where + 1]) or where >= len(names):
                return None
            where = names[where]
        if where not in names:
            return None
        return self._evidence(callee, where, depth + 1)

    def run(self) -> list[Diagnostic]:
        for cls, fn, style in self.facts.entries():
            if style == "forward" and self.target == "mxnet":
                continue    # MXNet 1.x never traces a HybridBlock's own `forward` (np mode too): it runs on arrays
            key = (cls.name, fn.name)
            if key in self.units:
                continue
            try:
                u = Unit(fn, self.facts, cls, style, is_method=True)
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported as HY999
                self._internal(fn, exc)
                continue
            self._connect(u)
            u.param_tags = _entry_tags(u, style)
            self.units[key] = u
            self.pinned[key] = u.param_tags
        self._propagate()
        out = []
        for key, u in list(self.units.items()):
            try:
                for f in Checker(u, self.src, self.target).run():
                    d = Diagnostic(f.code, f.message, self.src.path, self.src.span(f.node), help=f.help, fix=f.fix)
                    r = f.region
                    out.append((d, None if r is None else (self.src.span(r.guard), r.variant, r.condition, r.on)))
            except RecursionError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported as HY999
                self._internal(u.fn, exc)
        return out + [(d, None) for d in self.errors]

    def _propagate(self):
        """Evaluate the units until their parameters' and returns' tags are stable.  Only a unit
        whose inputs changed (its parameters' tags, a callee's returns) or that is new is
        evaluated again; the others keep their computed kinds for the checker."""
        dirty = list(self.units)
        callers: dict = {}           # callee key -> keys of the units that call it
        for _ in range(MAX_ROUNDS):
            if not dirty:
                break
            again: set = set()
            for key in dirty:
                u = self.units.get(key)
                if u is None:
                    continue
                u.reset()
                try:
                    self._evaluate(u)
                except RecursionError:
                    raise
                except Exception as exc:  # noqa: BLE001
                    self._internal(u.fn, exc)
                    self.units.pop(key, None)
                    continue
                rets = u.nested_returns(u.fn)
                if rets != u.returns:
                    u.returns = rets
                    again |= callers.get(key, set())
                for call, target, skip_first in u.helper_calls:
                    callers.setdefault(target, set()).add(key)
                    new = target not in self.units
                    callee = self.unit(target)
                    if callee is None:
                        continue
                    if new:
                        again.add(target)
                    if target in self.pinned:
                        continue
                    bound = u.bind_args(call, callee.params, skip_first and callee.is_method)
                    for name, tags in bound.items():
                        old = callee.param_tags.get(name, EMPTY)
                        if not tags <= old:
                            callee.param_tags[name] = old | tags
                            again.add(target)
            dirty = [k for k in self.units if k in again]     # in the units' order
        for key in dirty:            # out of rounds: what they computed may be stale
            if key in self.units:
                self.units[key].reset()

    @staticmethod
    def _evaluate(u: Unit):
        for node in u.calls:
            u.kind(node)

    def close(self):
        """Unlink the units from the session (each holds its bound methods): without the cycle
        their trees are freed as soon as the call ends, not by the cyclic collector."""
        for u in (*self.units.values(), *self.spare.values()):
            if u is not None:
                u.unit_lookup = u.param_refine = u.element_refine = None
        self.units.clear()
        self.spare.clear()
        self.evidence.clear()

    def _internal(self, fn, exc):
        text, help = message("HY999", "function", name=getattr(fn, "name", "?"),
                             error=f"{type(exc).__name__}: {exc}")
        self.errors.append(Diagnostic("HY999", text, self.src.path, self.src.span(fn), help=help))


def analyse(src, tree, target) -> list[tuple]:
    """``[(diagnostic, path)]``: every finding, and the imperative-only path it is on (a key of
    :func:`~ast_hybrid.linter.imperative.collapse`) or None."""
    session = _Session(src, tree, target)
    try:
        return session.run()
    finally:
        session.close()
