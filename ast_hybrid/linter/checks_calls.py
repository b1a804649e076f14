"""HY003-HY008, HY012 (``setattr``), HY013, HY014, HY016: what a forward calls, and the attributes it reads.

``out=`` (HY003), host synchronisation (``.asnumpy()``, ``float(x)``: HY004), waiting (HY005),
``print`` (HY006), an op of ``mx.nd``/``mx.sym``/numpy instead of ``F`` (HY007), ``len()`` and shape
attributes (HY008, target mxnet), ``setattr(self, ...)`` (HY012), ``F.<name>`` that ``mx.sym`` lacks
(HY013, with :data:`ND_ONLY_INSTEAD`, what to write instead) and an ``autograd.Function`` made in a
``hybrid_forward`` (HY014), a tensor's ``reshape`` given the shape as separate arguments (HY016).  A base
of :class:`~ast_hybrid.linter.checks.Checker`.
"""

from __future__ import annotations

import gast

from . import fixes
from .module import module_family
from .nd_only import ND_ONLY
from . import state
from .tags import Tag, definitely_tensor, holds_tensors, is_op, tensorish

__all__ = ["CallChecks", "ND_ONLY_INSTEAD", "SHAPE_ATTRS"]

SHAPE_ATTRS = ("shape", "ndim", "size", "context", "ctx", "dtype", "T")

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


#: numpy functions that hand a non-ndarray argument to its own method of the same name, which MXNet's Symbols
#: and NDArrays and ast-hybrid's arrays all have with these arguments: ``np.swapaxes(x, 0, 1)`` is
#: ``x.swapaxes(0, 1)``, hybridized or not (each asked of MXNet 1.9.1 and of ``ast-hybrid run``, imperative and
#: hybridized: ``tests/lint/test_precision_fresh.py``).  ``transpose`` only with its axes, ``squeeze`` only without.
_NUMPY_DELEGATES = frozenset(("swapaxes", "clip", "sum", "max", "min", "prod", "argmax", "argmin", "repeat"))


def _numpy_delegates(node, name) -> bool:
    given = len(node.args) + len(node.keywords)
    if name == "transpose":
        return given >= 2
    if name == "squeeze":
        return given == 1
    return name in _NUMPY_DELEGATES


class CallChecks:
    """The call and attribute rules of :class:`~ast_hybrid.linter.checks.Checker`."""

    # -- calls: HY003-HY007, HY008 len(), HY012 setattr -------------------
    def visit_Call(self, node):
        call = _Call(self, node)
        self.check_out_argument(call)            # HY003
        self.check_setattr_on_block(call)        # HY012
        self.check_kept_list(call)               # HY012
        if self.guard:
            return
        self.check_function(call)                # HY014
        # the first rule that applies reports, in this order: `nd.waitall()` is HY005, not HY007
        # too; `numpy.array(x)` is HY004, any other numpy function of a tensor HY007
        for check in (self.check_wait, self.check_host_sync, self.check_op_outside_f,
                      self.check_print, self.check_len, self.check_positional_reshape):
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

    def check_kept_list(self, call) -> None:
        """HY012: ``self.out.append(x)`` (``extend``, ``insert``) of a value from the inputs into a list a later
        call reads back (HourGlass-mxnet: ``self.out = []`` in the constructor, appended to and returned by
        the forward: op by op it grows every call, hybridized it is filled once)."""
        func = call.node.func
        if not (isinstance(func, gast.Attribute) and func.attr in ("append", "extend", "insert")
                and isinstance(func.value, gast.Attribute) and Tag.SELF in self.kind(func.value.value)
                and self.u.cls is not None):
            return
        kept = state.read_back(self.u.facts, self.u.cls, func.value.attr)
        if kept and any(self._from_inputs(a) for a in call.node.args):
            self.add("HY012", call.node, "append", attr=func.value.attr, method=func.attr)

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
        """HY007: a numpy function of a tensor, an ``mx.nd``/``mx.sym`` op instead of ``F``'s (an ``mx.sym`` op
        where only Symbols reach it, under ``if F is mx.sym:``, is not), an ``mx.np``/``mx.npx`` op of a
        tensor."""
        if call.fam == "numpy" and call.arg_tensor and not _numpy_delegates(call.node, call.name):
            self.add("HY007", call.node, "numpy", name=call.name)
            return True
        func, path = call.node.func, call.path
        if call.fam == "sym" and self.sym_guard:
            return False
        if call.fam == "mxnp" and call.arg_tensor and path and path.count(".") >= 2:
            ns, name = path.split(".", 2)[1:]
            self.add("HY007", call.node, "mxnp", ns=ns, name=name)
            return True
        # `nd.relu(x)`, or `relu(x)` after `from mxnet.contrib.ndarray import BilinearResize2D`-style imports
        if call.fam in ("nd", "sym") and (isinstance(func, gast.Attribute) or call.is_global_name):
            name = path.split(".", 2)[2] if path and path.count(".") >= 2 else call.name
            fix = (fixes.use_f_fix(self.u, self.src, func) if self.u.style == "F" and isinstance(func, gast.Attribute)
                   else None)
            self.add("HY007", call.node, call.fam, fix=fix, name=name)
            return True
        return False

    def check_print(self, call) -> bool:
        """HY006: ``print`` of a tensor (also inside an f-string, ``'{}'.format(x)``, ``'%s' % x``)."""
        if call.is_global_name and call.name == "print" and (call.arg_tensor or any(
                self._formats_tensor(a) for a in call.args)):
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

    def check_positional_reshape(self, call) -> bool:
        """HY016 (target mxnet): ``x.reshape(a, b, ...)`` of a tensor, the shape as separate arguments."""
        func, args = call.node.func, call.node.args
        # the positional arguments before any `*rest` (`x.reshape(bs, k, *x.shape[-2:])`: two at least)
        leading = next((i for i, a in enumerate(args) if isinstance(a, gast.Starred)), len(args))
        # the receiver a tensor, or a child block's output (a tuple has no `reshape`)
        if not (call.name == "reshape" and isinstance(func, gast.Attribute) and leading >= 2
                and self._shape_rules()
                and not isinstance(args[0], (gast.Tuple, gast.List)) and not holds_tensors(self.kind(args[0]))
                and Tag.SEQUENCE_OF_TENSORS not in self.kind(args[0]) and self._tensor(func.value)):
            return False
        fix = fixes.shape_tuple_fix(self.src, args) if leading == len(args) else None
        self.add("HY016", call.node, fix=fix, n=len(args), args=fix.edits[0].content[1:-1] if fix else "...")
        return True

    def _shape_rules(self) -> bool:
        return self.target == "mxnet" and self.u.style == "F" and not self.guard

    def _formats_tensor(self, node) -> bool:
        """A string made from a tensor: an f-string, ``'...'.format(x)``, ``'...' % x``."""
        if isinstance(node, gast.JoinedStr):
            return any(isinstance(v, gast.FormattedValue) and tensorish(self.kind(v.value))
                       for v in node.values)
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "format"
                and isinstance(node.func.value, gast.Constant) and isinstance(node.func.value.value, str)):
            return any(tensorish(self.kind(a)) for a in node.args) or any(
                tensorish(self.kind(k.value)) for k in node.keywords)
        if (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mod) and isinstance(node.left, gast.Constant)
                and isinstance(node.left.value, str)):
            right = node.right.elts if isinstance(node.right, gast.Tuple) else [node.right]
            return any(tensorish(self.kind(v)) for v in right)
        return False

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


#: the last part of every name of ND_ONLY: what visit_Attribute looks further at
_ND_ONLY_LAST = frozenset(n.rsplit(".", 1)[-1] for n in ND_ONLY)


class _Call:
    """What the call rules read about one call: its callee, where that comes from, its arguments."""

    def __init__(self, checker, node):
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
