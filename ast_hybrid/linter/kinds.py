"""What kind of value an expression holds inside a forward: tensor or Python value.

One :class:`Unit` is one function of the file (a ``hybrid_forward``, a
``forward``, or a helper it passes ``F`` to), converted to :mod:`gast` on its
own and given to **beniget**, whose def-use chains tell, for every use of a
name, which definitions may reach it.  :meth:`Unit.kind` then gives a
frozenset of *tags* for any expression; a name's tags are the union over the
definitions that reach it (a name is a tensor if *any* reaching definition
makes it one).

Tags (:class:`Tag`):

- ``TENSOR``: a tensor.  Parameters after ``F`` (``**kwargs`` hold the block's
  parameters: tensors too), results of ``F.op(...)``/``F.ns.op(...)``,
  arithmetic, comparisons (elementwise), indexing and fluent methods of
  tensors (``x.reshape(...)``, ``x.T``), ops of ``mx.nd``/``mx.sym``/``mx.np``.
- ``TENSOR_OR_TUPLE``: tensor-like but perhaps a tuple of them: what a child block returns
  (``self.body(x)``), an op whose number of outputs the call does not settle
  (``F.split(x, num_outputs=n)``, ``F.contrib.foreach``), a parameter used both
  as a tensor and as a list.  Rules that need *certainty* (iteration, ``len``,
  integer indexing, truth tests) ignore it.
- ``TENSORS``: with ``TENSOR_OR_TUPLE``, an operator's result whose number of outputs the call
  does not spell (``x.split(num_outputs=n)``): a tensor or a tuple of tensors, so ``v[-1]``, an
  unpacked item or a loop variable over it is a tensor either way.
- ``SEQUENCE_OF_TENSORS`` / ``DICT_OF_TENSORS``: a tuple or list / a dict of tensors (``*args``,
  ``**kwargs``, ``[a, b]``, a list grown by ``xs.append(t)``, a parameter used as a list:
  :mod:`.evidence`).  With it, an :class:`Items` member keeps each item's tags when the
  length is known: a tuple display, a helper's ``return out, states``, an operator with
  several outputs (their counts are MXNet's, :mod:`ast_hybrid.common.op_outputs`).
- ``OP_NAMESPACE``, ``OP``: the op namespace and anything reached from it
  (``F.contrib``, ``getattr(F, name)``); ``MULTI_OUTPUT_OP``: an op with several outputs.
- ``SELF``, ``SELF_ATTRIBUTE``: the block, and its (non-method) attributes.
- ``TENSOR_METHOD``: a bound method of a tensor (``x.reshape`` before the call).
- ``INT``: a Python int (literals, ``range`` loop variables, ``x.shape[i]``).
- ``HOST_ARRAY``: an NDArray made with ``mx.nd`` from Python or numpy values alone
  (``mx.nd.array(mask)``, ``nd.zeros(shape)``), and what its own methods, indexing and
  arithmetic among such arrays give: a concrete array even in a hybridized forward (its
  ``.shape``, ``.asnumpy()`` work; mixing it with a Symbol does not, which is HY007 where it
  is made).  With a tensor, it gives a tensor.  ``HOST_ARRAY_METHOD``: its bound method.
- ``MIXED``: with ``TENSOR``, a name that is a tensor on some paths and a Python value on
  others (``delta = F.reshape(...)`` under ``if self.encoding is not None``, else
  ``delta = self.fixed_value``, a number the constructor stored): which one reaches a use
  is decided by Python conditions the linter does not follow, and code tests it where it is
  the number.  Rules that need certainty ignore it, as ``TENSOR_OR_TUPLE``; arithmetic and
  comparisons keep it unless another operand is surely a tensor.

Not tensors: literals, ``self`` attributes that are not called, ``x is None``
and ``in`` tests, ``F`` itself, ``isinstance``/``len``/``autograd.is_training()``
and every call we cannot follow.

Precision limits (documented, deliberate):

- Calls are followed only into functions of the *same file*: nested
  functions (always, their arguments bound at every call site), module
  functions and methods of the class (when ``F`` or a tensor is passed),
  ``super().hybrid_forward(F, ...)`` and ``Parent.hybrid_forward(self, F, ...)``;
  anything else returns "not a tensor", which errs toward silence.
- Parameters of helpers get the union of what their call sites pass; one
  context per function, not one per call site.
- Lists are tracked when built in the function (a display, ``append``/``insert``/
  ``extend``, item assignment); other containers are not.  A forward's parameter is a
  tensor unless its uses or its documented type say list (:mod:`.evidence`).
- A child block's output is ``TENSOR_OR_TUPLE``: a block returning a tuple cannot be told
  from one returning a tensor without reading the child's class.
- Attributes of ``self`` are never tensors (MXNet 1.x passes parameters as
  arguments); ``self.weight.data()`` is ``TENSOR_OR_TUPLE``.

Over 600 lines: the kind inference (units, tags, their propagation) is one analysis over shared state;
splitting it is in progress (issue 29).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import gast

from ast_hybrid.common.gastconv import to_gast
from ast_hybrid.common.walkers import QuietChains, children, parameters
from .module import ClassFacts, ModuleFacts, dotted_name
from ast_hybrid.common.op_outputs import OUTPUTS

__all__ = ["Tag", "Items", "Unit", "is_op", "tensorish", "definitely_tensor", "holds_tensors", "EMPTY"]


class Tag(str, Enum):
    """What a value may be (see the module docstring)."""

    TENSOR = "tensor"
    TENSOR_OR_TUPLE = "tensor-or-tuple"
    SEQUENCE_OF_TENSORS = "sequence-of-tensors"
    DICT_OF_TENSORS = "dict-of-tensors"
    OP_NAMESPACE = "op-namespace"
    OP = "op"
    MULTI_OUTPUT_OP = "multi-output-op"
    SELF = "self"
    SELF_ATTRIBUTE = "self-attribute"
    TENSOR_METHOD = "tensor-method"
    INT = "python-int"
    TENSORS = "tensors"
    HOST_ARRAY = "host-array"
    HOST_ARRAY_METHOD = "host-array-method"
    MIXED = "tensor-or-python-value"


@dataclass(frozen=True)
class Items:
    """A tuple or list of known length, with the tags of each item (a member of a kind set).

    Built by a tuple or list display (``return out, lateral``), or by an operator whose
    number of outputs is known (``F.contrib.box_encode``: two); unpacking and ``v[i]``
    with a constant ``i`` take the tags of that item.  It travels with
    ``SEQUENCE_OF_TENSORS`` through helpers' returns.
    """

    items: tuple


EMPTY: frozenset = frozenset()
_TENSOR = frozenset((Tag.TENSOR,))
_TENSOR_OR_TUPLE = frozenset((Tag.TENSOR_OR_TUPLE,))
_SEQUENCE_OF_TENSORS = frozenset((Tag.SEQUENCE_OF_TENSORS,))
_ITEM_UNPACKED = frozenset((Tag.TENSOR_OR_TUPLE, Tag.TENSORS))
_DICT_OF_TENSORS = frozenset((Tag.DICT_OF_TENSORS,))
_INT = frozenset((Tag.INT,))
_HOST_ARRAY = frozenset((Tag.HOST_ARRAY,))
_TENSORS = frozenset((Tag.TENSOR_OR_TUPLE, Tag.TENSORS))

#: Functions of ``F`` written in Python, not operators, with a result of several parts whose
#: number the call does not say (control flow; numpy mode's splits).  The operators' output
#: counts come from MXNet itself (:mod:`ast_hybrid.common.op_outputs`).
MULTI_OUTPUT = frozenset({"split_v2", "foreach", "while_loop", "cond", "array_split", "hsplit",
                          "vsplit", "dsplit", "meshgrid"})
#: NDArray/Symbol methods with one tensor output (MXNet's fluent methods and a few more)
FLUENT = frozenset({
    "reshape", "reshape_like", "transpose", "swapaxes", "expand_dims", "squeeze", "flatten", "astype",
    "slice", "slice_axis", "slice_like", "take", "pick", "one_hot", "tile", "repeat", "pad", "flip",
    "broadcast_to", "broadcast_like", "broadcast_axes", "zeros_like", "ones_like", "detach",
    "sum", "nansum", "prod", "nanprod", "mean", "max", "min", "norm", "argmax", "argmin",
    "argmax_channel", "argsort", "clip", "abs", "sign", "round", "rint", "fix", "floor",
    "ceil", "trunc", "exp", "expm1", "log", "log10", "log2", "log1p", "sqrt", "rsqrt", "cbrt",
    "rcbrt", "square", "reciprocal", "relu", "sigmoid", "softmax", "log_softmax", "softmin",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "degrees", "radians", "diag", "depth_to_space", "space_to_depth",
    "shape_array", "size_array", "tostype", "as_in_context", "copyto", "as_nd_ndarray"})
#: Tensor methods that return a host value (numpy array or Python scalar).
HOST_METHODS = frozenset({"asnumpy", "asscalar", "item", "tolist"})
#: Attributes of a sparse tensor (``x.tostype("csr")``) that are tensors
SPARSE_PARTS = frozenset({"data", "indices", "indptr"})
#: Tensor attributes that are not tensors.
META_ATTRS = frozenset({"shape", "ndim", "size", "context", "ctx", "dtype", "stype",
                        "grad", "handle", "name", "writable"})
#: Methods of Python lists (no tensor has them).
LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "index", "count", "sort",
                          "reverse", "clear"})
_BUILTIN_SAME = frozenset({"abs"})
_BUILTIN_SEQ = frozenset({"tuple", "list", "sorted", "reversed"})
_BINDINGS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.alias)


def is_op(kinds) -> bool:
    """``F`` itself or an op/namespace reached from it."""
    return Tag.OP_NAMESPACE in kinds or Tag.OP in kinds or Tag.MULTI_OUTPUT_OP in kinds


def tensorish(kinds) -> bool:
    return Tag.TENSOR in kinds or Tag.TENSOR_OR_TUPLE in kinds


def definitely_tensor(kinds) -> bool:
    return Tag.TENSOR in kinds and not (Tag.TENSOR_OR_TUPLE in kinds or Tag.SEQUENCE_OF_TENSORS in kinds
                                        or Tag.DICT_OF_TENSORS in kinds or Tag.MIXED in kinds)


def _python_value(kinds) -> bool:
    """What a definition gives that is surely no tensor nor container of them: a number, a
    string, a host array, an attribute of ``self`` (a constructor's value) not used as a tensor."""
    return not (holds_tensors(kinds) or is_op(kinds) or Tag.SELF in kinds or Tag.TENSOR_METHOD in kinds)


def _mixed_result(result: frozenset, operands) -> frozenset:
    """``result`` (arithmetic or a comparison of ``operands``) keeps ``MIXED`` when an operand is
    mixed and none is surely a tensor."""
    if (Tag.TENSOR in result and any(Tag.MIXED in k for k in operands)
            and not any(definitely_tensor(k) for k in operands)):
        return result | {Tag.MIXED}
    return result


def holds_tensors(kinds) -> bool:
    """A tensor, or a container of tensors."""
    return (tensorish(kinds) or Tag.SEQUENCE_OF_TENSORS in kinds or Tag.DICT_OF_TENSORS in kinds)


def _structures(kinds) -> list:
    return [k for k in kinds if k.__class__ is Items]


def _elements(kinds) -> frozenset:
    """Tags of the items obtained by iterating a value of ``kinds``."""
    out = set()
    structures = _structures(kinds)
    for st in structures:
        for item in st.items:
            out |= item
    if Tag.TENSOR in kinds or (Tag.SEQUENCE_OF_TENSORS in kinds and not structures):
        out.add(Tag.TENSOR)
    if Tag.TENSOR_OR_TUPLE in kinds:
        out.add(Tag.TENSOR if Tag.TENSORS in kinds else Tag.TENSOR_OR_TUPLE)
    if Tag.SELF_ATTRIBUTE in kinds:
        out.add(Tag.SELF_ATTRIBUTE)
    return frozenset(out)


def _item(kinds, i: int) -> frozenset:
    """Tags of ``v[i]`` (``i`` a constant) for a value ``v`` of ``kinds``."""
    structures = _structures(kinds)
    if not structures:
        return _elements(kinds)
    out = set()
    for st in structures:
        if -len(st.items) <= i < len(st.items):
            out |= st.items[i]
    rest = kinds - {Tag.SEQUENCE_OF_TENSORS} - set(structures)
    return frozenset(out) | _elements(rest)


def sequence_of(items) -> frozenset:
    """The kind of a tuple or list whose items have the tags ``items`` (in order)."""
    items = tuple(items)
    if not any(holds_tensors(k) or _structures(k) for k in items):
        return EMPTY
    return frozenset((Tag.SEQUENCE_OF_TENSORS, Items(items)))


def module_of(facts: ModuleFacts, dotted: str | None) -> str | None:
    """Absolute dotted path of a global ``a.b.c`` through the file's imports."""
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    mod = facts.imports.get(head)
    if mod is None:
        return None
    if mod.startswith("."):
        mod = "mxnet." + mod.lstrip(".")
    full = f"{mod}.{rest}" if rest else mod
    for old, new in (("mxnet.ndarray", "mxnet.nd"), ("mxnet.symbol", "mxnet.sym"),
                     ("mxnet.numpy_extension", "mxnet.npx"), ("mxnet.numpy", "mxnet.np")):
        if full == old or full.startswith(old + "."):
            full = new + full[len(old):]
    return full


def module_family(full: str | None) -> str | None:
    """``nd``, ``sym``, ``numpy`` or ``mxnp`` for an op path, else None."""
    if not full:
        return None
    for prefix, fam in (("mxnet.nd.", "nd"), ("mxnet.sym.", "sym"), ("numpy.", "numpy"),
                        ("mxnet.np.", "mxnp"), ("mxnet.npx.", "mxnp")):
        if full.startswith(prefix):
            return fam
    return None


class _Chains(QuietChains):
    """beniget's chains without its own copy of Python's builtins (a ``Def`` and a set for each of
    about 160 names, made for every function, a quarter of beniget's time here): a unit asks only
    which of its own bindings reach a name, and a builtin's name is reached by none either way."""

    def __init__(self):
        super().__init__()
        self._builtins = {}


def _python_value_default(d) -> bool:
    """Whether a parameter default says the parameter is a Python value: a bool, string or number
    literal (``-1`` included), or a tuple/list of those."""
    if isinstance(d, (gast.Tuple, gast.List)):
        return bool(d.elts) and all(_python_value_default(e) for e in d.elts)
    if isinstance(d, gast.UnaryOp) and isinstance(d.op, (gast.USub, gast.UAdd)):
        d = d.operand
        return type(d) is gast.Constant and type(d.value) in (int, float)
    return type(d) is gast.Constant and type(d.value) in (bool, str, int, float)



_SEQUENCE_TYPES = frozenset({"list", "tuple"})


def _sequence_test(test, name):
    """True when ``test`` holds exactly when ``name`` is a list or tuple (``isinstance(x, (list, tuple))``,
    ``type(x) in (list, tuple)``), False when exactly when it is not (``not isinstance(...)``,
    ``type(x) not in (...)``), else None."""
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        inner = _sequence_test(test.operand, name)
        return None if inner is None else not inner

    def types_ok(t):    # both list and tuple: `not isinstance(x, list)` leaves a tuple possible
        elts = t.elts if isinstance(t, (gast.Tuple, gast.List, gast.Set)) else [t]
        return {e.id for e in elts if isinstance(e, gast.Name)} == _SEQUENCE_TYPES and len(elts) == 2

    if (isinstance(test, gast.Call) and isinstance(test.func, gast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0], gast.Name) and test.args[0].id == name
            and types_ok(test.args[1])):
        return True
    if (isinstance(test, gast.Compare) and len(test.ops) == 1 and isinstance(test.left, gast.Call)
            and isinstance(test.left.func, gast.Name) and test.left.func.id == "type" and len(test.left.args) == 1
            and isinstance(test.left.args[0], gast.Name) and test.left.args[0].id == name
            and types_ok(test.comparators[0])):
        op = test.ops[0]
        if isinstance(op, (gast.In, gast.Is, gast.Eq)):
            return True
        if isinstance(op, (gast.NotIn, gast.IsNot, gast.NotEq)):
            return False
    return None


class Unit:
    """One function of the file, with its def-use chains and tensor kinds."""

    def __init__(self, fn_ast, facts: ModuleFacts, cls: ClassFacts | None, style: str,
                 is_method: bool):
        self.facts = facts
        self.cls = cls
        self.style = style  # "F" (hybrid_forward and helpers given F) or "forward"
        self.fn = to_gast(fn_ast)     # gast's own tree, built in one walk (common.gastconv)
        self.name = fn_ast.name
        chains = _Chains()
        chains.visit(gast.Module(body=[self.fn], type_ignores=[]))
        self.parents: dict = {}
        self.calls: list = []
        todo = [self.fn]
        parents, calls = self.parents, self.calls
        while todo:
            node = todo.pop()
            if node.__class__ is gast.Call:
                calls.append(node)
            for child in children(node):
                parents[child] = node
                todo.append(child)
        self._returns: dict = {}
        self.reaching: dict = {}
        self.users: dict = {}
        for node, d in chains.chains.items():
            # beniget chains every expression to its parent; keep real bindings
            if isinstance(node, gast.Name):
                if isinstance(node.ctx, gast.Load):
                    continue
            elif not isinstance(node, _BINDINGS):
                continue
            us = [u.node for u in d.users() if isinstance(u.node, gast.Name)]
            self.users[node] = us
            for u in us:
                self.reaching.setdefault(u, []).append(node)
        # beniget's defs use each other in cycles and its visitor keeps a bound method of itself:
        # unlinked, the chains (and the tree they point into) are freed by reference counting
        for d in chains.chains.values():
            d._users = None
        chains.__dict__.clear()
        self.params = parameters(self.fn.args, keyword_only=False, starred=False)
        args = self.fn.args
        defaults = list(zip(reversed(self.params), reversed(args.defaults)))
        defaults += [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        #: parameters whose default is None (``begin_state=None``)
        self.optional = {p.id for p, d in defaults if type(d) is gast.Constant and d.value is None}
        #: parameters whose default is a bool, a string, a number or a tuple of numbers (``is_train=True``,
        #: ``step=0``, ``alpha=-1``, ``mixing_range=(-1, -1)``): Python values.  Hybridized, MXNet 1.9.1 rejects
        #: a positional input that is not a tensor (ValueError), so the forward only ever sees them as such.
        self.flags = {p.id for p, d in defaults if _python_value_default(d)}
        self.is_method = is_method and not any(
            dotted_name(d) == "staticmethod" for d in fn_ast.decorator_list)
        #: tags of each parameter of the unit itself (by position name)
        self.param_tags: dict[str, frozenset] = {}
        self.returns: frozenset = EMPTY
        self.reset()

    def reset(self):
        """Forget computed kinds (the parameters' tags changed)."""
        self._memo: dict = {}
        self._def_memo: dict = {}
        self.helper_calls: list = []  # (call node, target unit key, bound tags)

    # -- names -------------------------------------------------------------
    def f_names(self) -> list[str]:
        return [p.id for p in self.params if Tag.OP_NAMESPACE in self.param_tags.get(p.id, EMPTY)]

    def defs_of(self, name_node) -> list:
        return self.reaching.get(name_node, [])

    def is_global(self, name_node) -> bool:
        return not self.defs_of(name_node)

    def global_path(self, node) -> str | None:
        """Absolute module path of an attribute chain rooted at an imported global."""
        dotted = dotted_name(node)
        if not dotted:
            return None
        root = node
        while isinstance(root, gast.Attribute):
            root = root.value
        defs = self.defs_of(root)
        if defs and not all(isinstance(d, gast.alias) for d in defs):
            return None
        return module_of(self.facts, dotted)

    # -- kinds -------------------------------------------------------------
    def kind(self, node) -> frozenset:
        key = node
        memo = self._memo
        if key in memo:
            return memo[key]
        memo[key] = EMPTY  # cycles resolve to "not a tensor" while in progress
        res = self._kind(node)
        memo[key] = res
        return res

    def _kind(self, node) -> frozenset:
        t = type(node)
        if t is gast.Name:
            out = set()
            tensor_def = python_def = False
            for d in self.defs_of(node):
                k = self.def_kind(d)
                out |= k
                if tensorish(k):
                    tensor_def = True
                elif _python_value(k) and self._defines_value(d):
                    python_def = True
            if tensor_def and python_def:
                out.add(Tag.MIXED)
            if Tag.SEQUENCE_OF_TENSORS in out or Tag.TENSOR_OR_TUPLE in out:
                if self._not_a_sequence_here(node):
                    return _TENSOR      # `if type(x) not in (list, tuple): x = [x]`: here x is one tensor
            return frozenset(out)
        if t is gast.Constant:
            v = node.value
            return _INT if isinstance(v, int) and not isinstance(v, bool) else EMPTY
        if t is gast.BinOp:
            lk, rk = self.kind(node.left), self.kind(node.right)
            both = lk | rk
            if tensorish(both):
                return _mixed_result(_TENSOR, (lk, rk))
            if Tag.HOST_ARRAY in both:
                return _HOST_ARRAY
            if Tag.SEQUENCE_OF_TENSORS in both and isinstance(node.op, (gast.Add, gast.Mult)):
                return _SEQUENCE_OF_TENSORS
            if Tag.INT in lk and Tag.INT in rk:
                return _INT
            return EMPTY
        if t is gast.UnaryOp:
            k = self.kind(node.operand)
            if isinstance(node.op, gast.Not):
                return EMPTY
            if tensorish(k):
                return _mixed_result(_TENSOR, (k,))
            if Tag.HOST_ARRAY in k:
                return _HOST_ARRAY
            return _INT if Tag.INT in k else EMPTY
        if t is gast.Compare:
            kinds = [self.kind(node.left)] + [self.kind(c) for c in node.comparators]
            if any(isinstance(op, (gast.Is, gast.IsNot, gast.In, gast.NotIn)) for op in node.ops):
                return EMPTY
            return _mixed_result(_TENSOR, kinds) if any(tensorish(k) for k in kinds) else EMPTY
        if t is gast.BoolOp:
            out = set()
            for v in node.values:
                out |= self.kind(v)
            return frozenset(out)
        if t is gast.IfExp:
            return self.kind(node.body) | self.kind(node.orelse)
        if t is gast.NamedExpr:
            return self.kind(node.value)
        if t is gast.Starred:
            return self.kind(node.value)
        if t is gast.Call:
            return self._call_kind(node)
        if t is gast.Attribute:
            return self._attr_kind(node)
        if t is gast.Subscript:
            return self._subscript_kind(node)
        if t in (gast.Tuple, gast.List):
            kinds = [self.kind(e) for e in node.elts]
            if any(type(e) is gast.Starred for e in node.elts):
                return _SEQUENCE_OF_TENSORS if any(holds_tensors(k) for k in kinds) else EMPTY
            return sequence_of(kinds)
        if t in (gast.ListComp, gast.GeneratorExp, gast.SetComp):
            return _SEQUENCE_OF_TENSORS if tensorish(self.kind(node.elt)) else EMPTY
        if t is gast.Dict:
            return _DICT_OF_TENSORS if any(v is not None and tensorish(self.kind(v)) for v in node.values) else EMPTY
        return EMPTY

    def _attr_kind(self, node) -> frozenset:
        vk = self.kind(node.value)
        out = set()
        if is_op(vk):
            out.add(Tag.MULTI_OUTPUT_OP if node.attr in MULTI_OUTPUT else Tag.OP)
        if Tag.SELF in vk:
            if not (self.cls is not None and (self.facts.has_method(self.cls, node.attr)
                                              or self._constructed(node.attr) == "host")):
                out.add(Tag.SELF_ATTRIBUTE)
        if Tag.SELF_ATTRIBUTE in vk:
            out.add(Tag.SELF_ATTRIBUTE)
        if tensorish(vk):
            if node.attr == "T" or (node.attr in SPARSE_PARTS and not self._called(node)):
                out.add(Tag.TENSOR)     # `x.T`; `csr.data`, `csr.indices`: a sparse array's parts
            elif node.attr not in META_ATTRS:
                out.add(Tag.TENSOR_METHOD)
        if Tag.DICT_OF_TENSORS in vk and node.attr in ("get", "values", "items", "pop"):
            out.add(Tag.TENSOR_METHOD)
        if Tag.HOST_ARRAY in vk and node.attr not in META_ATTRS:
            out.add(Tag.HOST_ARRAY if node.attr == "T" else Tag.HOST_ARRAY_METHOD)
        return frozenset(out)

    def _subscript_kind(self, node) -> frozenset:
        vk = self.kind(node.value)
        out = set()
        index = _constant_int(node.slice)
        if (Tag.SEQUENCE_OF_TENSORS in vk and not _structures(vk) and type(node.slice) is not gast.Slice
                and self._unpacked(node)):
            return _ITEM_UNPACKED      # `a, b = xs[i]`: the list holds tuples (a forward never unpacks a Symbol)
        if index is not None and (Tag.SEQUENCE_OF_TENSORS in vk or _structures(vk)):
            return _item(vk, index)
        if index is not None and Tag.TENSORS in vk:
            return _TENSOR       # an output of an operator (or a row of its one output)
        if Tag.TENSOR in vk:
            out.add(Tag.TENSOR)
        if Tag.TENSOR_OR_TUPLE in vk:
            out.add(Tag.TENSOR_OR_TUPLE)
        if Tag.SEQUENCE_OF_TENSORS in vk:
            out.add(Tag.SEQUENCE_OF_TENSORS if isinstance(node.slice, gast.Slice) else Tag.TENSOR)
        if Tag.DICT_OF_TENSORS in vk:
            out.add(Tag.TENSOR)
        if Tag.SELF_ATTRIBUTE in vk:
            out.add(Tag.SELF_ATTRIBUTE)
        if Tag.HOST_ARRAY in vk:
            out.add(Tag.HOST_ARRAY)
        if isinstance(node.value, gast.Attribute) and node.value.attr == "shape":
            out.add(Tag.INT)
        return frozenset(out)

    def _unpacked(self, node) -> bool:
        parent = self.parents.get(node)
        return (type(parent) is gast.Assign and parent.value is node
                and type(parent.targets[0]) in (gast.Tuple, gast.List))

    # -- calls -------------------------------------------------------------
    def _call_kind(self, node) -> frozenset:
        func = node.func
        fk = self.kind(func)
        # helpers (same file) first: their result is what they return
        target = self.resolve_helper(node)
        if target is not None:
            return self._bind_helper(node, *target)
        if Tag.MULTI_OUTPUT_OP in fk:
            return _TENSOR_OR_TUPLE
        if is_op(fk):
            out = EMPTY
            for name in self._op_names(func):
                out |= self._custom_outputs(node) if name == "Custom" else _outputs(name, node, bound=0)
            return out
        if Tag.TENSOR_METHOD in fk:
            name = func.attr
            if name in HOST_METHODS or name in ("wait_to_read", "asnumpy"):
                return EMPTY
            if name == "split_v2":
                return _TENSORS
            if name in OUTPUTS:
                return _outputs(name, node, bound=1)
            vk = self.kind(func.value)
            if Tag.DICT_OF_TENSORS in vk and name in ("values", "items"):
                return _SEQUENCE_OF_TENSORS if name == "values" else EMPTY
            if Tag.TENSOR in vk or Tag.DICT_OF_TENSORS in vk or name in FLUENT:
                return _TENSOR   # a tuple has no `.reshape`: whatever had it was a tensor
            return _TENSOR_OR_TUPLE
        if Tag.HOST_ARRAY_METHOD in fk and not tensorish(fk):
            if func.attr in HOST_METHODS:
                return EMPTY
            return _TENSOR if self._tensor_argument(node) else _HOST_ARRAY
        if Tag.SELF_ATTRIBUTE in fk or Tag.TENSOR_OR_TUPLE in fk:
            if (type(func) is gast.Attribute and Tag.SELF in self.kind(func.value)
                    and self._constructed(func.attr) == "layer" and len(node.args) == 1 and not node.keywords
                    and type(node.args[0]) is not gast.Starred):
                return _TENSOR       # `self.rnn(x)`: a Gluon layer given its data alone
            return _TENSOR_OR_TUPLE
        if isinstance(func, gast.Attribute):
            fam = module_family(self.global_path(func))
            if fam in ("nd", "sym", "mxnp"):
                name = func.attr
                if name in ("waitall",):
                    return EMPTY
                if name in MULTI_OUTPUT:
                    return _TENSOR_OR_TUPLE
                op = self.global_path(func).split(".", 2)[2]
                out = self._custom_outputs(node) if op == "Custom" else _outputs(op, node, bound=0)
                if fam == "nd" and out == _TENSOR and not self._tensor_argument(node):
                    return _HOST_ARRAY    # `mx.nd.array(mask)`: made from host values alone
                return out
            return EMPTY
        if isinstance(func, gast.Name) and self.is_global(func):
            name = func.id
            if name == "getattr" and node.args and is_op(self.kind(node.args[0])):
                return frozenset((Tag.OP,))
            if name in _BUILTIN_SAME and node.args:
                return _TENSOR if tensorish(self.kind(node.args[0])) else EMPTY
            if name in ("min", "max") and len(node.args) >= 2:
                # `min(a, b)` returns one of its arguments: of tensors, a tensor; of a tensor and a
                # number, either (MIXED)
                kinds = [self.kind(a) for a in node.args]
                if any(tensorish(k) for k in kinds):
                    if all(definitely_tensor(k) for k in kinds):
                        return _TENSOR
                    return frozenset((Tag.TENSOR, Tag.MIXED))
            if name in _BUILTIN_SEQ and node.args:
                return _elements(self.kind(node.args[0])) and _SEQUENCE_OF_TENSORS
        return EMPTY

    def _custom_outputs(self, call) -> frozenset:
        """What ``F.Custom(..., op_type="name")`` gives: as many tensors as the ``CustomOpProp``
        registered under that name in this file lists in ``list_outputs``; one, MXNet's default
        (``['output']``), for a prop registered elsewhere; a tensor or a tuple of them when the
        file's prop does not say."""
        op_type = next((k.value for k in call.keywords if k.arg == "op_type"), None)
        n = self.facts.custom_outputs(op_type.value) if type(op_type) is gast.Constant else 1
        if n is None:
            return _TENSORS
        return _TENSOR if n == 1 else frozenset((Tag.SEQUENCE_OF_TENSORS, Items((_TENSOR,) * n)))

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
                el = _elements(self.kind(a.value)) | (self.kind(a.value) & {Tag.OP_NAMESPACE})
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

    # -- definitions -------------------------------------------------------
    def _defines_value(self, d) -> bool:
        """Whether the definition ``d`` binds a value of its own, an alternative to the tensor:
        a plain ``name = value``, not ``None`` (a placeholder filled later, ``out = None``) and
        not a start value the name's later definitions build on (``loss = 0.0`` then
        ``loss = loss + t``, ``loss += t``)."""
        parent = self.parents.get(d)
        if type(parent) is not gast.Assign or parent.targets[0] is not d:
            return False
        value = parent.value
        if type(value) is gast.Constant and value.value is None:
            return False
        for use in self.users.get(d, ()):
            node = use
            while node is not None and not isinstance(node, gast.stmt):
                node = self.parents.get(node)
            if type(node) is gast.AugAssign and type(node.target) is gast.Name and node.target.id == d.id:
                return False
            if type(node) is gast.Assign and any(type(t) is gast.Name and t.id == d.id for t in node.targets):
                return False
        return True

    def def_kind(self, d) -> frozenset:
        memo = self._def_memo
        if d in memo:
            return memo[d]
        memo[d] = EMPTY
        res = self._def_kind(d)
        memo[d] = res
        return res

    def _not_a_sequence_here(self, node) -> bool:
        """Whether the name ``node`` is reached only where a test said it is not a list or tuple:
        the body of ``if type(x) not in (list, tuple):`` / ``if not isinstance(x, (list, tuple)):``, or
        the ``else`` of ``if isinstance(x, (list, tuple)):`` / ``if type(x) in (list, tuple):``."""
        child, parent = node, self.parents.get(node)
        while parent is not None and not isinstance(parent, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            if isinstance(parent, gast.If) and child is not parent.test:
                says = _sequence_test(parent.test, node.id)
                if says is not None and (child in parent.body) != says:
                    return True
            child, parent = parent, self.parents.get(parent)
        return False

    def _def_kind(self, d) -> frozenset:
        if not isinstance(d, gast.Name):
            return EMPTY
        path = []
        node, parent = d, self.parents.get(d)
        while isinstance(parent, (gast.Tuple, gast.List, gast.Starred)):
            if isinstance(parent, gast.Starred):
                path.append("*")
            else:
                path.append(parent.elts.index(node))
            node, parent = parent, self.parents.get(parent)
        path.reverse()
        if isinstance(parent, gast.arguments):
            return self._param_kind(d, parent)
        if isinstance(parent, gast.Assign):
            k = self._destructure(parent.value, path)
            if not path and isinstance(parent.value, (gast.List, gast.ListComp)):
                k = self._built(d, k)
            return k
        if isinstance(parent, gast.AnnAssign):
            return self.kind(parent.value) if parent.value is not None else EMPTY
        if isinstance(parent, gast.AugAssign):
            prior = set()
            for p in self.defs_of(d):
                prior |= self.def_kind(p)
            vk = self.kind(parent.value)
            if Tag.SEQUENCE_OF_TENSORS in prior or Tag.SEQUENCE_OF_TENSORS in vk or isinstance(
                    parent.value, (gast.List, gast.Tuple, gast.ListComp)):
                return _SEQUENCE_OF_TENSORS if holds_tensors(prior) or holds_tensors(vk) else EMPTY
            if tensorish(prior) or tensorish(vk):
                return _TENSOR
            return frozenset(prior) & _INT
        if isinstance(parent, (gast.For, gast.AsyncFor, gast.comprehension)) and node is parent.target:
            k = self._iter_elem(parent.iter, path)
            if not path and Tag.TENSOR in k and self.element_refine is not None and (
                    Tag.SEQUENCE_OF_TENSORS in self.kind(parent.iter)):
                k = self.element_refine(self, d, k)   # an item of a list: a list itself?
            return k
        if isinstance(parent, gast.NamedExpr):
            return self.kind(parent.value)
        return EMPTY

    def _built(self, d, kinds) -> frozenset:
        """A list bound at ``d`` and then grown or changed in place (``xs.append(t)``,
        ``xs[i] = t``): a sequence of tensors when what it receives is tensors; its
        items are no longer known one by one."""
        grown = EMPTY
        changed = False
        for use in self.users.get(d, ()):
            parent = self.parents.get(use)
            if type(parent) is gast.Attribute and parent.attr in LIST_METHODS:
                changed = True
                call = self.parents.get(parent)
                if type(call) is gast.Call and call.func is parent and call.args:
                    if parent.attr == "append":
                        grown |= self.kind(call.args[0])
                    elif parent.attr == "insert" and len(call.args) > 1:
                        grown |= self.kind(call.args[1])
                    elif parent.attr == "extend":
                        grown |= _elements(self.kind(call.args[0]))
            elif type(parent) is gast.Subscript and parent.value is use and type(parent.ctx) is gast.Store:
                changed = True
                assign = self.parents.get(parent)
                if type(assign) is gast.Assign:
                    grown |= self.kind(assign.value)
        if not changed:
            return kinds
        kinds = frozenset(k for k in kinds if k.__class__ is not Items)
        if holds_tensors(grown) or holds_tensors(kinds):
            kinds |= _SEQUENCE_OF_TENSORS
        return kinds

    #: set by the engine: (unit, name, tags) -> tags, what the parameter's uses say (:mod:`.evidence`)
    param_refine = None
    #: set by the engine: (unit, loop target, tags) -> tags, what a list item's uses say
    element_refine = None

    def _param_kind(self, d, args) -> frozenset:
        fn = self.parents.get(args)
        if fn is self.fn:
            tags = self.param_tags.get(d.id, EMPTY)
            return self.param_refine(self, d.id, tags) if self.param_refine and tags else tags
        if not isinstance(fn, gast.FunctionDef):
            return EMPTY
        # a nested function: what its call sites pass
        out = set()
        params = parameters(fn.args, keyword_only=False, starred=False)
        for use in self.users.get(fn, ()):
            parent = self.parents.get(use)
            if isinstance(parent, gast.Call) and parent.func is use:
                out |= self.bind_args(parent, params, False).get(d.id, EMPTY)
            elif isinstance(parent, gast.Call) and use in parent.args:
                # F.contrib.foreach(body, data, states) / while_loop(cond, func, vars)
                fk = self.kind(parent.func)
                if is_op(fk):
                    out |= _TENSOR_OR_TUPLE if d in params else EMPTY
        if args.vararg is d:
            return _SEQUENCE_OF_TENSORS if tensorish(out) else frozenset(out)
        return frozenset(out)

    def _destructure(self, value, path) -> frozenset:
        if not path:
            return self.kind(value)
        i, rest = path[0], path[1:]
        if rest and rest[0] == "*":
            # `a, *rest = value`: the starred name is a list of the value's items, never one of them
            k = _elements(self.kind(value))
            k = _SEQUENCE_OF_TENSORS if tensorish(k) else EMPTY
            for _ in rest[1:]:
                k = _elements(k)
            return k
        if (isinstance(value, (gast.Tuple, gast.List)) and isinstance(i, int)
                and not any(isinstance(e, gast.Starred) for e in value.elts)
                and i < len(value.elts)):
            return self._destructure(value.elts[i], rest)
        vk = self.kind(value)
        k = _item(vk, i) if isinstance(i, int) else _elements(vk)
        for _ in rest:
            k = _elements(k)
        return k

    def _iter_elem(self, it, path) -> frozenset:
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and self.is_global(it.func):
            name = it.func.id
            if name == "range":
                return _INT
            if name == "enumerate" and it.args:
                if not path:
                    return EMPTY
                if path[0] == 0:
                    return _INT
                return self._iter_elem(it.args[0], path[1:])
            if name == "zip" and path and isinstance(path[0], int) and path[0] < len(it.args):
                return self._iter_elem(it.args[path[0]], path[1:])
            if name in ("reversed", "sorted", "list", "tuple") and it.args:
                return self._iter_elem(it.args[0], path)
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute)
                and Tag.DICT_OF_TENSORS in self.kind(it.func.value)):
            if it.func.attr == "values":
                return _TENSOR
            if it.func.attr == "items":
                return _TENSOR if path and path[0] == 1 else EMPTY
            return EMPTY
        k = _elements(self.kind(it))
        for _ in path:
            k = _elements(k)
        return k


def _outputs(op: str, call, bound: int) -> frozenset:
    """What calling ``op`` gives: a tensor, a tuple of a known number of them, or either.

    The count is MXNet's (:data:`~ast_hybrid.common.op_outputs.OUTPUTS`), chosen by the
    parameters the call spells as literals; ``bound`` inputs are already given (1 for a
    tensor's method, ``x.split(...)``).  A count a parameter sets to a value the call does
    not spell is unknown.
    """
    entry = OUTPUTS.get(op)
    if entry is None:
        return _TENSOR
    if type(entry) is int:
        n = entry
    else:
        signature, count_param, params, defaults, combos = entry
        given = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        if not any(a.startswith("*") for a in signature):
            for name, arg in zip(signature[bound:], call.args):
                if type(arg) is gast.Starred:
                    return _TENSORS
                given[name] = arg
        if any(kw.arg is None for kw in call.keywords):
            return _TENSORS
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
            return _TENSORS
    if n == 1:
        return _TENSOR
    return frozenset((Tag.SEQUENCE_OF_TENSORS, Items((_TENSOR,) * n)))


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


def _constant_int(node):
    """The int of ``3`` or ``-1``, else None."""
    if type(node) is gast.UnaryOp and type(node.op) is gast.USub:
        v = _constant_int(node.operand)
        return -v if v is not None else None
    if type(node) is gast.Constant and type(node.value) is int:
        return node.value
    return None


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
