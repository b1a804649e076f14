"""What a call gives, inside a forward: the call half of :class:`~ast_hybrid.linter.kinds.Unit`.

:class:`CallKinds` is a base of ``Unit``: its methods read the unit's chains (``parents``, ``defs_of``),
its file (``facts``, ``cls``) and :meth:`~ast_hybrid.linter.kinds.Unit.kind`, and give the kind of a
call: an operator's result (a tensor, or as many as MXNet says it has:
:mod:`ast_hybrid.common.op_outputs`), a tensor method's, a child block's, a builtin's, or what a
function of the same file returns.  Following calls into the file (:meth:`CallKinds.resolve_helper`,
:meth:`CallKinds.call_target`) and binding their arguments (:meth:`CallKinds.bind_args`) is how the
engine (:mod:`.engine`) carries tags from a forward into its helpers and back.

Which calls it follows, and what it does not (deliberately): :mod:`.kinds`.
"""

from __future__ import annotations

import gast

from ast_hybrid.common.op_names import NAMES
from ast_hybrid.common.op_outputs import OUTPUTS
from ast_hybrid.common.walkers import children
from .module import dotted_name, module_family, module_of
from .tags import (EMPTY, HOST_METHODS, INFO_METHODS, MULTI_OUTPUT, TENSOR_METHODS, Items, Tag, definitely_tensor,
                   elements_of, holds_tensors, is_op, tensorish, HOST_ARRAY_KIND, SEQUENCE_KIND, TENSOR_KIND,
                   TENSOR_OR_TUPLE_KIND, TENSORS_KIND)

__all__ = ["CallKinds", "SINGLE_OUTPUT_LAYERS"]

_BUILTIN_SAME = frozenset({"abs"})
_BUILTIN_SEQ = frozenset({"tuple", "list", "sorted", "reversed"})


class CallKinds:
    """The kinds of calls, for :class:`~ast_hybrid.linter.kinds.Unit` (a base of it, never made alone)."""

    def _call_kind(self, node) -> frozenset:
        func = node.func
        fk = self.kind(func)
        # helpers (same file) first: their result is what they return
        target = self.resolve_helper(node)
        if target is not None:
            return self._bind_helper(node, *target)
        if Tag.MULTI_OUTPUT_OP in fk:
            return TENSOR_OR_TUPLE_KIND
        if is_op(fk):
            out = EMPTY
            for name in self._op_names(func):
                out |= self._custom_outputs(node) if name == "Custom" else _outputs(name, node, bound=0)
            return out
        if Tag.TENSOR_METHOD in fk:
            name = func.attr
            if name in HOST_METHODS or name in INFO_METHODS or name in ("wait_to_read", "asnumpy"):
                return EMPTY
            if name == "split_v2":
                return TENSORS_KIND
            if name in OUTPUTS:
                return _outputs(name, node, bound=1)
            vk = self.kind(func.value)
            if Tag.DICT_OF_TENSORS in vk and name in ("values", "items"):
                return SEQUENCE_KIND if name == "values" else EMPTY
            if Tag.TENSOR in vk or Tag.DICT_OF_TENSORS in vk or name in TENSOR_METHODS:
                return TENSOR_KIND   # a tuple has no `.reshape`: whatever had it was a tensor
            return TENSOR_OR_TUPLE_KIND
        if Tag.HOST_ARRAY_METHOD in fk and not tensorish(fk):
            if func.attr in HOST_METHODS:
                return EMPTY
            return TENSOR_KIND if self._tensor_argument(node) else HOST_ARRAY_KIND
        if Tag.SELF_ATTRIBUTE in fk or Tag.TENSOR_OR_TUPLE in fk:
            if (type(func) is gast.Attribute and Tag.SELF in self.kind(func.value)
                    and self._constructed(func.attr) == "layer" and len(node.args) == 1 and not node.keywords
                    and type(node.args[0]) is not gast.Starred):
                return TENSOR_KIND       # `self.rnn(x)`: a Gluon layer given its data alone
            return TENSOR_OR_TUPLE_KIND
        if isinstance(func, gast.Attribute):
            path = self.global_path(func)
            if module_family(path) in ("nd", "sym", "mxnp"):
                return self._op_result(node, path)
            return EMPTY
        if isinstance(func, gast.Name) and self.is_global(func):
            name = func.id
            path = self.global_path(func)
            if module_family(path) in ("nd", "sym", "mxnp") and path.count(".") >= 2:
                return self._op_result(node, path)      # `squeeze(x)` after `from mxnet.ndarray import squeeze`
            if name == "getattr" and node.args and is_op(self.kind(node.args[0])):
                return frozenset((Tag.OP,))
            if name == "getattr" and len(node.args) == 2 and Tag.SELF in self.kind(node.args[0]):
                return frozenset((Tag.SELF_ATTRIBUTE,))    # `getattr(self, 'conv%d' % i)`: a child, called as one
            if name in _BUILTIN_SAME and node.args:
                return TENSOR_KIND if tensorish(self.kind(node.args[0])) else EMPTY
            if name in ("min", "max") and len(node.args) >= 2:
                # `min(a, b)` returns one of its arguments: of tensors, a tensor; of a tensor and a
                # number, either (MIXED)
                kinds = [self.kind(a) for a in node.args]
                if any(tensorish(k) for k in kinds):
                    if all(definitely_tensor(k) for k in kinds):
                        return TENSOR_KIND
                    return frozenset((Tag.TENSOR, Tag.MIXED))
            if name in _BUILTIN_SEQ and node.args:
                return elements_of(self.kind(node.args[0])) and SEQUENCE_KIND
        return EMPTY

    def _op_result(self, node, path) -> frozenset:
        """What an ``mx.nd``/``mx.sym``/``mx.np`` operator ``path`` (``mxnet.nd.relu``) called as ``node`` gives."""
        name = path.rsplit(".", 1)[1]
        if name in ("waitall",):
            return EMPTY
        if name in MULTI_OUTPUT:
            return TENSOR_OR_TUPLE_KIND
        op = path.split(".", 2)[2]
        out = self._custom_outputs(node) if op == "Custom" else _outputs(op, node, bound=0)
        if module_family(path) == "nd" and out == TENSOR_KIND and not self._tensor_argument(node):
            return HOST_ARRAY_KIND    # `mx.nd.array(mask)`: made from host values alone
        return out

    def _custom_outputs(self, call) -> frozenset:
        """What ``F.Custom(..., op_type="name")`` gives: as many tensors as the ``CustomOpProp``
        registered under that name in this file lists in ``list_outputs``; one, MXNet's default
        (``['output']``), for a prop registered elsewhere; a tensor or a tuple of them when the
        file's prop does not say."""
        op_type = next((k.value for k in call.keywords if k.arg == "op_type"), None)
        n = self.facts.custom_outputs(op_type.value) if type(op_type) is gast.Constant else 1
        if n is None:
            return TENSORS_KIND
        return TENSOR_KIND if n == 1 else frozenset((Tag.SEQUENCE_OF_TENSORS, Items((TENSOR_KIND,) * n)))

    def _called(self, node) -> bool:
        parent = self.parents.get(node)
        return type(parent) is gast.Call and parent.func is node

    def _tensor_argument(self, call) -> bool:
        """Whether an argument of ``call`` holds tensors."""
        return any(holds_tensors(self.kind(a)) for a in call.args) or any(
            holds_tensors(self.kind(k.value)) for k in call.keywords)

    def _constructed(self, attr: str) -> str | None:
        """What the constructor stores in ``self.<attr>``: "host" (a Python or numpy value, a
        lambda), "layer" (a Gluon layer that returns one tensor when given one), else None."""
        if self.cls is None:
            return None
        cache = self.facts.constructed
        key = (self.cls.name, attr)
        if key not in cache:
            values = self.facts.init_values(self.cls, attr)
            found = None
            if values:
                if all(_host_value(self.facts, v) for v in values):
                    found = "host"
                elif all(_layer_path(self.facts, v) for v in values):
                    found = "layer"
            cache[key] = found
        return cache[key]

    def _op_names(self, func, depth=0) -> list:
        """``["contrib.box_encode"]`` for ``F.contrib.box_encode``: the op's name below ``F``;
        through names bound to ops (``fn = F.npx.rnn if np else F.RNN``) and
        ``getattr(F, "name")``; ``[""]`` (an op of unknown name) when it cannot tell."""
        if type(func) is gast.IfExp:
            return self._op_names(func.body, depth) + self._op_names(func.orelse, depth)
        if (type(func) is gast.Call and type(func.func) is gast.Name and func.func.id == "getattr"
                and len(func.args) == 2 and type(func.args[1]) is gast.Constant):
            return [str(func.args[1].value)]
        parts = []
        while type(func) is gast.Attribute:
            parts.append(func.attr)
            func = func.value
        if type(func) is not gast.Name:
            return [""]
        if parts or depth > 4:
            return [".".join(reversed(parts))]
        out = []
        for d in self.defs_of(func):
            parent = self.parents.get(d)
            if type(parent) is not gast.Assign or parent.targets[0] is not d:
                return [""]
            out += self._op_names(parent.value, depth + 1)
        return out or [""]

    def resolve_helper(self, node):
        """``(kind, target, skip_first)`` when ``node`` calls a function of this file we follow.

        kind is "nested" (target: the gast FunctionDef) or "unit" (target: a
        key ``(class name or None, function name)`` of another unit).  A module
        function or a method is followed when the call passes it ``F``, or a
        tensor (a helper taking tensors without ``F``).
        """
        found = self.call_target(node)
        if found is None or found[0] == "nested":
            return found
        args = [a.value if type(a) is gast.Starred else a for a in node.args]
        args += [k.value for k in node.keywords]
        kinds = [self.kind(a) for a in args]
        if any(Tag.OP_NAMESPACE in k or holds_tensors(k) for k in kinds):
            return found
        return None

    def call_target(self, node):
        """What :meth:`resolve_helper` would follow, from the call's syntax alone."""
        func = node.func
        if type(func) is gast.Name:
            defs = self.defs_of(func)
            nested = [d for d in defs if type(d) is gast.FunctionDef]
            if nested:
                return ("nested", nested[0], False)
            if not defs and func.id in self.facts.functions:
                return ("unit", (None, func.id), False)
            return None
        if type(func) is not gast.Attribute:
            return None
        owner = func.value
        if type(owner) is gast.Name and self.cls is not None and self.is_method and owner.id == self.params[0].id \
                and self.defs_of(owner) and all(type(self.parents.get(d)) is gast.arguments for d in self.defs_of(owner)):
            found = self.facts.find_method(self.cls, func.attr)
            if found is not None:
                return ("unit", (found[0].name, func.attr), True)
            return None
        if (type(owner) is gast.Call and type(owner.func) is gast.Name
                and owner.func.id == "super" and self.cls is not None):
            found = self.facts.find_method(self.cls, func.attr, skip_self=True)
            if found is not None:
                return ("unit", (found[0].name, func.attr), True)
            return None
        if type(owner) is gast.Name and self.is_global(owner) and owner.id in self.facts.classes:
            cls = self.facts.classes[owner.id]
            found = self.facts.find_method(cls, func.attr)
            if found is not None:
                return ("unit", (found[0].name, func.attr), False)
        return None

    def _bind_helper(self, call, kind, target, skip_first) -> frozenset:
        if kind == "nested":
            return self.nested_returns(target)
        self.helper_calls.append((call, target, skip_first))
        return self.unit_returns(target)

    #: set by the checker: key -> Unit for other units (their current return tags)
    unit_lookup = None

    def unit_returns(self, key) -> frozenset:
        unit = self.unit_lookup(key) if self.unit_lookup else None
        return unit.returns if unit is not None else EMPTY

    def bind_args(self, call, params, skip_first: bool) -> dict:
        """Tags each parameter (by name) receives from ``call``."""
        names = [p.id for p in params]
        if skip_first:
            names = names[1:]
        out: dict[str, frozenset] = {}
        for i, a in enumerate(call.args):
            if isinstance(a, gast.Starred):
                el = elements_of(self.kind(a.value)) | (self.kind(a.value) & {Tag.OP_NAMESPACE})
                for n in names[i:]:
                    out[n] = out.get(n, EMPTY) | el
                break
            if i < len(names):
                out[names[i]] = out.get(names[i], EMPTY) | self.kind(a)
        for kw in call.keywords:
            if kw.arg is not None and kw.arg in names:
                out[kw.arg] = out.get(kw.arg, EMPTY) | self.kind(kw.value)
        return out

    def nested_returns(self, fndef) -> frozenset:
        returns = self._returns.get(fndef)
        if returns is None:
            returns = self._returns[fndef] = [n for n in _own_nodes(fndef) if isinstance(n, gast.Return)]
        out = set()
        for node in returns:
            if node.value is not None:
                out |= self.kind(node.value)
        return frozenset(out)


def _outputs(op: str, call, bound: int) -> frozenset:
    """What calling ``op`` gives: a tensor, a tuple of a known number of them, or either.

    The count is MXNet's (:data:`~ast_hybrid.common.op_outputs.OUTPUTS`), chosen by the
    parameters the call spells as literals; ``bound`` inputs are already given (1 for a
    tensor's method, ``x.split(...)``).  A count a parameter sets to a value the call does
    not spell is unknown.
    """
    entry = OUTPUTS.get(op)
    if entry is None:
        # an operator MXNet does not have (a fork's, a plugin's: `F.SumSquare`): its count is not known
        unknown = op and op not in NAMES and not any(part.startswith("_") for part in op.split("."))
        return TENSOR_OR_TUPLE_KIND if unknown else TENSOR_KIND
    if type(entry) is int:
        n = entry
    else:
        signature, count_param, params, defaults, combos = entry
        given = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        if not any(a.startswith("*") for a in signature):
            for name, arg in zip(signature[bound:], call.args):
                if type(arg) is gast.Starred:
                    return TENSORS_KIND
                given[name] = arg
        if any(kw.arg is None for kw in call.keywords):
            return TENSORS_KIND
        values = []
        for name, default in zip(params, defaults):
            node = given.get(name)
            value = default if node is None else (node.value if type(node) is gast.Constant else None)
            if isinstance(value, int) and not isinstance(value, bool) and default in (True, False):
                value = bool(value)
            values.append(value)
        n = combos.get(tuple(values))
        if count_param is not None:
            node = given.get(count_param)
            n = node.value if type(node) is gast.Constant and type(node.value) is int else None
        if n is None:
            return TENSORS_KIND
    if n == 1:
        return TENSOR_KIND
    return frozenset((Tag.SEQUENCE_OF_TENSORS, Items((TENSOR_KIND,) * n)))


#: Gluon layers (``mxnet.gluon.nn``/``rnn``) whose output, given one input, is one tensor
#: (recurrent layers return their states too only when given them)
SINGLE_OUTPUT_LAYERS = frozenset({
    "nn.Dense", "nn.Dropout", "nn.BatchNorm", "nn.InstanceNorm", "nn.LayerNorm", "nn.GroupNorm",
    "nn.Embedding", "nn.Flatten", "nn.Activation", "nn.LeakyReLU", "nn.PReLU", "nn.ELU", "nn.SELU",
    "nn.Swish", "nn.GELU", "nn.Conv1D", "nn.Conv2D", "nn.Conv3D", "nn.Conv1DTranspose",
    "nn.Conv2DTranspose", "nn.Conv3DTranspose", "nn.MaxPool1D", "nn.MaxPool2D", "nn.MaxPool3D",
    "nn.AvgPool1D", "nn.AvgPool2D", "nn.AvgPool3D", "nn.GlobalMaxPool1D", "nn.GlobalMaxPool2D",
    "nn.GlobalMaxPool3D", "nn.GlobalAvgPool1D", "nn.GlobalAvgPool2D", "nn.GlobalAvgPool3D",
    "nn.ReflectionPad2D", "rnn.LSTM", "rnn.GRU", "rnn.RNN"})


def _host_value(facts, node) -> bool:
    """Whether a constructor's ``self.a = node`` stores a Python or numpy value (stdlib ast):
    a literal, a lambda, arithmetic (no block or Parameter has any), a numpy function's
    result, or a method's result of such a value (``(a + 1).astype(np.int64)``)."""
    t = type(node).__name__
    if t in ("Constant", "Lambda", "JoinedStr", "BinOp", "UnaryOp", "Compare", "BoolOp"):
        return True
    if t in ("Tuple", "List", "Set"):
        return bool(node.elts) and all(_host_value(facts, e) for e in node.elts)
    if t == "Call":
        func = node.func
        if module_family(module_of(facts, dotted_name(func))) == "numpy":
            return True
        return type(func).__name__ == "Attribute" and _host_value(facts, func.value)
    return False


def _layer_path(facts, node) -> bool:
    """Whether ``node`` builds one of :data:`SINGLE_OUTPUT_LAYERS` (``nn.Dense(...)``)."""
    if type(node).__name__ != "Call":
        return False
    full = module_of(facts, dotted_name(node.func)) or ""
    return full.startswith("mxnet.gluon.") and full[len("mxnet.gluon."):] in SINGLE_OUTPUT_LAYERS


_NESTED = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef})


def _own_nodes(fndef):
    """Nodes of ``fndef``'s body, not descending into nested functions/lambdas/classes."""
    todo = list(fndef.body)
    while todo:
        node = todo.pop()
        yield node
        for child in children(node):      # contexts and operators hold no statement
            if child.__class__ not in _NESTED:
                todo.append(child)
