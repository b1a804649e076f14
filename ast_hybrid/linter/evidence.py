"""Is a parameter a tensor, or a list of tensors?  What the function does with it says.

Gluon's ``hybrid_forward`` takes tensors, but also lists of them (``layers``,
``input_features``, ``begin_state=None``), and nothing in the signature tells
which.  :func:`param_evidence` reads every use of a parameter in its function
(and, through the calls that pass it on, in the same-file helpers that take it)
and answers with two flags:

- *tensor*: it is used as only a tensor can be: an operand of arithmetic or of
  an elementwise comparison, an argument of an ``F`` operator (not ``*x``), any
  attribute that is not a list method (``x.reshape``, ``x.shape``), indexed with
  a tuple (``x[:, 0]``);
- *sequence*: it is used as only a list or tuple can be: a list method
  (``x.append``), ``*x`` in a call, ``zip(x)``/``list(x)``/``tuple(x)``, ``x + [y]``,
  ``isinstance(x, (list, tuple))``; an item taken with a plain index, or
  unpacked, and then used as a tensor (``F.concat(y, xs[0])``, ``a, b = xs``
  then ``a.astype(...)``; ``a, b, _ = xs[i]`` then ``a`` used as a tensor: a list of
  tuples): a forward that is hybridized does not index its
  tensors with ints (a Symbol's ``[i]`` picks an output), so what it indexes
  and uses whole is a list.

Evidence has a strength.  *Weak* evidence of a list is an item used as a tensor (``xs[0]``,
``a, b = xs``, ``for f in xs: f[-1]``): that is also how a tensor that is wrongly indexed looks,
the silently wrong model this linter is for (a Symbol's ``[0]`` is its first output, the whole
tensor).  *Weak* evidence of a tensor is what a list does too: ``+`` or ``*`` with an operand that
is not a number (``states + new_states`` concatenates lists, ``xs * 2`` repeats one), ``+=``/``*=``
with one, a comparison.  Everything else is *strong*.  Strong evidence of a tensor wins over weak
evidence of a list: ``x.shape`` and ``F.norm(x)`` beside ``x[0]`` make ``x`` a tensor, and its
``x[0]`` a finding.

What the function *declares* counts too: an annotation, or the parameter's type in the docstring
(``target : NDArray or Symbol``; ``begin_state : list``; numpydoc's ``name : type`` lines, of the
function, of the class's ``__call__``/``forward``, or the class's ``- **name**: ...`` inputs).
A name that says list (``end_points_l``, ``feat_list``, ``states_seq``) is weak evidence of one, and
makes a documented tensor type (``end_points_l : Symbol or NDArray``) the type of its items.
Indexing with an int, iterating, ``len(x)``, truth tests and passing it to a child block say nothing
either way.  :func:`refine` turns the evidence into tags: a tensor with evidence of a tensor and none
of a list, or strong evidence of a tensor and only weak of a list; a sequence of tensors with evidence
of a list and none of a tensor; otherwise tensor-or-tuple, which the rules that need certainty
(iteration, ``len``, indexing, truth tests, item assignment) leave alone.
"""

from __future__ import annotations

import re

import gast

from .tags import LIST_METHODS, MULTI_OUTPUT, Tag, is_op

__all__ = ["param_evidence", "element_evidence", "refine", "declared_host", "used_as_number"]

_SEQUENCE_BUILTINS = frozenset({"zip", "list", "tuple", "map"})
_SEQUENCE_WORDS = re.compile(r"\b(list|tuple|sequence|iterable|nested|dict)\b|\[", re.I)
#: a shape spelled out in the text (``tensor with shape [x, y, w, h]``, ``Shape [B, N]``): its brackets
#: describe the dimensions, not a list
_SHAPE_TEXT = re.compile(r"\bshape\s*(?:of|is|=|:)?\s*[\[(][^\])]*[\])]", re.I)
_TENSOR_WORDS = re.compile(r"\b(nd\.)?(ndarray|symbol|tensor)\b", re.I)
#: a documented Python scalar or numpy array (``glob_num_columns : int``; ``mask : numpy.ndarray``)
_HOST_WORDS = re.compile(r"^\s*(int|float|bool|str|string|number|scalar|(np|numpy)\.(nd)?array|numpy array)\b", re.I)
#: a name that says list (``end_points_l``, ``feat_list``, ``states_seq``): weak evidence of one
_LIST_NAME = re.compile(r"[a-z0-9](_l|_list|_lst|_seq|_tuple)$", re.I)
#: evidence strengths: none, weak, strong (see the module docstring); a flag of evidence is one of them
NONE, WEAK, STRONG = 0, 1, 2
_NO_EVIDENCE = (NONE, NONE)


def refine(tags: frozenset, evidence: tuple[int, int], *, optional: bool) -> frozenset:
    """The tags of a parameter bound to ``tags``, given its uses' ``(tensor, sequence)`` strengths.

    ``optional``: its default is None (``begin_state=None``): without evidence
    of a tensor it is tensor-or-tuple.
    """
    tensor, sequence = evidence
    if Tag.TENSOR not in tags:
        return tags
    if sequence and not (tensor == STRONG and sequence == WEAK):
        swap = Tag.TENSOR_OR_TUPLE if tensor else Tag.SEQUENCE_OF_TENSORS
    elif optional and not tensor:
        swap = Tag.TENSOR_OR_TUPLE
    else:
        return tags
    return (tags - {Tag.TENSOR}) | {swap}


def element_evidence(unit, target) -> tuple[int, int]:
    """``(tensor, sequence)`` for a loop variable bound at ``target`` (``for f in xs``):
    how its uses treat it (``f[-1]`` used as a tensor: ``xs`` is a list of lists)."""
    tensor = sequence = NONE
    for use in unit.users.get(target, ()):
        t, s = _use_evidence(unit, use, lambda call, where: None)
        tensor, sequence = max(tensor, t), max(sequence, s)
    return tensor, sequence


def param_evidence(unit, name: str, helper_evidence) -> tuple[int, int]:
    """``(tensor, sequence)``: how ``unit`` uses its parameter ``name`` (see the module docstring).

    ``helper_evidence(call, index_or_name)`` gives the evidence of the parameter
    of a same-file helper that ``call`` binds the argument to, or None.
    """
    param = next((p for p in unit.params if p.id == name), None)
    if param is None:
        return _NO_EVIDENCE
    tensor, sequence = declared(unit, param)
    listed = bool(_LIST_NAME.search(name))
    if listed and tensor and not sequence:
        tensor = NONE           # `support_l : Symbol or NDArray`: the name says a list, the type is its items'
    if tensor or sequence:     # what the code says of itself wins over what its uses suggest
        return tensor, sequence
    for use in unit.users.get(param, ()):
        t, s = _use_evidence(unit, use, helper_evidence)
        tensor, sequence = max(tensor, t), max(sequence, s)
        if tensor == sequence == STRONG:
            break
    return tensor, max(sequence, WEAK) if listed else sequence


_NUMBER_USES = frozenset({"range", "int", "float"})
#: numpy-style operators (``F.np.stack(xs)``) whose first argument is a sequence of arrays, not one
_SEQUENCE_ARG_OPS = frozenset({"stack", "concatenate", "vstack", "hstack", "dstack", "column_stack"})


def used_as_number(unit, param) -> bool:
    """Whether the function uses the parameter as only a Python number is used: as the bound of
    ``range(n)``, or nowhere but converted by ``int``/``float`` (a tensor would be computed
    with somewhere).  What else the uses say (:func:`param_evidence`) may still say tensor."""
    uses = unit.users.get(param, ())
    calls = []
    for use in uses:
        call = unit.parents.get(use)
        if (type(call) is gast.Call and use in call.args and type(call.func) is gast.Name
                and call.func.id in _NUMBER_USES and unit.is_global(call.func)):
            calls.append(call.func.id)
    return "range" in calls or (bool(uses) and len(calls) == len(uses))


def declared(unit, param) -> tuple[int, int]:
    """``(tensor, sequence)`` from the parameter's annotation or documented type (strong, when there)."""
    text = _declared_text(unit, param)
    if text is None:
        return _NO_EVIDENCE
    if _SEQUENCE_WORDS.search(text):
        return NONE, STRONG
    return (STRONG if _TENSOR_WORDS.search(_HOST_WORDS.sub("", text)) else NONE), NONE


def declared_host(unit, param) -> bool:
    """Whether the parameter is documented (or annotated) as a Python scalar or a numpy array, and
    not also as a tensor or a list (``glob_num_columns : int``, ``mask : numpy.ndarray``)."""
    text = _declared_text(unit, param)
    return bool(text and _HOST_WORDS.search(text) and not _SEQUENCE_WORDS.search(text)
                and not _TENSOR_WORDS.search(_HOST_WORDS.sub("", text)))


def _declared_text(unit, param) -> str | None:
    """The parameter's annotation, or its type as the docstrings document it (less a shape it spells
    out), else None."""
    if param.annotation is not None:
        return _annotation_text(param.annotation)
    pattern = re.compile(rf"^\s*(?:- )?\**{re.escape(param.id)}\**\s*:\s*(\S[^\n]*)$", re.M)
    docs = [_docstring(unit.fn)]
    if unit.cls is not None:
        docs += [_docstring(m) for n, m in unit.cls.methods.items() if n in ("__call__", "forward")]
        docs.append(_docstring(unit.cls.node))
    for doc in docs:
        m = pattern.search(doc or "")
        if m:
            return _SHAPE_TEXT.sub("", m.group(1))
    return None


def _docstring(fn) -> str | None:
    body = getattr(fn, "body", None)
    if body and type(body[0]).__name__ == "Expr":
        value = body[0].value
        if type(value).__name__ == "Constant" and isinstance(value.value, str):
            return value.value
    return None


def _annotation_text(node) -> str:
    parts = []
    for n in gast.walk(node):
        if type(n) is gast.Name:
            parts.append(n.id)
        elif type(n) is gast.Attribute:
            parts.append(n.attr)
        elif type(n) is gast.Constant and isinstance(n.value, str):
            parts.append(n.value)
        elif type(n) is gast.Subscript:
            parts.append("[")
    return " ".join(parts)


_LIST_OPS = (gast.Add, gast.Mult)      # what a list does too: concatenation, repetition


def _binop_strength(op, other) -> int:
    """How sure ``x <op> other`` makes ``x`` a tensor: weak for ``+``/``*`` with an operand that is
    not a float (``states + new``, ``xs * 2``: lists do that too), strong otherwise."""
    if type(op) in _LIST_OPS and not (type(other) is gast.Constant and isinstance(other.value, float)):
        return WEAK
    return STRONG


def _use_evidence(unit, use, helper_evidence) -> tuple[int, int]:
    parent = unit.parents.get(use)
    t = type(parent)
    if t is gast.Starred:
        return NONE, STRONG
    if t is gast.Attribute:
        if parent.attr in LIST_METHODS:
            return NONE, STRONG
        return (NONE if parent.attr.startswith("__") else STRONG), NONE
    if t is gast.BinOp:
        other = parent.right if parent.left is use else parent.left
        if type(other) in (gast.List, gast.Tuple, gast.ListComp) or Tag.SEQUENCE_OF_TENSORS in unit.kind(other):
            return NONE, STRONG
        return _binop_strength(parent.op, other), NONE
    if t is gast.UnaryOp:
        return (NONE if type(parent.op) is gast.Not else STRONG), NONE
    if t is gast.Compare:
        if any(type(op) in (gast.Is, gast.IsNot, gast.In, gast.NotIn) for op in parent.ops):
            return _NO_EVIDENCE
        others = [parent.left, *parent.comparators]
        if any(type(o) is gast.Constant and o.value is None for o in others):
            return _NO_EVIDENCE
        return WEAK, NONE
    if t is gast.Subscript and parent.value is use:
        index = parent.slice
        if type(index) is gast.Tuple or _is_list(unit, index):
            return STRONG, NONE     # `x[:, 0]`; `x[idx]` with idx a Python list (a list's index must be an int)
        if type(index) is not gast.Slice and type(parent.ctx) is gast.Load and _used_as_tensor(unit, parent):
            return NONE, WEAK       # `xs[i]` then used as a tensor
        return _NO_EVIDENCE
    if t is gast.Assign and parent.value is use and type(parent.targets[0]) in (gast.Tuple, gast.List):
        names = [e for e in parent.targets[0].elts if type(e) is gast.Name]
        if any(_used_as_tensor(unit, u) for n in names for u in unit.users.get(n, ())):
            return NONE, WEAK       # `a, b = xs` then `a` used as a tensor
        return _NO_EVIDENCE
    if t in (gast.For, gast.comprehension) and parent.iter is use and type(parent.target) is gast.Name:
        for u in unit.users.get(parent.target, ()):
            sub = unit.parents.get(u)
            if (type(sub) is gast.Subscript and sub.value is u and type(sub.slice) is not gast.Slice
                    and type(sub.slice) is not gast.Tuple and _used_as_tensor(unit, sub)):
                return NONE, WEAK   # `for f in xs: f[-1]` used as a tensor: a list of lists
        return _NO_EVIDENCE
    if t is gast.Call and parent.func is not use:
        return _call_evidence(unit, parent, use, helper_evidence)
    if t is gast.keyword:
        call = unit.parents.get(parent)
        if type(call) is gast.Call:
            return _call_evidence(unit, call, use, helper_evidence, keyword=parent.arg)
    if t is gast.AugAssign and parent.target is use:
        value = parent.value
        if type(value) in (gast.List, gast.Tuple, gast.ListComp):
            return NONE, STRONG
        return _binop_strength(parent.op, value), NONE
    return _NO_EVIDENCE


def _is_list(unit, node) -> bool:
    """Whether ``node`` is a Python list: a display or comprehension, or a name every binding of
    which makes or extends one (``idx = []`` ... ``idx += [...]``)."""
    if type(node) in (gast.List, gast.ListComp):
        return True
    if type(node) is not gast.Name:
        return False
    defs = unit.reaching.get(node)
    if not defs:
        return False
    for d in defs:
        bind = unit.parents.get(d)
        if type(bind) is gast.Assign and len(bind.targets) == 1 and bind.targets[0] is d:
            if type(bind.value) not in (gast.List, gast.ListComp):
                return False
        elif not (type(bind) is gast.AugAssign and bind.target is d):
            return False
    return True


_NOT_TENSOR_USES = frozenset({"len", "isinstance", "print", "str", "repr", "id", "type", "hasattr",
                              "getattr", "bool", "int", "float"})


def _used_as_tensor(unit, node, depth=0) -> bool:
    """Whether the value of ``node`` goes on as a tensor: into a call, an operator, a method,
    a list; through one name binding it."""
    parent = unit.parents.get(node)
    t = type(parent)
    if t is gast.Call and parent.func is not node:
        f = parent.func
        return not (type(f) is gast.Name and f.id in _NOT_TENSOR_USES and unit.is_global(f))
    if t is gast.keyword:
        return _used_as_tensor(unit, parent, depth)
    if t is gast.Attribute:
        return parent.attr not in LIST_METHODS
    if t is gast.BinOp:
        return True
    if t in (gast.List, gast.Tuple) and type(parent.ctx) is gast.Load:
        return True
    if t in (gast.ListComp, gast.GeneratorExp) and parent.elt is node:
        return True
    if t is gast.IfExp and parent.test is not node:
        return _used_as_tensor(unit, parent, depth)
    if t is gast.Assign and depth == 0 and len(parent.targets) == 1 and type(parent.targets[0]) is gast.Name:
        return any(_used_as_tensor(unit, u, 1) for u in unit.users.get(parent.targets[0], ()))
    if t is gast.Assign and depth == 0 and len(parent.targets) == 1 and type(parent.targets[0]) in (
            gast.Tuple, gast.List):
        # `a, b, _ = xs[i]` then `a` used as a tensor: the item is a tuple of tensors
        names = [e for e in parent.targets[0].elts if type(e) is gast.Name]
        return any(_used_as_tensor(unit, u, 1) for n in names for u in unit.users.get(n, ()))
    return False


def _call_evidence(unit, call, use, helper_evidence, keyword=None) -> tuple[int, int]:
    func = call.func
    if type(func) is gast.Name and unit.is_global(func):
        if func.id in _SEQUENCE_BUILTINS:
            return NONE, STRONG
        if func.id == "isinstance" and len(call.args) == 2 and call.args[0] is use:
            names = call.args[1].elts if type(call.args[1]) is gast.Tuple else [call.args[1]]
            if any(type(n) is gast.Name and n.id in ("list", "tuple") for n in names):
                return NONE, STRONG
            return _NO_EVIDENCE
    if (type(func) is gast.Attribute and func.attr in _SEQUENCE_ARG_OPS and call.args and call.args[0] is use
            and _attr_name(func.value) == "np"):
        return NONE, STRONG         # `F.np.stack(xs)`, `np.concatenate(xs, axis=-1)`: a list of arrays
    fk = unit.kind(func)
    if is_op(fk) and Tag.MULTI_OUTPUT_OP not in fk:
        if type(func) is gast.Attribute and func.attr in MULTI_OUTPUT:
            return _NO_EVIDENCE
        return STRONG, NONE
    if Tag.TENSOR_METHOD in fk:
        return STRONG, NONE
    where = keyword if keyword is not None else call.args.index(use) if use in call.args else None
    if where is None:
        return _NO_EVIDENCE
    found = helper_evidence(call, where)
    return found if found is not None else _NO_EVIDENCE


def _attr_name(node) -> str | None:
    """The last name of ``F.np`` (``np``), of ``np`` (``np``), else None."""
    if type(node) is gast.Attribute:
        return node.attr
    if type(node) is gast.Name:
        return node.id
    return None
