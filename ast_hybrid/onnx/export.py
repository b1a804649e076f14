"""``mx.onnx.export_model``: an MXNet graph and its parameters as an ONNX model file, op by op as MXNet 1.9.1's
``mxnet/onnx/mx2onnx`` does.

The walk (:func:`to_onnx`): the graph's MXNet JSON (``Symbol.tojson``, each node under MXNet's registered op
name), each node's output shapes and dtypes (``infer_shape``/``infer_type`` over ``get_internals()`` for the
shapes given), then every node in order through its translation (``translations.TABLE``).  Names are MXNet's:
inputs and parameters keep theirs, a node's output is its name (``name0``, ``name1``... for an op of several
outputs), so the graph's outputs are named as MXNet's own export names them.  Parameters are initialisers;
the inputs are the graph's free variables not among them (a trailing ``*_label`` variable left by a loss,
as MXNet, dropped).  The model declares ONNX opset :data:`OPSET`.
"""

from __future__ import annotations

import json
import logging
import re

import numpy as np

from ast_hybrid.onnx.emit import Emitter, ExportError, Node, onnx_dtype

__all__ = ["OPSET", "export_model", "get_operator_support", "to_onnx"]

#: the ONNX opset the models are written in (LayerNormalization is 17's; ONNX Runtime 1.12 and later run it)
OPSET = 17

_LOG = logging.getLogger("ast_hybrid.onnx")


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("Onnx and protobuf need to be installed: pip install onnx (or ast-hybrid[onnx])") from None
    return onnx


def get_operator_support(opset_version=None):
    """The MXNet operators the export translates (MXNet's ``mx.onnx.get_operator_support``), sorted."""
    _onnx()
    from ast_hybrid.onnx.translations import TABLE

    return sorted(TABLE)


def _host(value):
    return np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)


def _load(sym, params):
    """``(Symbol, {name: numpy array})`` from files or objects, as MXNet's ``export_model`` takes them."""
    from ast_hybrid.symbol.graph import Symbol, load_json

    if isinstance(sym, str) and isinstance(params, str):
        from ast_hybrid import nd

        with open(sym) as f:
            sym = load_json(f.read(), where=sym)
        params = nd.load(params)
    elif not isinstance(sym, Symbol) or not isinstance(params, (dict, list, tuple)):
        raise ValueError("Input sym and params should either be files or objects")
    if isinstance(params, (list, tuple)):
        if len(params) != 2:
            raise ValueError("Input sym and params should either be files or objects")
        params = {**params[0], **params[1]}
    return sym, {re.sub(r"^(arg|aux):", "", k): _host(v) for k, v in params.items()}


def _entry_names(internals):
    """The ONNX name of every output of every node, as MXNet's export names them from ``list_outputs``."""
    names = []
    for name in internals.list_outputs():
        if name.endswith("_output"):
            names.append(name[:-len("_output")])
        elif re.search(r"_output[0-9]+$", name):
            stem, index = re.match(r"(.*)_output([0-9]+)$", name).groups()
            names.append(stem + index)
        else:
            names.append(name)
    return names


def to_onnx(sym, params, in_shapes, in_types, dynamic=False, dynamic_input_shapes=None, verbose=False):
    """The ONNX ``ModelProto`` of ``sym`` with ``params`` (numpy arrays by name) for inputs of ``in_shapes`` and
    ``in_types``."""
    onnx = _onnx()
    from onnx import helper

    from ast_hybrid.onnx.translations import TABLE

    graph = json.loads(sym.tojson(remove_amp_cast=False))   # every node of get_internals(), in its order
    nodes = graph["nodes"]
    label = nodes[-1]["name"] + "_label" if nodes else None
    inputs = [n for n in sym.list_inputs() if n not in params and n != label]
    if len(in_shapes) != len(inputs):
        raise ValueError(f"export_model was given {len(in_shapes)} input shape(s) for the graph's {len(inputs)} "
                         f"input(s) {inputs} (its other variables are in params)")
    if len(in_types) != len(in_shapes):
        raise ValueError("The lengths of in_types and in_shapes must equal")
    missing = [n for n in sym.list_inputs() if n not in params and n not in inputs]
    if missing:
        raise ValueError(f"export_model: no value for {missing} in params")
    in_shapes = [tuple(int(d) for d in s) for s in in_shapes]
    shapes = {**dict(zip(inputs, in_shapes)), **{k: v.shape for k, v in params.items() if k in sym.list_inputs()}}
    dtypes = {**{k: np.dtype(t) for k, t in zip(inputs, in_types)},
              **{k: v.dtype for k, v in params.items() if k in sym.list_inputs()}}
    internals = sym.get_internals()
    entry_shapes = internals.infer_shape(**shapes)[1]
    entry_types = internals.infer_type(**dtypes)[1]
    names = _entry_names(internals)
    rows = graph["node_row_ptr"]

    class _Aval:
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, dtype

    avals = [_Aval(s, t) for s, t in zip(entry_shapes, entry_types)]
    e = Emitter(OPSET, dynamic)
    seen_names: set[str] = set()
    tensor = {}                         # (node index, output) -> ONNX name
    graph_inputs = []
    if dynamic:
        given = dynamic_input_shapes or [tuple(None for _ in s) for s in in_shapes]
        if len(given) != len(in_shapes) or any(len(a) != len(b) for a, b in zip(given, in_shapes)):
            raise ValueError("dynamic_input_shapes must give one shape of each input's rank")
    elif dynamic_input_shapes is not None:
        raise ValueError("dynamic_input_shapes is specified. Please set dynamic=True to enable dynamic input shapes")
    for idx, node in enumerate(nodes):
        op, name = node["op"], node["name"]
        if op == "null" and name in seen_names:     # one variable, named twice: the same value
            tensor[(idx, 0)] = name
            continue
        if name in seen_names:          # MXNet's export renames a repeated node name the same way
            name = f"idx_{idx}_{name}"
        seen_names.add(name)
        if op == "null":
            e.take(name)
            tensor[(idx, 0)] = name
            if name in params:
                from onnx import numpy_helper

                e.initializers.append(numpy_helper.from_array(np.asarray(params[name], order="C"), name))
            elif name in inputs:
                i = inputs.index(name)
                shape = given[i] if dynamic else in_shapes[i]
                graph_inputs.append(helper.make_tensor_value_info(name, onnx_dtype(in_types[i]), list(shape)))
            continue
        translate = TABLE.get(op)
        if translate is None:
            raise ExportError(f"mxnet.onnx.export_model: the ONNX export has no translation of operator {op!r} "
                              f"(layer {name!r}); the operators it translates: mx.onnx.get_operator_support()")
        first = rows[idx]
        count = rows[idx + 1] - first
        outs = [name if names[first + k] == node["name"] else
                (name + names[first + k][len(node["name"]):] if names[first + k].startswith(node["name"])
                 else names[first + k]) for k in range(count)]
        ins = [tensor[(i, o)] for i, o, *_ in node["inputs"]]
        n = Node(op, name, node.get("attrs", {}), ins, [avals[rows[i] + o] for i, o, *_ in node["inputs"]],
                 outs, avals[first:first + count])
        n.dynamic = dynamic
        if verbose:
            _LOG.info("Converting idx: %d, op: %s, name: %s", idx, op, name)
        translate(e, n)
        for k, o in enumerate(outs):
            tensor[(idx, k)] = o
    graph_outputs = []
    for i, o, *_ in graph["heads"]:
        out_name, aval = tensor[(i, o)], avals[rows[i] + o]
        if any(out_name == v.name for v in graph_inputs) or any(out_name == t.name for t in e.initializers):
            out_name = e.op("Identity", [out_name], e.fresh(out_name + "_out"))
        shape = [None] * len(aval.shape) if dynamic else list(aval.shape)
        graph_outputs.append(helper.make_tensor_value_info(out_name, onnx_dtype(aval.dtype), shape))
    used = {i for node in e.nodes for i in node.input} | {o.name for o in graph_outputs}
    kept = [t for t in e.initializers if t.name in used]     # a parameter no node reads (fix_gamma's gamma)
    g = helper.make_graph(e.nodes, "mxnet_converted_model", graph_inputs, graph_outputs, kept)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ast-hybrid")
    onnx.checker.check_model(model)
    return model


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path="model.onnx", verbose=False,
                 dynamic=False, dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None):
    """MXNet 1.9.1's ``mx.onnx.export_model``: ``sym`` (a Symbol, or the path of its ``-symbol.json``) and
    ``params`` (a dict of arrays, ``[arg_params, aux_params]``, or the path of a ``.params`` file) written as the
    ONNX model ``onnx_file_path`` for inputs of ``in_shapes`` and ``in_types``; returns the path.  ``dynamic``:
    every input dimension free (or those ``dynamic_input_shapes`` give as None)."""
    onnx = _onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("export_model needs in_shapes: the shape of each input, e.g. [(1, 3, 224, 224)]")
    sym, params = _load(sym, params)
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    model = to_onnx(sym, params, list(in_shapes), [np.dtype(t) for t in in_types], dynamic, dynamic_input_shapes,
                    verbose)
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:   # noqa: BLE001 - MXNet's: a failed inference keeps the model as exported
            _LOG.info("Shape inference failed, original export is kept.")
    with open(onnx_file_path, "wb") as f:
        f.write(model.SerializeToString())
    _LOG.info("Input shape of the model %s ", in_shapes)
    _LOG.info("Exported ONNX file %s saved to disk", onnx_file_path)
    return onnx_file_path
