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
/ ``F is not nd``, and what follows ``if F is mx.sym: raise ...``) only runs imperatively, where NDArray semantics hold:
inside it HY004-HY011 are not reported.  HY001, HY002, HY003 and HY012 still
are (they are wrong or stateful whatever ``F`` is).

Which rules depend on the style: MXNet 2 style ``forward`` (no ``F``) gets
neither HY008/HY009/HY011 (MXNet 2's deferred compute handles shapes,
slicing and indexing) nor HY007's "use F" fix.

Over 600 lines: one ``Checker`` visiting every kind of node; splitting it by rule family is in progress
(issue 29).
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from ast_hybrid.common import rules
from ast_hybrid.common.walkers import children
from ast_hybrid.common.diagnostics import Fix
from . import fixes, state
from .kinds import Unit
from .module import module_family
from .tags import Tag, definitely_tensor, holds_tensors, is_op, tensorish
from .nd_only import ND_ONLY

__all__ = ["Finding", "Checker"]

#: builtins a `for` iterates through: their arguments are what is iterated
_ITERATING = frozenset({"enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter"})
SHAPE_ATTRS = ("shape", "ndim", "size", "context", "ctx", "dtype", "T")


_MISSING = object()
#: tags of a value that may be something other than a tensor or a tuple of them
_NOT_ONLY_TENSORS = frozenset({Tag.MIXED, Tag.HOST_ARRAY, Tag.DICT_OF_TENSORS, Tag.SEQUENCE_OF_TENSORS,
                               Tag.SELF_ATTRIBUTE})
#: builtin types ``isinstance`` tests a Python value against (never true of a tensor)
_PYTHON_TYPES = frozenset({"list", "tuple", "dict", "set", "int", "float", "str", "bool"})

_ARITH = ("write `a + b` (`-`, `*`, `/`, `%`) or `F.broadcast_add(a, b)` (`broadcast_sub`, `broadcast_mul`, "
          "`broadcast_div`, `broadcast_mod`)")
_COMPARE = ("compare with `==` (`!=`, `>`, `>=`, `<`, `<=`) or `F.broadcast_equal(a, b)` (`broadcast_not_equal`, "
            "`broadcast_greater`, `broadcast_greater_equal`, `broadcast_lesser`, `broadcast_lesser_equal`)")
_LOGICAL = "use `F.broadcast_logical_and(a, b)` (`broadcast_logical_or`, `broadcast_logical_xor`)"
_GUARD = "put it under `if F is nd:` (imperative only), or do it outside the forward"
#: HY013's help by name: what to write instead of an ``F.<name>`` that ``mx.sym`` lacks.  The ``F`` ops
#: named here exist in MXNet 1.9.1's ``mx.sym`` (``tests/lint/test_nd_only.py`` asks the oracle).
ND_ONLY_INSTEAD = {
    "array": "make the constant outside the forward (`self.params.get_constant(name, value)`, passed in as an "
             "argument), or build it with `F.zeros`/`F.ones`/`F.full`/`F.arange`",
    "empty": "use `F.zeros(shape)`",
    "waitall": "remove it: synchronisation belongs to the caller, and a hybridized forward has nothing to wait for",
    "concatenate": "use `F.concat(*arrays, dim=axis)`",
    "moveaxis": "use `F.transpose(x, axes=...)` or `F.swapaxes(x, dim1, dim2)`",
    "onehot_encode": "use `F.one_hot(indices, depth)`",
    "contrib.isnan": "write `x != x`",
    "contrib.isinf": "write `F.abs(x) == float('inf')`",
    "contrib.isfinite": "write `F.abs(x) < float('inf')` (False for NaN too)",
    **dict.fromkeys(("add", "subtract", "multiply", "divide", "true_divide", "modulo"), _ARITH),
    **dict.fromkeys(("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"), _COMPARE),
    **dict.fromkeys(("logical_and", "logical_or", "logical_xor"), _LOGICAL),
}


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
        self._visitors: dict = {}  # node class -> the class's visit_* function or None (filled as met)
        self._truth_done: set = set()
        self.guard = 0  # > 0 inside an nd guard


    def add(self, code, node, variant="default", fix=None, **values):
        """Report ``code`` at ``node``, worded by the catalogue's ``variant`` of it."""
        message, help = rules.message(code, variant, **values)
        self.findings.append(Finding(code, node, message, help, fix))

    def kind(self, node):
        return self.u.kind(node)

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
        body = self.u.fn.body
        for i, stmt in enumerate(body):
            self.visit(stmt)
            if self._exits_unless_nd(stmt):
                # `if F is sym: raise ...`: what follows only ever runs on NDArrays
                self._guarded(body[i + 1:])
                break
        return self.findings

    def _exits_unless_nd(self, stmt) -> bool:
        return (isinstance(stmt, gast.If) and not stmt.orelse and self.guard_of(stmt.test) == "sym"
                and isinstance(stmt.body[-1], (gast.Raise, gast.Return)))

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
                if Tag.OP_NAMESPACE in self.kind(left):
                    fam = module_family(_op_path(self.u, right))
                elif Tag.OP_NAMESPACE in self.kind(right):
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
        if self.certain(test):   # a list's truth is its length: not a tensor's
            self.add("HY010", test, "truth", what=_describe(test, self.src))

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
            self.add("HY010", node, "chained")

    # -- HY011: iteration and integer indexing -----------------------------
    def _check_iteration(self, it):
        if self.guard or self.u.style != "F":
            return
        if self.certain(it):
            self.add("HY011", it, "iteration", what=_describe(it, self.src))
        elif (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and self.u.is_global(it.func)
              and it.func.id in _ITERATING):
            # `enumerate(x)`, `zip(x, y)`, `reversed(x)`: the loop iterates over each argument
            for a in it.args[:1] if it.func.id != "zip" else it.args:
                self._check_iteration(a)

    def visit_For(self, node):
        self._check_iteration(node.iter)

    visit_AsyncFor = visit_For

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, gast.Load) or self.guard or self.u.style != "F":
            return
        parent = self.u.parents.get(node)
        if isinstance(parent, gast.Subscript) and not isinstance(parent.ctx, gast.Load):
            return  # `x[0][1] = v`: HY002 already says it
        if self.u.cls is not None and self.u.cls.numpy_mode and _basic_index(node.slice):
            return  # MXNet's numpy symbols index like numpy arrays, hybridized too
        if not self.certain(node.value):
            if self.target == "mxnet" and type(node.slice) is gast.Tuple and self._tensor_by_its_index(node.value):
                self.add("HY009", node, what=_describe(node, self.src))
            return
        if self._is_int(node.slice):
            self.add("HY011", node, "index", what=_describe(node, self.src))
        elif self.target == "mxnet":
            self.add("HY009", node, what=_describe(node, self.src))

    def _tensor_by_its_index(self, value) -> bool:
        """Whether ``value``, a tensor or perhaps a tuple of them (a child block's output, an op whose
        number of outputs the call leaves open), is a tensor because it takes a tuple index
        (``x[:, 0, :]``): a tuple or list cannot, so wherever the line runs it is a tensor.  Only
        for values computed from tensors: a method's result (``self.weight.data()``, a helper we
        do not follow) may be a numpy array."""
        k = self.kind(value)
        return (Tag.TENSOR_OR_TUPLE in k and not k & _NOT_ONLY_TENSORS and not self._narrowed_to_python(value)
                and self._computed_from_tensors(value))

    def _computed_from_tensors(self, node, depth=0) -> bool:
        """``node`` is an op's result, a child's result given tensors (``self.blocks(x)``), or a
        parameter; a name, where every binding that reaches it is one of those."""
        if isinstance(node, gast.Call):
            func = node.func
            if is_op(self.kind(func)):
                return True
            return (isinstance(func, gast.Attribute) and Tag.SELF in self.kind(func.value)
                    and any(tensorish(self.kind(a)) for a in node.args))
        if not isinstance(node, gast.Name) or depth > 2:
            return False
        defs = self.u.defs_of(node)
        params = {id(p) for p in self.u.params}
        for d in defs:
            if id(d) in params:
                continue
            bind = self.u.parents.get(d)
            if not (isinstance(bind, gast.Assign) and len(bind.targets) == 1 and bind.targets[0] is d
                    and self._computed_from_tensors(bind.value, depth + 1)):
                return False
        return bool(defs)

    def _is_int(self, idx) -> bool:
        k = self.kind(idx)
        return Tag.INT in k and not tensorish(k)

    # -- assignments: HY001, HY002, HY011 (unpacking), HY012 ---------------
    def visit_Assign(self, node):
        for tgt in node.targets:
            self._check_target(tgt)
            if isinstance(tgt, (gast.Tuple, gast.List)) and not self.guard and self.u.style == "F":
                if self.certain(node.value) and not isinstance(node.value, (gast.Tuple, gast.List)):
                    self.add("HY011", node.value, "unpacking")

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
            self.check_state(tgt, root)
            return
        if isinstance(tgt, gast.Subscript):
            base = tgt.value
            while isinstance(base, gast.Subscript):
                base = base.value
            bk = self.kind(base)
            if self.certain(base, bk) or (Tag.HOST_ARRAY in bk and self._stores_tensor(tgt)):
                self.add("HY002", tgt, what=_describe(base, self.src))

    def _stores_tensor(self, tgt) -> bool:
        """Whether the assignment to ``tgt`` stores a tensor (into an ``mx.nd`` buffer: fails
        when hybridized)."""
        stmt = self.u.parents.get(tgt)
        return isinstance(stmt, gast.Assign) and tensorish(self.kind(stmt.value))

    # -- HY012: state kept on the block across calls ------------------------
    def check_state(self, tgt, root) -> None:
        """HY012: ``self.a = v`` where ``v`` comes from the inputs and ``self.a`` is read back
        by a later call (read, in some method, before that method sets it: a cached mask,
        a previous output).  Setting a constant, or a scratch value the same call reads
        after setting it, is not state."""
        stmt = self.u.parents.get(tgt)
        while stmt is not None and not isinstance(stmt, gast.stmt):
            stmt = self.u.parents.get(stmt)
        value = getattr(stmt, "value", None)
        # `self.n += 1` that the forward computes with (a step counter, an annealed weight): a new
        # value every call, but hybridized it is updated once, while tracing, and the graph keeps it
        update = (isinstance(stmt, gast.AugAssign) and stmt.target is tgt and isinstance(tgt, gast.Attribute)
                  and self._computes_with(tgt))
        if value is None or not (update or self._from_inputs(value)):
            return
        path = []
        node = tgt
        while isinstance(node, (gast.Attribute, gast.Subscript)):
            if isinstance(node, gast.Attribute):
                path.append(node.attr)
            else:
                path = []
            node = node.value
        path = ".".join(reversed(path))
        if path and self.u.cls is not None and state.read_back(self.u.facts, self.u.cls, path):
            self.add("HY012", tgt, "assignment" if self._from_inputs(value) else "update", attr=path)

    def _computes_with(self, tgt) -> bool:
        """Whether the function reads the attribute ``tgt`` stores other than to name things
        (``'t%d_' % self._counter``, an f-string): the value takes part in the computation."""
        want = gast.dump(tgt.value), tgt.attr
        for n in gast.walk(self.u.fn):
            if (type(n) is gast.Attribute and type(n.ctx) is gast.Load and n.attr == want[1]
                    and gast.dump(n.value) == want[0]):
                parent = self.u.parents.get(n)
                while isinstance(parent, (gast.Tuple, gast.FormattedValue)):
                    parent = self.u.parents.get(parent)
                if isinstance(parent, gast.JoinedStr) or (
                        type(parent) is gast.BinOp and type(parent.op) is gast.Mod
                        and type(parent.left) is gast.Constant and isinstance(parent.left.value, str)):
                    continue
                return True
        return False

    def _from_inputs(self, value) -> bool:
        """Whether ``value`` is computed from tensors (a name holding them, an op, a tensor method)."""
        for n in gast.walk(value):
            t = type(n)
            if t is gast.Name and holds_tensors(self.kind(n)):
                return True
            if t is gast.Call and (is_op(self.kind(n.func)) or Tag.TENSOR_METHOD in self.kind(n.func)):
                return True
        return False

    def visit_AugAssign(self, node):
        tgt = node.target
        if isinstance(tgt, gast.Name):
            prior = set()
            for d in self.u.defs_of(tgt):
                prior |= self.u.def_kind(d)
            # a list or tuple being extended (`outs += [y]`, `states += (h,)`) is fine
            vk = self.kind(node.value)
            extends = Tag.SEQUENCE_OF_TENSORS in prior or Tag.SEQUENCE_OF_TENSORS in vk or isinstance(
                node.value, (gast.Tuple, gast.List, gast.ListComp))
            if tensorish(prior) and not extends:
                op = fixes.OPS.get(type(node.op), "?")
                fix = fixes.augassign_fix(self.u, self.src, node)
                self.add("HY001", node, fix=fix, op=op, name=tgt.id)
            return
        self._check_target(tgt)

    # -- calls: HY003-HY007, HY008 len(), HY012 setattr -------------------
    def visit_Call(self, node):
        call = _Call(self, node)
        self.check_out_argument(call)            # HY003
        self.check_setattr_on_block(call)        # HY012
        if self.guard:
            return
        self.check_function(call)                # HY014
        # the first rule that applies reports, in this order: `nd.waitall()` is HY005, not HY007
        # too; `numpy.array(x)` is HY004, any other numpy function of a tensor HY007
        for check in (self.check_wait, self.check_host_sync, self.check_op_outside_f,
                      self.check_print, self.check_len):
            if check(call):
                return

    def check_out_argument(self, call) -> None:
        """HY003: ``out=`` given to an operator."""
        op_like = is_op(call.fk) or Tag.TENSOR_METHOD in call.fk or call.fam is not None
        for kw in call.node.keywords:
            if kw.arg == "out" and op_like:
                self.add("HY003", kw.value)

    def check_setattr_on_block(self, call) -> None:
        """HY012: ``setattr(self, ...)``."""
        if (call.is_global_name and call.name == "setattr" and len(call.args) == 3
                and Tag.SELF in self.kind(call.args[0]) and self._from_inputs(call.args[2])):
            self.add("HY012", call.node, "setattr")

    def check_function(self, call) -> None:
        """HY014 (target mxnet): an ``autograd.Function`` of this file made in a ``hybrid_forward``."""
        if (call.is_global_name and self.target == "mxnet" and self.u.style == "F"
                and call.name in self.u.facts.function_classes()):
            self.add("HY014", call.node, name=call.name)

    def check_wait(self, call) -> bool:
        """HY005: ``x.wait_to_read()``, ``mx.nd.waitall()``."""
        func, name, path = call.node.func, call.name, call.path or ""
        if name == "wait_to_read" and isinstance(func, gast.Attribute):
            self.add("HY005", call.node, "wait_to_read")
            return True
        if name == "waitall" and (call.fam in ("nd", "sym") or path.endswith("waitall")
                                  or (isinstance(func, gast.Attribute) and path.startswith("mxnet"))):
            self.add("HY005", call.node, "waitall")
            return True
        return False

    def check_host_sync(self, call) -> bool:
        """HY004: ``.asnumpy()``, ``.item()``, ``float(x)``, ``numpy.array(x)`` of a tensor."""
        func, name = call.node.func, call.name
        if isinstance(func, gast.Attribute) and name in ("asnumpy", "asscalar"):
            if Tag.HOST_ARRAY_METHOD in call.fk and not tensorish(call.fk):
                return False     # `mx.nd.array(mask).sum().asnumpy()`: no input in it
            self.add("HY004", call.node, "asnumpy", name=name)
            return True
        if isinstance(func, gast.Attribute) and name in ("item", "tolist") and tensorish(
                self.kind(func.value)):
            self.add("HY004", call.node, "item", name=name)
            return True
        if call.is_global_name and name in ("float", "int", "bool", "complex") and call.args and tensorish(
                self.kind(call.args[0])):
            self.add("HY004", call.node, "builtin", name=name)
            return True
        if call.fam == "numpy" and call.arg_tensor and name in ("array", "asarray", "asanyarray", "copy"):
            self.add("HY004", call.node, "numpy", name=name)
            return True
        return False

    def check_op_outside_f(self, call) -> bool:
        """HY007: a numpy function of a tensor, an ``mx.nd``/``mx.sym`` op instead of ``F``'s."""
        if call.fam == "numpy" and call.arg_tensor:
            self.add("HY007", call.node, "numpy", name=call.name)
            return True
        func, path = call.node.func, call.path
        if call.fam in ("nd", "sym") and isinstance(func, gast.Attribute):
            name = path.split(".", 2)[2] if path and path.count(".") >= 2 else call.name
            fix = fixes.use_f_fix(self.u, self.src, func) if self.u.style == "F" else None
            self.add("HY007", call.node, call.fam, fix=fix, name=name)
            return True
        return False

    def check_print(self, call) -> bool:
        """HY006: ``print`` of a tensor (also inside an f-string)."""
        if call.is_global_name and call.name == "print" and (call.arg_tensor or any(
                self._fstring_has_tensor(a) for a in call.args)):
            self.add("HY006", call.node)
            return True
        return False

    def check_len(self, call) -> bool:
        """HY008: ``len()`` of a tensor (target mxnet)."""
        if (call.is_global_name and call.name == "len" and call.args and self._shape_rules()
                and self.certain(call.args[0])):
            self.add("HY008", call.node, "len")
            return True
        return False

    def _shape_rules(self) -> bool:
        return self.target == "mxnet" and self.u.style == "F" and not self.guard

    def _fstring_has_tensor(self, node) -> bool:
        if not isinstance(node, gast.JoinedStr):
            return False
        return any(isinstance(v, gast.FormattedValue) and tensorish(self.kind(v.value))
                   for v in node.values)

    # -- HY008: shape attributes; HY013: F.<name> that mx.sym lacks --------
    def visit_Attribute(self, node):
        if not isinstance(node.ctx, gast.Load):
            return
        if self.target == "mxnet" and node.attr in _ND_ONLY_LAST:
            self.check_nd_only(node)
        if node.attr not in SHAPE_ATTRS:
            return
        if not self._shape_rules():
            return
        vk = self.kind(node.value)
        # a number has no .shape: a name that is a tensor or a number is the tensor here
        if definitely_tensor(vk - {Tag.MIXED}) or (Tag.TENSOR_OR_TUPLE in vk and node.attr != "T"):
            if node.attr == "T":
                self.add("HY008", node, "transpose")
            else:
                self.add("HY008", node, "attribute", attr=node.attr)

    def check_nd_only(self, node) -> None:
        """HY013: ``F.<name>`` (``F.contrib.<name>``...) where MXNet has ``mx.nd.<name>`` and no
        ``mx.sym.<name>``; only through ``F`` itself (``mx.nd.array`` is HY007's or a host array)."""
        if self.guard or self.u.style != "F":
            return
        parts, root = [], node
        while isinstance(root, gast.Attribute):
            parts.append(root.attr)
            root = root.value
        name = ".".join(reversed(parts))
        if isinstance(root, gast.Name) and name in ND_ONLY and Tag.OP_NAMESPACE in self.kind(root):
            self.add("HY013", node, name=name, instead=ND_ONLY_INSTEAD.get(name, _GUARD))

    # nested functions: their bodies are part of the forward, walked as is
    def visit_Lambda(self, node):
        return None


#: the last part of every name of ND_ONLY: what visit_Attribute looks further at
_ND_ONLY_LAST = frozenset(n.rsplit(".", 1)[-1] for n in ND_ONLY)


class _Call:
    """What the call rules read about one call: its callee, where that comes from, its arguments."""

    def __init__(self, checker: Checker, node):
        u, func = checker.u, node.func
        self.node = node
        self.fk = checker.kind(func)
        self.path = u.global_path(func) if isinstance(func, (gast.Name, gast.Attribute)) else None
        self.fam = module_family(self.path)
        self.name = func.attr if isinstance(func, gast.Attribute) else (
            func.id if isinstance(func, gast.Name) else "")
        self.is_global_name = isinstance(func, gast.Name) and u.is_global(func)
        self.args = [a.value if isinstance(a, gast.Starred) else a for a in node.args]
        kind = checker.kind
        self.arg_tensor = any(tensorish(kind(a)) or Tag.SEQUENCE_OF_TENSORS in kind(a) for a in self.args) or any(
            tensorish(kind(k.value)) for k in node.keywords)


def _basic_index(idx) -> bool:
    """An index numpy calls basic: ints, slices, ``None`` and ``...``, or a tuple of them (written
    out: a name may hold a list or a tensor)."""
    if type(idx) is gast.Tuple:
        return all(_basic_index(e) for e in idx.elts)
    if type(idx) is gast.Slice:
        return True
    if type(idx) is gast.Constant:
        return idx.value is None or idx.value is Ellipsis or type(idx.value) is int
    return type(idx) is gast.UnaryOp and type(idx.op) is gast.USub and _basic_index(idx.operand)


def _op_path(unit: Unit, node) -> str | None:
    p = unit.global_path(node)
    return (p + ".x") if p else None
