"""The rule checks: walk one analysed function and report every finding.

Each ``visit_*`` method of :class:`Checker` looks at one kind of node and
asks :class:`~ast_hybrid.linter.kinds.Unit` whether the values involved are
tensors.  Findings are :class:`Finding` records (code, node, message, help,
fix), worded by the rule catalogue (:mod:`ast_hybrid.common.rules`: a check
names the rule's message variant and gives its values);
:mod:`ast_hybrid.linter` turns them into diagnostics, sets severities per
target from the catalogue and applies ``# noqa``.

*nd guards.*  Code under ``if F is nd:`` (also ``F is mx.nd``, ``F is
mx.ndarray``, ``isinstance(x, nd.NDArray)``, the ``else`` of ``F is sym``
/ ``F is not nd``, and what follows ``if F is mx.sym: raise ...``) only runs imperatively, where NDArray
semantics hold: inside it HY004-HY011 are not reported.  HY001, HY002, HY003 and HY012 still are (they
are wrong or stateful whatever ``F`` is), as one HY015 note at the guard.

*Flag guards* (:mod:`.imperative`): the path the author's own flag keeps imperative-only (after ``if
self.hybridizable: return ...``, the ``else`` of ``if self.hybridizable:``, ``if not self.hybridizable:``,
a flag the constructor ties to it) is checked as any code, and what it finds becomes one HY015 note at
the guard.  Each :class:`Finding` made on such a path carries its :class:`~.imperative.Region`.

Which rules depend on the style: MXNet 2 style ``forward`` (no ``F``) gets
neither HY008/HY009/HY011 (MXNet 2's deferred compute handles shapes,
slicing and indexing) nor HY007's "use F" fix.

The rules live in three families, each a base of :class:`Checker`: :mod:`.checks_flow` (HY009-HY011:
truth tests, iteration, indexing), :mod:`.checks_assign` (HY001, HY002, HY011 unpacking, HY012) and
:mod:`.checks_calls` (HY003-HY008, HY012 ``setattr``, HY013, HY014).  Here: the walk, the nd guards,
and whether a value is surely a tensor (:meth:`Checker.certain`).
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from ast_hybrid.common import rules
from ast_hybrid.common.walkers import children
from ast_hybrid.common.diagnostics import Fix
from . import fixes
from .checks_assign import AssignmentChecks
from .checks_calls import CallChecks
from .checks_broadcast import BroadcastChecks
from .checks_flow import FlowChecks
from .imperative import Region, constructor_ties, flag_test
from .kinds import Unit
from .module import module_family
from .tags import Tag, definitely_tensor, tensorish

__all__ = ["Finding", "Checker"]

_MISSING = object()
#: builtin types ``isinstance`` tests a Python value against (never true of a tensor)
_PYTHON_TYPES = frozenset({"list", "tuple", "dict", "set", "int", "float", "str", "bool"})
#: attributes an NDArray has and an MXNet 1.9.1 Symbol has not (asked of the oracle): ``hasattr(x, 'shape')`` holds
#: only imperatively (a Symbol has ``asnumpy``, which raises, and ``wait_to_read``)
_NDARRAY_ONLY = frozenset({"shape", "context", "ctx", "dtype", "ndim", "size", "T", "grad"})


@dataclass
class Finding:
    code: str
    node: object
    message: str
    help: str
    fix: Fix | None = None
    region: Region | None = None      # the imperative-only path it is on (its note collects it)


class Checker(FlowChecks, AssignmentChecks, CallChecks, BroadcastChecks):
    """Walks one unit and collects every :class:`Finding` (:meth:`run`)."""

    def __init__(self, unit: Unit, src, target: str):
        self.u = unit
        self.src = src
        self.target = target
        self.findings: list[Finding] = []
        self._visitors: dict = {}  # node class -> the class's visit_* function or None (filled as met)
        self._truth_done: set = set()
        self.guard = 0  # > 0 inside an nd guard
        self.sym_guard = 0  # > 0 where only Symbols reach (`if F is mx.sym:`)
        self.regions: list[Region] = []   # the imperative-only paths being walked, outermost first
        init = unit.cls.methods.get("__init__") if unit.cls is not None else None
        self._ties = constructor_ties(init)
        self._self = unit.params[0].id if unit.is_method and unit.params else None

    def add(self, code, node, variant="default", fix=None, **values):
        """Report ``code`` at ``node``, worded by the catalogue's ``variant`` of it (unless that variant is
        not reported on this target)."""
        targets = rules.RULES[code].messages[variant].targets
        if targets is not None and self.target not in targets:
            return
        message, help = rules.message(code, variant, **values)
        self.findings.append(Finding(code, node, message, help, fix, self.regions[0] if self.regions else None))

    def kind(self, node):
        return self.u.kind(node)

    def describe(self, node) -> str:
        """How a message names ``node``: its source text when short, else "a tensor"."""
        if isinstance(node, gast.Name):
            return f"`{node.id}`"
        text = fixes.segment(self.src, node) if self.src is not None else None
        if text and "\n" not in text and len(text) <= 40:
            return f"`{text}`"
        return "a tensor"

    def certain(self, node, kinds=None) -> bool:
        """Whether ``node`` is surely a tensor.  A name that is a tensor on some paths and a
        Python value on others (``MIXED``) is, unless the code reaches ``node`` through a
        Python condition (``if self.enc is None:``, ``flag or ...``): such code tests the
        number where the same kind of condition picked it, which the linter does not follow."""
        k = self.kind(node) if kinds is None else kinds
        if Tag.MIXED not in k:
            return definitely_tensor(k) and not self._narrowed_to_python(node)
        return definitely_tensor(k - {Tag.MIXED}) and not self._python_condition_above(node)

    def _is_python_type_test(self, test, name: str) -> bool:
        """``isinstance(name, list)`` (``tuple``, ``dict``, ``int``... or a tuple of them): true only
        for a Python value, never for a tensor."""
        if not (isinstance(test, gast.Call) and isinstance(test.func, gast.Name) and test.func.id == "isinstance"
                and self.u.is_global(test.func) and len(test.args) == 2):
            return False
        obj, types = test.args
        if not (isinstance(obj, gast.Name) and obj.id == name):
            return False
        types = types.elts if isinstance(types, gast.Tuple) else [types]
        return bool(types) and all(isinstance(t, gast.Name) and t.id in _PYTHON_TYPES and self.u.is_global(t)
                                   for t in types)

    def _narrowed_to_python(self, node) -> bool:
        """Whether the name ``node`` is reached only where ``isinstance(name, list)`` (a Python type)
        held: ``isinstance(v, list) and len(v) == 0``, or the body of ``if isinstance(v, list):``."""
        if not isinstance(node, gast.Name):
            return False
        parents = self.u.parents
        child, parent = node, parents.get(node)
        while parent is not None and not isinstance(parent, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            tests = []
            if isinstance(parent, gast.BoolOp) and isinstance(parent.op, gast.And) and child is not parent.values[0]:
                tests = parent.values[:parent.values.index(child)]
            elif isinstance(parent, (gast.If, gast.IfExp)) and child is not parent.test and child is not parent.orelse \
                    and not (isinstance(parent.orelse, list) and child in parent.orelse):
                t = parent.test
                tests = t.values if isinstance(t, gast.BoolOp) and isinstance(t.op, gast.And) else [t]
            if any(self._is_python_type_test(t, node.id) for t in tests):
                return True
            child, parent = parent, parents.get(parent)
        return False

    def _python_condition_above(self, node) -> bool:
        parents = self.u.parents
        child, parent = node, parents.get(node)
        while parent is not None and not isinstance(parent, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            if isinstance(parent, (gast.If, gast.IfExp, gast.While)) and child is not parent.test:
                if not tensorish(self.kind(parent.test)):
                    return True
            elif isinstance(parent, gast.BoolOp) and child is not parent.values[0]:
                before = parent.values[:parent.values.index(child)]
                if any(not tensorish(self.kind(v)) for v in before):
                    return True
            child, parent = parent, parents.get(parent)
        return False

    # -- walking -----------------------------------------------------------
    def run(self) -> list[Finding]:
        self._visit_block(self.u.fn.body)
        return self.findings

    def _visit_block(self, stmts):
        """Visit a statement list; after an early exit that keeps the rest imperative-only (``if F is
        mx.sym: raise ...``, ``if self.hybridizable: return out``) walk the rest as that path."""
        for i, stmt in enumerate(stmts):
            self.visit(stmt)
            rest = stmts[i + 1:]
            if not (rest and isinstance(stmt, gast.If) and not stmt.orelse
                    and isinstance(stmt.body[-1], (gast.Raise, gast.Return))):
                continue
            g = self.guard_of(stmt.test)
            if g == "sym":
                self._guarded(rest, self._nd_region(stmt.test, holds=False))
                return
            if g == "nd":
                self._symbols_only(rest)
                return
            flag = self.flag_of(stmt.test)
            if flag is not None and flag.hybridizable_when_true:
                self._imperative(rest, flag.region(stmt.test, holds=False))
                return

    def flag_of(self, test):
        """What ``test`` says of the block's hybridizable configuration (:func:`.imperative.flag_test`)."""
        return flag_test(test, self._self, self._ties)

    def _nd_region(self, test, holds: bool) -> Region:
        text = fixes.segment(self.src, test) if self.src is not None else None
        text = f"`{text}`" if text and "\n" not in text else "an nd guard"
        return Region(test, "nd", text if holds else f"{text} is False")

    def _imperative(self, nodes, region: Region):
        """Walk ``nodes`` as the imperative-only path ``region``: everything reported, into its note."""
        self.regions.append(region)
        try:
            for n in nodes:
                self.visit(n)
        finally:
            self.regions.pop()

    def visit(self, node):
        cls = node.__class__
        meth = self._visitors.get(cls, _MISSING)
        if meth is _MISSING:      # the class's function, not a bound method: no cycle through self
            meth = self._visitors[cls] = getattr(type(self), "visit_" + cls.__name__, None)
        if meth is not None and meth(self, node) is False:
            return
        for child in children(node):
            self.visit(child)

    def generic(self, node):
        for child in children(node):
            self.visit(child)

    def _symbols_only(self, nodes, block=True):
        """Walk ``nodes`` where only Symbols reach (``if F is mx.sym:``): ``mx.sym`` ops are right there."""
        self.sym_guard += 1
        try:
            if block:
                self._visit_block(nodes)
            else:
                for n in nodes:
                    self.visit(n)
        finally:
            self.sym_guard -= 1

    def sym_only(self, test, guard, holds: bool) -> bool:
        """Whether a branch (``holds``: the test's body) is reached by Symbols only (``guard``: the test's
        ``guard_of``): the body of a test that holds only for Symbols (also one term of an ``and``), the ``else``
        of one that holds only for NDArrays."""
        if guard is not None:
            return guard == ("sym" if holds else "nd")
        return holds and isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And) and any(
            self.guard_of(v) == "sym" for v in test.values)

    def _guarded(self, nodes, region: Region):
        """Walk ``nodes`` under an nd guard (HY004-HY011 silent; the rest into ``region``'s note)."""
        self.guard += 1
        self.regions.append(region)
        try:
            for n in nodes:
                self.visit(n)
        finally:
            self.guard -= 1
            self.regions.pop()

    # -- guards --------------------------------------------------------------
    def guard_of(self, test) -> str | None:
        """"nd" when ``test`` holds only for NDArrays, "sym" when only for Symbols."""
        if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And):
            for v in test.values:
                g = self.guard_of(v)
                if g == "nd":
                    return g
            return None
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            g = self.guard_of(test.operand)
            return {"nd": "sym", "sym": "nd"}.get(g)
        if isinstance(test, gast.Compare) and len(test.ops) == 1:
            op, left, right = test.ops[0], test.left, test.comparators[0]
            if isinstance(op, (gast.Is, gast.IsNot, gast.Eq, gast.NotEq)):
                fam = None
                if Tag.OP_NAMESPACE in self.kind(left):
                    fam = module_family(_op_path(self.u, right))
                elif Tag.OP_NAMESPACE in self.kind(right):
                    fam = module_family(_op_path(self.u, left))
                if fam in ("nd", "sym"):
                    positive = isinstance(op, (gast.Is, gast.Eq))
                    if fam == "nd":
                        return "nd" if positive else "sym"
                    return "sym" if positive else "nd"
        if (self.target == "mxnet" and isinstance(test, gast.Call) and isinstance(test.func, gast.Name)
                and test.func.id == "hasattr" and len(test.args) == 2 and isinstance(test.args[1], gast.Constant)
                and test.args[1].value in _NDARRAY_ONLY and self.u.is_global(test.func)):
            return "nd"       # `if hasattr(x, 'shape'):`: a Symbol has none (our traced arrays do: mxnet only)
        if (isinstance(test, gast.Call) and isinstance(test.func, gast.Name)
                and test.func.id == "isinstance" and len(test.args) == 2):
            path = self.u.global_path(test.args[1]) or ""
            if path.startswith("mxnet.nd") and path.endswith("NDArray"):
                return "nd"
            if path.startswith("mxnet.sym") and path.endswith("Symbol"):
                return "sym"
        return None

    def _statically_false(self, test) -> bool:
        """``if False:``, ``if DEBUG:`` where every definition of ``DEBUG`` reaching the test is a false
        constant (``DEBUG = False`` in the forward): the body is dead code, never run or traced."""
        if isinstance(test, gast.Constant):
            return not test.value
        if not isinstance(test, gast.Name):
            return False
        defs = self.u.reaching.get(test)
        if not defs:
            return False
        for d in defs:
            bind = self.u.parents.get(d)
            if not (isinstance(bind, gast.Assign) and len(bind.targets) == 1 and bind.targets[0] is d
                    and isinstance(bind.value, gast.Constant) and not bind.value.value):
                return False
        return True

    def visit_If(self, node):
        if self._statically_false(node.test):      # dead code: only the else runs
            self._visit_block(node.orelse)
            return False
        g = self.guard_of(node.test)
        flag = self.flag_of(node.test) if g is None else None
        self.check_truth(node.test)
        self.visit(node.test)
        for branch, holds in ((node.body, True), (node.orelse, False)):
            if g == ("nd" if holds else "sym"):
                self._guarded(branch, self._nd_region(node.test, holds))
            elif flag is not None and flag.hybridizable_when_true != holds:
                self._imperative(branch, flag.region(node.test, holds))
            elif self.sym_only(node.test, g, holds):
                self._symbols_only(branch)
            else:
                self._visit_block(branch)
        return False

    def visit_IfExp(self, node):
        g = self.guard_of(node.test)
        flag = self.flag_of(node.test) if g is None else None
        self.check_truth(node.test)
        self.visit(node.test)
        for branch, holds in ((node.body, True), (node.orelse, False)):
            if g == ("nd" if holds else "sym"):
                self._guarded([branch], self._nd_region(node.test, holds))
            elif flag is not None and flag.hybridizable_when_true != holds:
                self._imperative([branch], flag.region(node.test, holds))
            elif self.sym_only(node.test, g, holds):
                self._symbols_only([branch], block=False)
            else:
                self.visit(branch)
        return False

    def _visit_all(self, nodes):
        for n in nodes:
            self.visit(n)

    # nested functions: their bodies are part of the forward, walked as is
    def visit_Lambda(self, node):
        return None


def _op_path(unit: Unit, node) -> str | None:
    p = unit.global_path(node)
    return (p + ".x") if p else None
