"""HY001, HY002, HY011 (unpacking), HY012: what a forward assigns.

In-place arithmetic on a tensor (``x += 1``: HY001), item assignment into one (``x[0] = v``: HY002),
unpacking a tensor (``a, b = x``: HY011), and state kept on the block across calls (``self.mask = m``
read back by a later call, ``setattr(self, ...)``: HY012; which attributes are read back comes from
:mod:`.state`).  A base of :class:`~ast_hybrid.linter.checks.Checker`.
"""

from __future__ import annotations

import gast

from . import fixes, state
from .tags import Tag, holds_tensors, is_op, tensorish

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
