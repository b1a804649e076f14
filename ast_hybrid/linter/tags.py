"""The tags of a kind, and what the linter knows of MXNet's values by name.

A *kind* is a frozenset of tags (:class:`Tag`) that :meth:`~ast_hybrid.linter.kinds.Unit.kind` gives
for an expression of a forward; this module holds the tags, the kinds met most often (``TENSOR_KIND``:
``{Tag.TENSOR}``...), the questions the rules ask of a kind (:func:`tensorish`,
:func:`definitely_tensor`...), what iterating or indexing a value of a kind gives (:func:`elements_of`,
:func:`item_of`), and the tables of names (tensor methods, host methods, list methods, attributes
that are not tensors).  The tensor methods are read from :mod:`ast_hybrid.common.fluent`, the list of
NDArray's methods the front installs too.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ast_hybrid.common import fluent

__all__ = ["Tag", "Items", "EMPTY", "TENSOR_KIND", "TENSOR_OR_TUPLE_KIND", "SEQUENCE_KIND", "ITEM_UNPACKED_KIND",
           "DICT_KIND", "INT_KIND", "HOST_ARRAY_KIND", "TENSORS_KIND", "MULTI_OUTPUT", "TENSOR_METHODS", "HOST_METHODS",
           "INFO_METHODS", "SPARSE_PARTS", "META_ATTRS", "LIST_METHODS", "is_op", "tensorish", "definitely_tensor",
           "python_value", "mixed_result", "holds_tensors", "structures_of", "elements_of", "item_of", "sequence_of"]


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


#: the kinds met most often: nothing known, a tensor, perhaps a tuple of them, a list of them...
EMPTY: frozenset = frozenset()
TENSOR_KIND = frozenset((Tag.TENSOR,))
TENSOR_OR_TUPLE_KIND = frozenset((Tag.TENSOR_OR_TUPLE,))
SEQUENCE_KIND = frozenset((Tag.SEQUENCE_OF_TENSORS,))
ITEM_UNPACKED_KIND = frozenset((Tag.TENSOR_OR_TUPLE, Tag.TENSORS))
DICT_KIND = frozenset((Tag.DICT_OF_TENSORS,))
INT_KIND = frozenset((Tag.INT,))
HOST_ARRAY_KIND = frozenset((Tag.HOST_ARRAY,))
TENSORS_KIND = frozenset((Tag.TENSOR_OR_TUPLE, Tag.TENSORS))

#: Functions of ``F`` written in Python, not operators, with a result of several parts whose
#: number the call does not say (control flow; numpy mode's splits).  The operators' output
#: counts come from MXNet itself (:mod:`ast_hybrid.common.op_outputs`).
MULTI_OUTPUT = frozenset({"split_v2", "foreach", "while_loop", "cond", "array_split", "hsplit",
                          "vsplit", "dsplit", "meshgrid"})
#: NDArray/Symbol methods that give tensors (MXNet's fluent methods and the array's own:
#: :data:`ast_hybrid.common.fluent.TENSOR_METHODS`, the list the front installs), less those a Python list has
#: too (``xs.sort()``, ``xs.copy()``): called on a value that may be a tensor or a tuple (or list) of them,
#: one of these says it was a tensor
TENSOR_METHODS = frozenset(name for name in fluent.TENSOR_METHODS if not hasattr(list, name))
#: Tensor methods that return a host value (numpy array or Python scalar).
HOST_METHODS = frozenset({"asnumpy", "asscalar", "item", "tolist"})
#: Symbol methods that describe it in Python values (``x.infer_shape(data=...)[1][0]``: lists of shape tuples)
INFO_METHODS = frozenset({"infer_shape", "infer_shape_partial", "infer_type", "infer_type_partial",
                          "list_arguments", "list_outputs", "list_auxiliary_states", "list_inputs", "tojson",
                          "attr", "list_attr", "attr_dict", "debug_str"})
#: Attributes of a sparse tensor (``x.tostype("csr")``) that are tensors
SPARSE_PARTS = frozenset({"data", "indices", "indptr"})
#: Tensor attributes that are not tensors.
META_ATTRS = frozenset({"shape", "ndim", "size", "context", "ctx", "dtype", "stype",
                        "grad", "handle", "name", "writable"})
#: Methods of Python lists (no tensor has them).
LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "index", "count", "sort",
                          "reverse", "clear"})


def is_op(kinds) -> bool:
    """``F`` itself or an op/namespace reached from it."""
    return Tag.OP_NAMESPACE in kinds or Tag.OP in kinds or Tag.MULTI_OUTPUT_OP in kinds


def tensorish(kinds) -> bool:
    return Tag.TENSOR in kinds or Tag.TENSOR_OR_TUPLE in kinds


def definitely_tensor(kinds) -> bool:
    return Tag.TENSOR in kinds and not (Tag.TENSOR_OR_TUPLE in kinds or Tag.SEQUENCE_OF_TENSORS in kinds
                                        or Tag.DICT_OF_TENSORS in kinds or Tag.MIXED in kinds)


def python_value(kinds) -> bool:
    """What a definition gives that is surely no tensor nor container of them: a number, a
    string, a host array, an attribute of ``self`` (a constructor's value) not used as a tensor."""
    return not (holds_tensors(kinds) or is_op(kinds) or Tag.SELF in kinds or Tag.TENSOR_METHOD in kinds)


def mixed_result(result: frozenset, operands) -> frozenset:
    """``result`` (arithmetic or a comparison of ``operands``) keeps ``MIXED`` when an operand is
    mixed and none is surely a tensor."""
    if (Tag.TENSOR in result and any(Tag.MIXED in k for k in operands)
            and not any(definitely_tensor(k) for k in operands)):
        return result | {Tag.MIXED}
    return result


def holds_tensors(kinds) -> bool:
    """A tensor, or a container of tensors."""
    return (tensorish(kinds) or Tag.SEQUENCE_OF_TENSORS in kinds or Tag.DICT_OF_TENSORS in kinds)


def structures_of(kinds) -> list:
    return [k for k in kinds if k.__class__ is Items]


def elements_of(kinds) -> frozenset:
    """Tags of the items obtained by iterating a value of ``kinds``."""
    out = set()
    structures = structures_of(kinds)
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


def item_of(kinds, i: int) -> frozenset:
    """Tags of ``v[i]`` (``i`` a constant) for a value ``v`` of ``kinds``."""
    structures = structures_of(kinds)
    if not structures:
        return elements_of(kinds)
    out = set()
    for st in structures:
        if -len(st.items) <= i < len(st.items):
            out |= st.items[i]
    rest = kinds - {Tag.SEQUENCE_OF_TENSORS} - set(structures)
    return frozenset(out) | elements_of(rest)


def sequence_of(items) -> frozenset:
    """The kind of a tuple or list whose items have the tags ``items`` (in order)."""
    items = tuple(items)
    if not any(holds_tensors(k) or structures_of(k) for k in items):
        return EMPTY
    return frozenset((Tag.SEQUENCE_OF_TENSORS, Items(items)))
