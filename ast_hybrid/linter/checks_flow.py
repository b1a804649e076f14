"""HY009, HY010, HY011: a tensor asked what only a concrete value can answer.

Truth tests (``if x:``, ``while``, ``assert``, ``and``/``or``/``not``, chained comparisons: HY010),
iteration and integer indexing (``for r in x``, ``x[0]``: HY011), and slicing with ``[]`` (HY009,
target mxnet).  A base of :class:`~ast_hybrid.linter.checks.Checker`, whose ``visit`` calls the
``visit_*`` methods here; they read the checker's unit, guards and certainty (``self.certain``).
"""

from __future__ import annotations

import gast

from .tags import Tag, is_op, tensorish

__all__ = ["FlowChecks"]

#: builtins a `for` iterates through: their arguments are what is iterated
_ITERATING = frozenset({"enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter"})
#: tags of a value that may be something other than a tensor or a tuple of them
_NOT_ONLY_TENSORS = frozenset({Tag.MIXED, Tag.HOST_ARRAY, Tag.DICT_OF_TENSORS, Tag.SEQUENCE_OF_TENSORS,
                               Tag.SELF_ATTRIBUTE})


class FlowChecks:
    """The truth, iteration and indexing rules of :class:`~ast_hybrid.linter.checks.Checker`."""

    # -- HY010: truth tests ------------------------------------------------
    def check_truth(self, test):
        """HY010 where ``test``'s truth value is taken and it is a tensor."""
        if self.guard:
            return
        if isinstance(test, gast.BoolOp):
            self._truth_done.add(test)
            for i, v in enumerate(test.values):
                self.check_truth(v)
                if self._guard_at(test, i):
                    break       # the operands after `isinstance(x, nd.NDArray) and` see NDArrays only
            return
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            self._truth_done.add(test)
            self.check_truth(test.operand)
            return
        if self.certain(test):   # a list's truth is its length: not a tensor's
            self.add("HY010", test, "truth", what=self.describe(test))

    def visit_While(self, node):
        self.check_truth(node.test)

    def visit_Assert(self, node):
        self.check_truth(node.test)

    def visit_comprehension(self, node):
        for cond in node.ifs:
            self.check_truth(cond)
        self._check_iteration(node.iter)

    def visit_BoolOp(self, node):
        guard = next((i for i in range(len(node.values) - 1) if self._guard_at(node, i)), None)
        if node not in self._truth_done:
            for v in node.values[:-1 if guard is None else guard + 1]:
                self.check_truth(v)
        if guard is not None:
            # `isinstance(x, nd.NDArray) and len(x.shape) != 2`, `F is sym or x.shape[0]`: the rest runs
            # imperatively only, as the body of `if F is nd:` does
            self._visit_all(node.values[:guard + 1])
            self._guarded(node.values[guard + 1:], self._nd_region(node.values[guard], isinstance(node.op, gast.And)))
            return False

    def _guard_at(self, node, i) -> bool:
        """Whether operand ``i`` of the ``and``/``or`` ``node`` makes the operands after it imperative-only:
        an nd guard before ``and``, a Symbol guard before ``or``."""
        return (not self.guard and i < len(node.values) - 1
                and self.guard_of(node.values[i]) == ("nd" if isinstance(node.op, gast.And) else "sym"))

    def visit_UnaryOp(self, node):
        if isinstance(node.op, gast.Not) and node not in self._truth_done:
            self.check_truth(node.operand)

    def visit_Compare(self, node):
        if (len(node.ops) > 1 and not self.guard
                and any(tensorish(self.kind(c)) for c in [node.left, *node.comparators[:-1]])):
            self.add("HY010", node, "chained")
        elif len(node.ops) == 1:
            self.check_broadcast(node, node.left, node.comparators[0], node.ops[0])     # HY017

    # -- HY011: iteration and integer indexing -----------------------------
    def _check_iteration(self, it):
        if self.guard or self.u.style != "F":
            return
        if self.certain(it):
            self.add("HY011", it, "iteration", what=self.describe(it))
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
                self.add("HY009", node, what=self.describe(node))
            return
        if self._is_int(node.slice):
            self.add("HY011", node, "index", what=self.describe(node))
        elif self.target == "mxnet":
            self.add("HY009", node, what=self.describe(node))

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
