"""What kind of value an expression holds inside a forward: tensor or Python value.

One :class:`Unit` is one function of the file (a ``hybrid_forward``, a
``forward``, or a helper it passes ``F`` to), converted to :mod:`gast` on its
own and given to **beniget**, whose def-use chains tell, for every use of a
name, which definitions may reach it.  :meth:`Unit.kind` then gives a
frozenset of *tags* for any expression; a name's tags are the union over the
definitions that reach it (a name is a tensor if *any* reaching definition
makes it one).

The tags, and the tables of names the analysis reads, are in :mod:`.tags`; what a call gives (an
operator, a tensor method, a helper of the same file) is in :mod:`.calls`, a base of :class:`Unit`.
Here: the unit's def-use chains, and the kind of every other expression and definition.

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
"""

from __future__ import annotations

import gast

from ast_hybrid.common.gastconv import to_gast
from ast_hybrid.common.walkers import QuietChains, children, parameters
from .calls import CallKinds
from .module import ClassFacts, ModuleFacts, dotted_name, module_of
from .tags import (EMPTY, LIST_METHODS, META_ATTRS, MULTI_OUTPUT, SPARSE_PARTS, Items, Tag, elements_of,
                   holds_tensors, is_op, item_of, mixed_result, python_value, sequence_of, structures_of,
                   tensorish, DICT_KIND, HOST_ARRAY_KIND, INT_KIND, ITEM_UNPACKED_KIND, SEQUENCE_KIND, TENSOR_KIND,
                   TENSOR_OR_TUPLE_KIND)

__all__ = ["Unit", "constant_int"]

_BINDINGS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.alias)


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


class Unit(CallKinds):
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
        self._active: dict = {}       # what is being computed -> its depth (:meth:`_memoized`)
        self._low = _NO_CYCLE
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
        memo = self._memo
        if node in memo:
            return memo[node]
        return self._memoized(memo, node, ("kind", node), self._kind)

    def _memoized(self, memo, key, token, compute) -> frozenset:
        """``compute(key)``, kept in ``memo`` once final.  A value asked for while it is being computed (a
        cycle: a name's kind through its parameter's evidence back to that name) is "not a tensor" for the
        asker; what read such a value of a computation still in progress above it is provisional, not kept,
        and computed again when next asked (Tarjan's lowlink: only a computation whose cycles all close at it
        or below it is final).  Kept as the cycle's first answer, ``mu = x.mean()`` then ``if mu > 0`` was
        "not a tensor" for good."""
        active = self._active
        depth = active.get(token)
        if depth is not None:
            if depth < self._low:
                self._low = depth
            return EMPTY
        mine = len(active)
        active[token] = mine
        outer_low, self._low = self._low, _NO_CYCLE
        try:
            res = compute(key)
        finally:
            del active[token]
            low = self._low
            self._low = outer_low if low >= mine else min(outer_low, low)
        if low >= mine:
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
                elif python_value(k) and self._defines_value(d):
                    python_def = True
            if tensor_def and python_def:
                out.add(Tag.MIXED)
            if Tag.SEQUENCE_OF_TENSORS in out or Tag.TENSOR_OR_TUPLE in out:
                if self._not_a_sequence_here(node):
                    return TENSOR_KIND      # `if type(x) not in (list, tuple): x = [x]`: here x is one tensor
            return frozenset(out)
        if t is gast.Constant:
            v = node.value
            return INT_KIND if isinstance(v, int) and not isinstance(v, bool) else EMPTY
        if t is gast.BinOp:
            lk, rk = self.kind(node.left), self.kind(node.right)
            both = lk | rk
            if tensorish(both):
                return mixed_result(TENSOR_KIND, (lk, rk))
            if Tag.HOST_ARRAY in both:
                return HOST_ARRAY_KIND
            if Tag.SEQUENCE_OF_TENSORS in both and isinstance(node.op, (gast.Add, gast.Mult)):
                return SEQUENCE_KIND
            if Tag.INT in lk and Tag.INT in rk:
                return INT_KIND
            return EMPTY
        if t is gast.UnaryOp:
            k = self.kind(node.operand)
            if isinstance(node.op, gast.Not):
                return EMPTY
            if tensorish(k):
                return mixed_result(TENSOR_KIND, (k,))
            if Tag.HOST_ARRAY in k:
                return HOST_ARRAY_KIND
            return INT_KIND if Tag.INT in k else EMPTY
        if t is gast.Compare:
            kinds = [self.kind(node.left)] + [self.kind(c) for c in node.comparators]
            if any(isinstance(op, (gast.Is, gast.IsNot, gast.In, gast.NotIn)) for op in node.ops):
                return EMPTY
            return mixed_result(TENSOR_KIND, kinds) if any(tensorish(k) for k in kinds) else EMPTY
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
                return SEQUENCE_KIND if any(holds_tensors(k) for k in kinds) else EMPTY
            return sequence_of(kinds)
        if t in (gast.ListComp, gast.GeneratorExp, gast.SetComp):
            return SEQUENCE_KIND if tensorish(self.kind(node.elt)) else EMPTY
        if t is gast.Dict:
            return DICT_KIND if any(v is not None and tensorish(self.kind(v)) for v in node.values) else EMPTY
        return EMPTY

    def _attr_kind(self, node) -> frozenset:
        vk = self.kind(node.value)
        out = set()
        if is_op(vk):
            # numpy mode's `F.np.split` gives a list of as many parts as its call says, often not a literal
            numpy_split = node.attr == "split" and type(node.value) is gast.Attribute and node.value.attr == "np"
            out.add(Tag.MULTI_OUTPUT_OP if node.attr in MULTI_OUTPUT or numpy_split else Tag.OP)
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
        index = constant_int(node.slice)
        if (Tag.SEQUENCE_OF_TENSORS in vk and not structures_of(vk) and type(node.slice) is not gast.Slice
                and self._unpacked(node)):
            return ITEM_UNPACKED_KIND      # `a, b = xs[i]`: the list holds tuples (a forward never unpacks a Symbol)
        if index is not None and (Tag.SEQUENCE_OF_TENSORS in vk or structures_of(vk)):
            return item_of(vk, index)
        if index is not None and Tag.TENSORS in vk:
            return TENSOR_KIND       # an output of an operator (or a row of its one output)
        out |= vk & {Tag.TENSOR, Tag.TENSOR_OR_TUPLE}
        if Tag.SEQUENCE_OF_TENSORS in vk:   # a slice; an item of a literal (of rows: `m[i][j]`); else a tensor
            item = elements_of(vk) if structures_of(vk) else {Tag.TENSOR}
            out |= {Tag.SEQUENCE_OF_TENSORS} if isinstance(node.slice, gast.Slice) else item
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

    def _sequence_start(self, d) -> bool:
        """Whether ``d`` binds a new Python list or tuple (``[]``, ``tuple()``, a display, a comprehension)."""
        parent = self.parents.get(d)
        if type(parent) is not gast.Assign or parent.targets[0] is not d:
            return False
        v = parent.value
        if isinstance(v, (gast.List, gast.Tuple, gast.ListComp)):
            return True
        return (type(v) is gast.Call and type(v.func) is gast.Name and v.func.id in ("list", "tuple")
                and self.is_global(v.func))

    def def_kind(self, d) -> frozenset:
        memo = self._def_memo
        if d in memo:
            return memo[d]
        return self._memoized(memo, d, ("def", d), self._def_kind)

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
            started = False     # `outs = tuple()` / `outs = []` before `outs += out`: a Python sequence
            for p in self.defs_of(d):
                prior |= self.def_kind(p)
                started = started or self._sequence_start(p)
            vk = self.kind(parent.value)
            if Tag.SEQUENCE_OF_TENSORS in prior or Tag.SEQUENCE_OF_TENSORS in vk or started or isinstance(
                    parent.value, (gast.List, gast.Tuple, gast.ListComp)):
                return SEQUENCE_KIND if holds_tensors(prior) or holds_tensors(vk) else EMPTY
            if tensorish(prior) or tensorish(vk):
                return TENSOR_KIND
            return frozenset(prior) & INT_KIND
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
                        grown |= elements_of(self.kind(call.args[0]))
            elif type(parent) is gast.Subscript and parent.value is use and type(parent.ctx) is gast.Store:
                changed = True
                assign = self.parents.get(parent)
                if type(assign) is gast.Assign:
                    grown |= self.kind(assign.value)
        if not changed:
            return kinds
        kinds = frozenset(k for k in kinds if k.__class__ is not Items)
        if holds_tensors(grown) or holds_tensors(kinds):
            kinds |= SEQUENCE_KIND
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
                    out |= TENSOR_OR_TUPLE_KIND if d in params else EMPTY
        if args.vararg is d:
            return SEQUENCE_KIND if tensorish(out) else frozenset(out)
        return frozenset(out)

    def _destructure(self, value, path) -> frozenset:
        if not path:
            return self.kind(value)
        i, rest = path[0], path[1:]
        if rest and rest[0] == "*":
            # `a, *rest = value`: the starred name is a list of the value's items, never one of them
            k = elements_of(self.kind(value))
            k = SEQUENCE_KIND if tensorish(k) else EMPTY
            for _ in rest[1:]:
                k = elements_of(k)
            return k
        if (isinstance(value, (gast.Tuple, gast.List)) and isinstance(i, int)
                and not any(isinstance(e, gast.Starred) for e in value.elts)
                and i < len(value.elts)):
            return self._destructure(value.elts[i], rest)
        vk = self.kind(value)
        k = item_of(vk, i) if isinstance(i, int) else elements_of(vk)
        for _ in rest:
            k = elements_of(k)
        return k

    def _iter_elem(self, it, path) -> frozenset:
        rows = self._literal_rows(it) if path else None
        if rows is not None:    # `for conv, x, d in [(self.c1, x1, self.d1), ...]`: each position on its own
            out = EMPTY
            for row in rows:
                out = out | self._destructure(row, path)
            return out
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and self.is_global(it.func):
            name = it.func.id
            if name == "range":
                return INT_KIND
            if name == "enumerate" and it.args:
                if not path:
                    return EMPTY
                if path[0] == 0:
                    return INT_KIND
                return self._iter_elem(it.args[0], path[1:])
            if name == "zip" and path and isinstance(path[0], int) and path[0] < len(it.args):
                return self._iter_elem(it.args[path[0]], path[1:])
            if name in ("reversed", "sorted", "list", "tuple") and it.args:
                return self._iter_elem(it.args[0], path)
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute)
                and Tag.DICT_OF_TENSORS in self.kind(it.func.value)):
            if it.func.attr == "values":
                return TENSOR_KIND
            if it.func.attr == "items":
                return TENSOR_KIND if path and path[0] == 1 else EMPTY
            return EMPTY
        k = elements_of(self.kind(it))
        for _ in path:
            k = elements_of(k)
        return k

    def _literal_rows(self, it):
        """The rows of a list or tuple written out of tuples (or a name bound once to one and not changed
        in place since): ``[(a, b), (c, d)]``; else None."""
        if isinstance(it, gast.Name):
            defs = self.defs_of(it)
            if len(defs) != 1:
                return None
            d = defs[0]
            parent = self.parents.get(d)
            if not (isinstance(parent, gast.Assign) and parent.targets == [d]) or \
                    self._built(d, _UNCHANGED) is not _UNCHANGED:
                return None
            it = parent.value
        if not isinstance(it, (gast.List, gast.Tuple)) or not it.elts:
            return None
        if all(isinstance(r, (gast.Tuple, gast.List)) and not any(isinstance(e, gast.Starred) for e in r.elts)
               for r in it.elts):
            return it.elts
        return None


_UNCHANGED = frozenset({"unchanged"})
_NO_CYCLE = 1 << 30     # no value in progress read (``Unit._memoized``)


def constant_int(node):
    """The int of ``3`` or ``-1``, else None."""
    if type(node) is gast.UnaryOp and type(node.op) is gast.USub:
        v = constant_int(node.operand)
        return -v if v is not None else None
    if type(node) is gast.Constant and type(node.value) is int:
        return node.value
    return None
