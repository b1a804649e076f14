"""HY001, HY002, HY011 (unpacking), HY012: what a forward assigns.

In-place arithmetic on a tensor (``x += 1``: HY001), item assignment into one (``x[0] = v``: HY002),
unpacking a tensor (``a, b = x``: HY011), and state kept on the block across calls (``self.mask = m``
read back by a later call, ``setattr(self, ...)``: HY012; which attributes are read back comes from
:mod:`.state`).  A base of :class:`~ast_hybrid.linter.checks.Checker`.
"""

from __future__ import annotations

import gast

from . import fixes, state
from .module import dotted_name
from .tags import Tag, holds_tensors, is_op, tensorish

# what leaves a block before its later statements run
_LEAVES = (gast.Return, gast.Raise, gast.Break, gast.Continue, gast.Yield, gast.YieldFrom)

__all__ = ["AssignmentChecks"]

#: what a tensor says of where and how it is stored, not of its values
_PLACEMENT = frozenset({"context", "ctx", "dtype", "stype"})
#: methods that give the same values elsewhere (another device, another dtype)
_MOVES = frozenset({"as_in_context", "as_in_ctx", "copyto", "astype"})


class AssignmentChecks:
    """The assignment rules of :class:`~ast_hybrid.linter.checks.Checker`."""

    # -- assignments: HY001, HY002, HY011 (unpacking), HY012 ---------------
    def visit_Assign(self, node):
        for tgt in node.targets:
            self._check_target(tgt)
            if isinstance(tgt, (gast.Tuple, gast.List)) and not self.guard and self.u.style == "F":
                if (self.certain(node.value) and not isinstance(node.value, (gast.Tuple, gast.List))
                        and not self._custom_of_another_module(node.value)):
                    self.add("HY011", node.value, "unpacking")

    def _custom_of_another_module(self, value) -> bool:
        """``F.Custom(..., op_type="t")`` of a prop this file does not register: its outputs are counted
        as one (MXNet's default), but unpacking it says how many it has (Faster R-CNN's target ops: 2, 3)."""
        if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and value.func.attr == "Custom"):
            return False
        op_type = next((k.value for k in value.keywords if k.arg == "op_type"), None)
        return not (isinstance(op_type, gast.Constant) and self.u.facts.registers_custom(op_type.value))

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
                self.add("HY002", tgt, what=self.describe(base))

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
                  and self._computes_with(tgt) and not self._closes_its_guard(stmt))
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
        if path and self.u.cls is not None and state.read_back(self.u.facts, self.u.cls, path) \
                and not self._stored_again(stmt, tgt):
            self.add("HY012", tgt, "assignment" if self._from_inputs(value) else "update", attr=path)

    def _closes_its_guard(self, stmt) -> bool:
        """``self.n += 1`` inside ``if self.n == 0:`` (or ``if not self.n:``): a first-call guard (lazy
        parameters made once, sphereface_mxnet_gluon's AngleLinear); the branch never runs again, op by op
        or hybridized, so the counter's value computes nothing."""
        if not (isinstance(stmt.op, gast.Add) and type(stmt.value) is gast.Constant
                and type(stmt.value.value) is int and stmt.value.value > 0):
            return False
        want = dotted_name(stmt.target)
        node, parent = stmt, self.u.parents.get(stmt)
        while parent is not None and parent is not self.u.fn:
            if isinstance(parent, gast.If) and any(s is node for s in parent.body):
                test = parent.test
                if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
                    return want is not None and dotted_name(test.operand) == want
                return (isinstance(test, gast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], gast.Eq)
                        and want is not None and dotted_name(test.left) == want
                        and type(test.comparators[0]) is gast.Constant and test.comparators[0].value == 0)
            node, parent = parent, self.u.parents.get(parent)
        return False

    def _stored_again(self, stmt, tgt) -> bool:
        """Whether the function stores ``tgt`` (``self.a``) again after ``stmt`` whichever way it goes on: a
        later statement of ``stmt``'s block, or of a block around it, assigns it, and nothing between leaves
        (``return``, ``raise``, ``break``, ``continue``, ``yield``).  Only that last value can reach a later
        call; this one is scratch (a forward that writes ``self.h``, reads it, then writes it again)."""
        want = gast.dump(tgt)
        node = stmt
        while node is not None and node is not self.u.fn:
            parent = self.u.parents.get(node)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                at = next((i for i, s in enumerate(block) if s is node), None) if isinstance(block, list) else None
                if at is not None:
                    for later in block[at + 1:]:
                        if isinstance(later, (gast.Assign, gast.AugAssign, gast.AnnAssign)) and any(
                                gast.dump(t) == want for t in getattr(later, "targets", None) or [later.target]):
                            return True
                        if any(isinstance(n, _LEAVES) for n in gast.walk(later)):
                            return False
                    break
            if isinstance(parent, (gast.For, gast.While, gast.AsyncFor, gast.Try)) or parent is None:
                return False    # a loop can end before the later store runs; a handler can skip it
            node = parent
        return False

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
        """Whether ``value`` is computed from tensors (a name holding them, an op, a tensor method).  What a
        tensor says of where it lives (``x.context``, ``x.dtype``) is not its values: a constant moved to the
        input's device (``self.window.as_in_context(img.context)``) is still the constant."""
        todo = [value]
        while todo:
            n = todo.pop()
            t = type(n)
            if t is gast.Attribute and n.attr in _PLACEMENT:
                continue
            if t is gast.Name and holds_tensors(self.kind(n)):
                return True
            if t is gast.Call and (is_op(self.kind(n.func)) or (
                    Tag.TENSOR_METHOD in self.kind(n.func) and not self._moves_constant(n))):
                return True
            todo.extend(gast.iter_child_nodes(n))
        return False

    def _moves_constant(self, call) -> bool:
        """``c.as_in_context(ctx)`` (``copyto``, ``astype``) of a ``c`` not computed from the inputs."""
        func = call.func
        return (isinstance(func, gast.Attribute) and func.attr in _MOVES
                and not self._from_inputs(func.value))

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
