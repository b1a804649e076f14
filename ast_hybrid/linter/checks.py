"""The rule checks: walk one analysed function and report every finding.

Each ``visit_*`` method of :class:`Checker` looks at one kind of node and
asks :class:`~ast_hybrid.linter.kinds.Unit` whether the values involved are
tensors.  Findings are :class:`Finding` records (code, node, message, help,
fix); :mod:`ast_hybrid.linter` turns them into diagnostics, sets severities
per target and applies ``# noqa``.

*nd guards.*  Code under ``if F is nd:`` (also ``F is mx.nd``, ``F is
mx.ndarray``, ``isinstance(x, nd.NDArray)``, and the ``else`` of ``F is sym``
/ ``F is not nd``) only runs imperatively, where NDArray semantics hold:
inside it HY004-HY011 are not reported.  HY001, HY002, HY003 and HY012 still
are (they are wrong or stateful whatever ``F`` is).

Which rules depend on the style: MXNet 2 style ``forward`` (no ``F``) gets
neither HY008/HY009/HY011 (MXNet 2's deferred compute handles shapes,
slicing and indexing) nor HY007's "use F" fix.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from ast_hybrid.common.diagnostics import Fix
from . import fixes
from .kinds import is_op, Tag, Unit, definitely_tensor, module_family, tensorish

__all__ = ["Finding", "Checker"]

SHAPE_ATTRS = ("shape", "ndim", "size", "context", "ctx", "dtype", "T")
_FUNCS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)


@dataclass
class Finding:
    code: str
    node: object
    message: str
    help: str
    fix: Fix | None = None


def _describe(node, src=None) -> str:
    if isinstance(node, gast.Name):
        return f"`{node.id}`"
    text = fixes.segment(src, node) if src is not None else None
    if text and "\n" not in text and len(text) <= 40:
        return f"`{text}`"
    return "a tensor"


class Checker:
    def __init__(self, unit: Unit, src, target: str):
        self.u = unit
        self.src = src
        self.target = target
        self.findings: list[Finding] = []
        self._truth_done: set = set()
        self.guard = 0  # > 0 inside an nd guard

    def add(self, code, node, message, help, fix=None):
        self.findings.append(Finding(code, node, message, help, fix))

    def kind(self, node):
        return self.u.kind(node)

    # -- walking -----------------------------------------------------------
    def run(self) -> list[Finding]:
        for stmt in self.u.fn.body:
            self.visit(stmt)
        return self.findings

    def visit(self, node):
        meth = getattr(self, "visit_" + type(node).__name__, None)
        if meth is not None and meth(node) is False:
            return
        self.generic(node)

    def generic(self, node):
        for child in gast.iter_child_nodes(node):
            self.visit(child)

    def _guarded(self, nodes):
        self.guard += 1
        try:
            for n in nodes:
                self.visit(n)
        finally:
            self.guard -= 1

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
                if Tag.F in self.kind(left):
                    fam = module_family(_op_path(self.u, right))
                elif Tag.F in self.kind(right):
                    fam = module_family(_op_path(self.u, left))
                if fam in ("nd", "sym"):
                    positive = isinstance(op, (gast.Is, gast.Eq))
                    if fam == "nd":
                        return "nd" if positive else "sym"
                    return "sym" if positive else "nd"
        if (isinstance(test, gast.Call) and isinstance(test.func, gast.Name)
                and test.func.id == "isinstance" and len(test.args) == 2):
            path = self.u.global_path(test.args[1]) or ""
            if path.startswith("mxnet.nd") and path.endswith("NDArray"):
                return "nd"
            if path.startswith("mxnet.sym") and path.endswith("Symbol"):
                return "sym"
        return None

    def visit_If(self, node):
        g = self.guard_of(node.test)
        self.check_truth(node.test)
        self.visit(node.test)
        if g == "nd":
            self._guarded(node.body)
        else:
            for s in node.body:
                self.visit(s)
        if g == "sym":
            self._guarded(node.orelse)
        else:
            for s in node.orelse:
                self.visit(s)
        return False

    def visit_IfExp(self, node):
        g = self.guard_of(node.test)
        self.check_truth(node.test)
        self.visit(node.test)
        (self._guarded if g == "nd" else self._visit_all)([node.body])
        (self._guarded if g == "sym" else self._visit_all)([node.orelse])
        return False

    def _visit_all(self, nodes):
        for n in nodes:
            self.visit(n)

    # -- HY010: truth tests ------------------------------------------------
    def check_truth(self, test):
        """HY010 where ``test``'s truth value is taken and it is a tensor."""
        if self.guard:
            return
        if isinstance(test, gast.BoolOp):
            self._truth_done.add(test)
            for v in test.values:
                self.check_truth(v)
            return
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            self._truth_done.add(test)
            self.check_truth(test.operand)
            return
        if tensorish(self.kind(test)):
            self.add("HY010", test, f"Python truth test of a tensor ({_describe(test, self.src)})",
                     "use `F.where`/`F.contrib.cond` (mxnet) or let ast-hybrid convert it "
                     "to `lax.cond`/`while_loop` (jax)")

    def visit_While(self, node):
        self.check_truth(node.test)

    def visit_Assert(self, node):
        self.check_truth(node.test)

    def visit_comprehension(self, node):
        for cond in node.ifs:
            self.check_truth(cond)
        self._check_iteration(node.iter)

    def visit_BoolOp(self, node):
        if node not in self._truth_done:
            for v in node.values[:-1]:
                self.check_truth(v)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, gast.Not) and node not in self._truth_done:
            self.check_truth(node.operand)

    def visit_Compare(self, node):
        if (len(node.ops) > 1 and not self.guard
                and any(tensorish(self.kind(c)) for c in [node.left, *node.comparators[:-1]])):
            self.add("HY010", node, "chained comparison of tensors takes the truth value of the first one",
                     "compare pairwise and combine with `F.logical_and`")

    # -- HY011: iteration and integer indexing -----------------------------
    def _check_iteration(self, it):
        if self.guard or self.u.style != "F":
            return
        if definitely_tensor(self.kind(it)):
            self.add("HY011", it, f"iteration over a tensor ({_describe(it, self.src)})",
                     "a hybridized MXNet Symbol iterates as one element; use `F.split(x, "
                     "num_outputs=n, axis=0, squeeze_axis=True)`, `F.contrib.foreach`, or an index loop")

    def visit_For(self, node):
        self._check_iteration(node.iter)

    visit_AsyncFor = visit_For

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, gast.Load) or self.guard or self.u.style != "F":
            return
        parent = self.u.parents.get(node)
        if isinstance(parent, gast.Subscript) and not isinstance(parent.ctx, gast.Load):
            return  # `x[0][1] = v`: HY002 already says it
        vk = self.kind(node.value)
        if not definitely_tensor(vk):
            return
        if self._is_int(node.slice):
            self.add("HY011", node, f"integer indexing of a tensor ({_describe(node, self.src)})",
                     "a Symbol's `[i]` selects its i-th *output*, silently; use "
                     "`F.slice_axis(x, axis=0, begin=i, end=i + 1).squeeze(axis=0)` or `F.take`")
        elif self.target == "mxnet":
            self.add("HY009", node, f"slicing a tensor with `[]` ({_describe(node, self.src)})",
                     "MXNet 1.x Symbols cannot be sliced with `[]`; use `F.slice`, `F.slice_axis` "
                     "or `F.slice_like`")

    def _is_int(self, idx) -> bool:
        k = self.kind(idx)
        return Tag.INT in k and not tensorish(k)

    # -- assignments: HY001, HY002, HY011 (unpacking), HY012 ---------------
    def visit_Assign(self, node):
        for tgt in node.targets:
            self._check_target(tgt)
            if isinstance(tgt, (gast.Tuple, gast.List)) and not self.guard and self.u.style == "F":
                if definitely_tensor(self.kind(node.value)) and not isinstance(node.value, (gast.Tuple, gast.List)):
                    self.add("HY011", node.value, "unpacking a tensor into names iterates over it",
                             "use `F.split(x, num_outputs=n, axis=0, squeeze_axis=True)`")

    def visit_AnnAssign(self, node):
        self._check_target(node.target)

    def visit_Delete(self, node):
        for tgt in node.targets:
            self._check_target(tgt)

    def _root(self, node):
        while isinstance(node, (gast.Attribute, gast.Subscript)):
            node = node.value
        return node

    def _check_target(self, tgt):
        if isinstance(tgt, (gast.Tuple, gast.List)):
            for e in tgt.elts:
                self._check_target(e.value if isinstance(e, gast.Starred) else e)
            return
        if not isinstance(tgt, (gast.Attribute, gast.Subscript)):
            return
        root = self._root(tgt)
        if Tag.SELF in self.kind(root):
            self.add("HY012", tgt, "assignment to an attribute of the block inside a forward",
                     "a hybridized forward runs once while tracing, so this state is set once; "
                     "return the value, or keep state in a Parameter/aux state")
            return
        if isinstance(tgt, gast.Subscript):
            base = tgt.value
            while isinstance(base, gast.Subscript):
                base = base.value
            if definitely_tensor(self.kind(base)):
                self.add("HY002", tgt, f"item or slice assignment into a tensor ({_describe(base, self.src)})",
                         "build a new tensor instead: `F.where(mask, value, x)`, `F.concat`, "
                         "or `F.slice_assign`/`F.scatter_nd`")

    def visit_AugAssign(self, node):
        tgt = node.target
        if isinstance(tgt, gast.Name):
            prior = set()
            for d in self.u.defs_of(tgt):
                prior |= self.u.def_kind(d)
            # a list or tuple being extended (`outs += [y]`, `states += (h,)`) is fine
            vk = self.kind(node.value)
            extends = Tag.S in prior or Tag.S in vk or isinstance(
                node.value, (gast.Tuple, gast.List, gast.ListComp))
            if tensorish(prior) and not extends:
                op = fixes.OPS.get(type(node.op), "?")
                fix = fixes.augassign_fix(self.u, self.src, node)
                self.add("HY001", node, f"in-place `{op}=` on tensor `{tgt.id}`",
                         f"write `{tgt.id} = {tgt.id} {op} ...`: MXNet Symbols have no in-place "
                         "operators", fix)
            return
        self._check_target(tgt)

    # -- calls: HY003-HY007, HY008 len(), HY012 setattr -------------------
    def visit_Call(self, node):
        u = self.u
        func = node.func
        fk = self.kind(func)
        path = u.global_path(func) if isinstance(func, (gast.Name, gast.Attribute)) else None
        fam = module_family(path)
        name = func.attr if isinstance(func, gast.Attribute) else (
            func.id if isinstance(func, gast.Name) else "")
        is_global_name = isinstance(func, gast.Name) and u.is_global(func)
        args = [a.value if isinstance(a, gast.Starred) else a for a in node.args]
        arg_tensor = any(tensorish(self.kind(a)) or Tag.S in self.kind(a) for a in args) or any(
            tensorish(self.kind(k.value)) for k in node.keywords)

        # HY003: out=
        op_like = (is_op(fk) or Tag.TMETH in fk or fam is not None)
        for kw in node.keywords:
            if kw.arg == "out" and op_like:
                self.add("HY003", kw.value, "`out=` argument to an operator",
                         "assign the result instead: `y = F.op(...)`; hybridized code cannot "
                         "write into an existing array")
        if is_global_name and name == "setattr" and args and Tag.SELF in self.kind(args[0]):
            self.add("HY012", node, "`setattr` on the block inside a forward",
                     "a hybridized forward runs once while tracing; return the value instead")
        if self.guard:
            return
        # HY005: waits
        if name == "wait_to_read" and isinstance(func, gast.Attribute):
            self.add("HY005", node, "`.wait_to_read()` inside a forward",
                     "remove it: there is nothing to wait for while tracing")
            return
        if name == "waitall" and (fam in ("nd", "sym") or (path or "").endswith("waitall")
                                  or (isinstance(func, gast.Attribute) and func.attr == "waitall"
                                      and (path or "").startswith("mxnet"))):
            self.add("HY005", node, "`waitall()` inside a forward",
                     "remove it: there is nothing to wait for while tracing")
            return
        # HY004: host synchronisation
        if isinstance(func, gast.Attribute) and name in ("asnumpy", "asscalar"):
            self.add("HY004", node, f"`.{name}()` copies a tensor to the host",
                     "keep the computation in `F` ops; a hybridized forward has no values to copy")
            return
        if isinstance(func, gast.Attribute) and name in ("item", "tolist") and tensorish(
                self.kind(func.value)):
            self.add("HY004", node, f"`.{name}()` copies a tensor to the host",
                     "keep the computation in `F` ops")
            return
        if is_global_name and name in ("float", "int", "bool", "complex") and args and tensorish(
                self.kind(args[0])):
            self.add("HY004", node, f"`{name}()` of a tensor forces its value to the host",
                     "keep it a tensor (`x.astype(...)`), or compute the value from static shapes")
            return
        if fam == "numpy" and arg_tensor:
            if name in ("array", "asarray", "asanyarray", "copy"):
                self.add("HY004", node, f"`numpy.{name}` of a tensor copies it to the host",
                         "keep the computation in `F` ops")
            else:
                self.add("HY007", node, f"numpy function `{name}` applied to a tensor",
                         f"use the `F` operator (`F.{name}` or its MXNet name)")
            return
        # HY006: print
        if is_global_name and name == "print" and (arg_tensor or any(
                self._fstring_has_tensor(a) for a in args)):
            self.add("HY006", node, "`print` of a tensor inside a forward",
                     "prints `<Symbol ...>` once while tracing under MXNet; use a debugger "
                     "on the non-hybridized block, or `jax.debug.print` under ast-hybrid")
            return
        # HY007: nd / sym ops instead of F
        if fam in ("nd", "sym") and isinstance(func, gast.Attribute):
            ns = "mx.nd" if fam == "nd" else "mx.sym"
            name = path.split(".", 2)[2] if path and path.count(".") >= 2 else name
            fix = fixes.use_f_fix(u, self.src, func) if u.style == "F" else None
            self.add("HY007", node, f"operator `{name}` called through `{ns}` instead of `F`",
                     f"call `F.{name}(...)`: `{ns}` ops fail on "
                     + ("Symbols once hybridized" if fam == "nd" else "NDArrays when not hybridized"),
                     fix)
            return
        # HY008: len()
        if (is_global_name and name == "len" and args and self._shape_rules()
                and definitely_tensor(self.kind(args[0]))):
            self.add("HY008", node, "`len()` of a tensor",
                     "a hybridized Symbol has no length (len() is silently 1); pass sizes in as "
                     "Python values or use shape-free ops (`F.shape_array`, `*_like` ops)")

    def _shape_rules(self) -> bool:
        return self.target == "mxnet" and self.u.style == "F" and not self.guard

    def _fstring_has_tensor(self, node) -> bool:
        if not isinstance(node, gast.JoinedStr):
            return False
        return any(isinstance(v, gast.FormattedValue) and tensorish(self.kind(v.value))
                   for v in node.values)

    # -- HY008: shape attributes -------------------------------------------
    def visit_Attribute(self, node):
        if not isinstance(node.ctx, gast.Load) or node.attr not in SHAPE_ATTRS:
            return
        if not self._shape_rules():
            return
        vk = self.kind(node.value)
        if definitely_tensor(vk) or (Tag.U in vk and node.attr != "T"):
            if node.attr == "T":
                self.add("HY008", node, "`.T` of a tensor", "MXNet Symbols have no `.T`; use `F.transpose(x)`")
            else:
                self.add("HY008", node, f"`.{node.attr}` of a tensor",
                         "MXNet Symbols have no shape/context; guard it with `if F is nd:`, pass "
                         "sizes in as Python values, or use `*_like` ops and `F.shape_array`")

    # nested functions: their bodies are part of the forward, walked as is
    def visit_Lambda(self, node):
        return None


def _op_path(unit: Unit, node) -> str | None:
    p = unit.global_path(node)
    return (p + ".x") if p else None
