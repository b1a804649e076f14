"""MXNet's graph JSON (the ``-symbol.json`` MXNet's ``export``/``Symbol.save`` write), both ways.

    load_json(text)  -> Symbol       # each node recorded on ast-hybrid's op of MXNet's registered name
    to_json(entries) -> str          # each node under MXNet's registered name, attributes in MXNet's text

``{"nodes": [{"op", "name", "attrs", "inputs": [[node, output, version], ...]}, ...], "arg_nodes", "node_row_ptr",
"heads", "attrs": {"mxnet_version": ...}}``: variables are ``"null"`` nodes (``__shape__``/``__dtype__`` where
known), attributes are strings (``"(3, 3)"``, ``"True"``).  MXNet's oneDNN fused ``_sg_mkldnn_conv`` nodes (float
and int8: GluonCV's ``*_int8`` graphs) carry their Convolution/BatchNorm/Activation subgraph, read here into the
op's options (``ops/quantization.py``).  An op ast-hybrid lacks is NotSupported naming it and its node.  Checked
both ways against MXNet 1.9.1 (tests/gluon/test_mxnet_graph_import.py).
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from ast_hybrid.symbol.graph import Symbol, _symbols_in, _topo, unscoped, variable
from ast_hybrid.symbol.recorder import _make_op, _MethodCall, _signature

__all__ = ["load_json", "parse_attr", "to_json"]


#: MXNet's dtype codes (mshadow's ``TypeFlag``) as ``__dtype__`` attributes give them
_DTYPE_CODES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8", 6: "int64", 7: "bool",
                8: "int16", 9: "uint16", 10: "uint32", 11: "uint64"}
_NAMESPACES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_random_", "random"), ("_sample_", "random"),
               ("_image_", "image"))


def parse_attr(text):
    """An attribute's text as the Python value it writes (``"(3, 3)"``, ``"True"``); other text as it is."""
    import ast

    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _json_op(name):
    """The op MXNet registered as ``name`` (``Convolution``, ``_plus_scalar``, ``_contrib_box_nms``), or None."""
    from ast_hybrid import ops

    if name in ("_zeros", "_ones", "_arange", "_eye", "_linspace"):  # creation nodes (recorder.py's _CREATIONS)
        return getattr(ops, name[1:])
    for prefix, space in _NAMESPACES:
        if name.startswith(prefix):
            found = getattr(getattr(ops, space, None), name[len(prefix):], None)
            if found is not None:
                return found
    return getattr(ops, name, None) or getattr(ops._internal, name, None)


def load_json(text, where="the graph"):
    """MXNet's graph JSON as a Symbol: its variables (with their ``__shape__``/``__dtype__`` where known) and
    op nodes recorded on ast-hybrid's ops of the same name; an op ast-hybrid does not have is a clear error
    naming it and its node."""
    import json

    from ast_hybrid.core.errors import unsupported

    try:
        graph = json.loads(text) if isinstance(text, str) else text
        nodes, heads = graph["nodes"], graph["heads"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{where}: not an MXNet graph JSON ({exc})") from None
    built = []
    for node in nodes:
        given = node.get("attrs") or node.get("attr") or node.get("param") or {}
        attrs = {k: parse_attr(v) for k, v in given.items()}
        if node["op"] == "null":
            shape = attrs.pop("__shape__", None)
            dtype = _DTYPE_CODES.get(attrs.pop("__dtype__", None))
            shape = tuple(shape) if shape is not None and all(shape) else None
            sym = variable(node["name"], shape=shape, dtype=dtype,
                           **{k: v for k, v in attrs.items() if k.startswith("__")})
            built.append(sym)
            continue
        if node.get("subgraphs"):
            built.append(_fused_node(node, attrs, built, where))
            continue
        fn = _json_op(node["op"])
        if fn is None:
            raise unsupported("mxnet.symbol", f"op {node['op']}",
                              f"{where}: node {node['name']!r} uses MXNet's operator {node['op']!r}, which "
                              "ast-hybrid does not have")
        args = [Symbol._of([built[i]._entries[j]]) for i, j, *_ in node["inputs"]]
        kwargs = {k: v for k, v in attrs.items() if not k.startswith("__")}
        key = node["op"].replace("_contrib_", "contrib.", 1) if node["op"].startswith("_contrib_") else node["op"]
        with unscoped():                    # the names are the file's, whatever scope is open
            built.append(_make_op(fn, node["op"], args, kwargs, name=node["name"], key=key))
    return Symbol._of([built[i]._entries[j] for i, j, *_ in heads])


#: MXNet's fused (subgraph) operators that ast-hybrid runs
_FUSED = {"_sg_mkldnn_conv"}
_CONV_OPTIONS = ("kernel", "stride", "dilate", "pad", "num_filter", "num_group", "no_bias")


def _fused_node(node, attrs, built, where):
    """A node whose computation is a subgraph MXNet's oneDNN pass fused (``_sg_mkldnn_conv``: Convolution
    [+ BatchNorm] [+ Activation] [+ elemwise_add [+ Activation]]): its options read from the subgraph, its
    inputs named as MXNet lists them (data, weight, bias, gamma, beta, mean, var, sum, then the ranges)."""
    from ast_hybrid import ops
    from ast_hybrid.core.errors import unsupported

    if node["op"] not in _FUSED:
        raise unsupported("mxnet.symbol", f"op {node['op']}",
                          f"{where}: node {node['name']!r} is MXNet's fused subgraph operator {node['op']!r}, "
                          "which ast-hybrid does not have")
    flags = {k: v for k, v in attrs.items() if not k.startswith("__")}
    for old, new in (("with_relu", "with_act"), ("with_postsum_relu", "with_postsum_act")):
        if old in flags:                                    # MXNet's own back-compatible renaming
            flags[new] = flags.pop(old)
    flags = {k: (v.lower() == "true" if isinstance(v, str) and v.lower() in ("true", "false") else v)
             for k, v in flags.items()}
    options = {"no_bias": False, "bn_eps": 1e-3, "bn_fix_gamma": True}     # MXNet's defaults
    acts = []
    for sub in node["subgraphs"][0]["nodes"]:
        sub_attrs = {k: parse_attr(v) for k, v in (sub.get("attrs") or {}).items()}
        if sub["op"] == "Convolution":
            options.update({k: sub_attrs[k] for k in _CONV_OPTIONS if k in sub_attrs})
        elif sub["op"] == "BatchNorm":
            options["bn_eps"] = float(sub_attrs.get("eps", 1e-3))
            options["bn_fix_gamma"] = bool(sub_attrs.get("fix_gamma", True))
        elif sub["op"] in ("Activation", "LeakyReLU", "clip"):
            acts.append(sub_attrs.get("act_type", sub["op"]) if sub["op"] != "clip" else "clip")
    if acts:
        first_is_act = flags.get("with_act", False)
        options["act_type" if first_is_act else "postsum_act_type"] = acts[0]
        if len(acts) > 1:
            options["postsum_act_type"] = acts[1]
    names = ["data", "weight"] + ([] if options["no_bias"] else ["bias"])
    names += ["gamma", "beta", "moving_mean", "moving_var"] if flags.get("with_bn") else []
    names += ["sum"] if flags.get("with_sum") else []
    if flags.get("quantized"):
        names += ["data_min", "data_max"] + (["sum_min", "sum_max"] if flags.get("with_sum") else [])
    if len(names) != len(node["inputs"]):
        raise ValueError(f"{where}: node {node['name']!r} ({node['op']}) has {len(node['inputs'])} inputs, its "
                         f"options say {len(names)} ({', '.join(names)})")
    kwargs = {k: Symbol._of([built[i]._entries[j]]) for k, (i, j, *_) in zip(names, node["inputs"])}
    kwargs.update(options, **flags)
    with unscoped():
        return _make_op(ops._internal._sg_mkldnn_conv, node["op"], [], kwargs, name=node["name"], key=node["op"],
                        nout=ops.quantization.sg_mkldnn_conv_outputs(**flags))


def _attr_text(value):
    """A value as MXNet's graph JSON writes an attribute: ``True``, ``(3, 3)``, ``float32``."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (list, tuple)):
        items = [_attr_text(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, (np.dtype, type)):
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


_DTYPE_NUMBERS = {v: k for k, v in _DTYPE_CODES.items()}


def _json_attrs(node):
    """A node's attributes for MXNet's JSON: its options by parameter name (Symbols are inputs, not
    attributes; callables and Nones are ast-hybrid's own and left out)."""
    from ast_hybrid.core.errors import unsupported

    if isinstance(node.fn, _MethodCall) or node.fn in _OPERATOR_FNS:
        scalars = [a for a in node.args if not isinstance(a, Symbol)]
        if node.fn in _OPERATOR_FNS:
            return {"scalar": _attr_text(float(scalars[0]))} if scalars else {}
        fn = _json_op(node.op)
        args = (None, *node.args[1:])
    else:
        fn, args = node.fn, node.args
    sig = _signature(fn) if fn is not None else None
    if sig is None:
        raise unsupported("mxnet.symbol", "Symbol.tojson", f"node {node.name!r} ({node.op}) has no MXNet operator")
    try:
        bound = sig.bind_partial(*args, **node.kwargs).arguments
    except TypeError as exc:
        raise unsupported("mxnet.symbol", "Symbol.tojson", f"node {node.name!r} ({node.op}): {exc}") from None
    attrs, variadic = {}, None
    for k, v in bound.items():
        kind = sig.parameters[k].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            variadic = len(v)
            continue
        if kind is inspect.Parameter.VAR_KEYWORD:
            items = v.items()
        else:
            items = [(k, v)]
        for name, value in items:
            if value is None or callable(value) or isinstance(value, Symbol) or name in ("data", "out"):
                continue
            if hasattr(value, "shape") and not isinstance(value, np.generic):
                raise unsupported("mxnet.symbol", "Symbol.tojson", f"node {node.name!r} ({node.op}) holds an "
                                  "array constant, which MXNet's graph JSON cannot")
            attrs[name] = _attr_text(value)
    if variadic is not None and "num_args" in sig.parameters and "num_args" not in attrs:
        attrs["num_args"] = str(variadic)
    return attrs


# ``mx.sym.maximum``/``minimum``/``power``/``hypot`` are Python functions in MXNet that record one of three
# registered ops: two arrays, the array and a scalar, the scalar first (power's ``_rpower_scalar``)
_SCALAR_FORMS = {"maximum": ("_maximum", "_maximum_scalar", "_maximum_scalar"),
                 "minimum": ("_minimum", "_minimum_scalar", "_minimum_scalar"),
                 "power": ("_power", "_power_scalar", "_rpower_scalar"),
                 "hypot": ("_hypot", "_hypot_scalar", "_hypot_scalar")}


def _registered(op, attrs, inputs):
    """``(op, attrs)`` as MXNet's graph names them."""
    forms = _SCALAR_FORMS.get(op)
    if forms is None:
        return op, attrs
    if inputs == 2:
        return forms[0], {}
    for key, first in (("lhs", True), ("base", True), ("rhs", False), ("exp", False)):
        if key in attrs:
            return forms[2 if first else 1], {"scalar": attrs[key]}
    return op, attrs


_AMP_CASTS = ("amp_cast", "amp_multicast")


def to_json(entries, remove_amp_cast=True):
    """MXNet's graph JSON of the nodes ``entries`` depend on (``nodes``, ``arg_nodes``, ``node_row_ptr``,
    ``heads``), each op under MXNet's registered name; ``remove_amp_cast``: without the AMP casts (each output
    of an ``amp_cast``/``amp_multicast`` read from its input), as MXNet's ``export`` writes it."""
    import json

    cast_inputs = {}
    if remove_amp_cast:
        for n in _topo(entries):
            if n.kind != "var" and n.op in _AMP_CASTS:
                cast_inputs[id(n)] = [s._entries[0] for s in _symbols_in((n.args, n.kwargs))]

    def source(node, i):
        while id(node) in cast_inputs:
            node, i = cast_inputs[id(node)][i]
        return node, i

    order = [n for n in _topo(entries) if id(n) not in cast_inputs]
    index = {id(n): i for i, n in enumerate(order)}
    nodes, rows = [], [0]
    for n in order:
        if n.kind == "var":
            attrs = {}
            shape = n.attrs.get("__shape__") or (tuple(n.param.shape) if n.param is not None and n.param.shape
                                                 and all(n.param.shape) else None)
            dtype = n.attrs.get("__dtype__") or (n.param.dtype if n.param is not None else None)
            if shape:
                attrs["__shape__"] = _attr_text(tuple(shape))
            if dtype is not None and np.dtype(dtype).name in _DTYPE_NUMBERS:
                attrs["__dtype__"] = str(_DTYPE_NUMBERS[np.dtype(dtype).name])
            nodes.append({"op": "null", "name": n.name, **({"attrs": attrs} if attrs else {}), "inputs": []})
        else:
            ins = [source(*s._entries[0]) for s in _symbols_in((n.args, n.kwargs))]
            op, attrs = _registered(n.op, _json_attrs(n), len(ins))
            nodes.append({"op": op, "name": n.name, **({"attrs": attrs} if attrs else {}),
                          "inputs": [[index[id(m)], i, 0] for m, i in ins]})
        rows.append(rows[-1] + n.nout)
    graph = {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(order) if n.kind == "var"],
             "node_row_ptr": rows, "heads": [[index[id(m)], i, 0] for m, i in (source(*e) for e in entries)],
             "attrs": {"mxnet_version": ["int", 10901]}}
    return json.dumps(graph, indent=2)


_OPERATOR_FNS = frozenset({operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod,
                           operator.eq, operator.ne, operator.gt, operator.ge, operator.lt, operator.le})
