"""``mx.contrib.onnx.import_model`` and ``get_model_metadata``: an ONNX model as an MXNet graph and its
parameters, node by node as MXNet 1.9.1's ``contrib/onnx/onnx2mx`` does.

Each ONNX node becomes the ``mx.sym`` operators that compute it (``Conv`` a ``Convolution``, ``Gemm`` a
``FullyConnected``, ``BatchNormalization`` a ``BatchNorm`` whose statistics are auxiliary states...).  Every
initialiser is a parameter (a variable of its name, its value in ``arg_params`` or ``aux_params``), listed among
the graph's inputs or not (MXNet 1.9.1's importer needs them listed, which ONNX no longer asks).  Values an
operator takes as options (a ``Reshape``'s shape, a ``Slice``'s starts, ``Clip``'s bounds) must be
initialisers or ``Constant`` nodes; an operator the import lacks, or a value it needs and cannot know, is an
error naming the operator and the node.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.core.errors import NotSupported

__all__ = ["import_model", "get_model_metadata", "from_onnx"]


class OnnxImportError(NotSupported):
    """An ONNX operator (or one of its options) the import cannot express as MXNet operators."""


def _load(model_file):
    try:
        import onnx
    except ImportError:
        raise ImportError("Onnx and protobuf need to be installed: pip install onnx (or ast-hybrid[onnx])") from None
    return onnx.load_model(model_file) if isinstance(model_file, str) else model_file


def get_model_metadata(model_file):
    """``{'input_tensor_data': [(name, shape, elem_type)], 'output_tensor_data': [(name, shape)]}``, as MXNet's."""
    graph = _load(model_file).graph
    params = {t.name for t in graph.initializer}

    def dims(value):
        return tuple(d.dim_value for d in value.type.tensor_type.shape.dim)

    return {"input_tensor_data": [(i.name, dims(i), i.type.tensor_type.elem_type) for i in graph.input
                                  if i.name not in params],
            "output_tensor_data": [(o.name, dims(o)) for o in graph.output]}


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of the ONNX model ``model_file`` (a path or a ModelProto)."""
    return from_onnx(_load(model_file).graph)


class _Node:
    def __init__(self, proto, values):
        from onnx import helper

        self.op, self.name = proto.op_type, proto.name or proto.output[0]
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self.inputs, self.outputs = list(proto.input), list(proto.output)
        self._values = values

    def attr(self, key, default=None):
        value = self.attrs.get(key, default)
        return value.decode() if isinstance(value, bytes) else value

    def const(self, i, default=None):
        """Input ``i``'s value, which must be known (an initialiser or a Constant node)."""
        if i >= len(self.inputs) or not self.inputs[i]:
            return default
        if self.inputs[i] not in self._values:
            raise self.error(f"takes its input {self.inputs[i]!r} as an option: it must be an initialiser or a "
                             "Constant")
        return self._values[self.inputs[i]]

    def error(self, why):
        return OnnxImportError(f"mxnet.contrib.onnx.import_model: ONNX operator {self.op!r} (node {self.name!r}) {why}")


def from_onnx(graph):
    from onnx import numpy_helper

    from ast_hybrid.symbol.graph import group, variable

    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    syms = {}
    for i in graph.input:
        syms[i.name] = variable(i.name, shape=values[i.name].shape if i.name in values else None)
    dims = {i.name: tuple(d.dim_value for d in i.type.tensor_type.shape.dim) for i in graph.input}
    syms[("input shapes",)] = {k: v for k, v in dims.items() if k not in values and v and all(v)}
    for name, value in values.items():
        syms.setdefault(name, variable(name, shape=value.shape))
    for proto in graph.node:
        n = _Node(proto, values)
        if n.op == "Constant":
            value = numpy_helper.to_array(proto.attribute[0].t) if proto.attribute[0].type == 4 else \
                np.asarray(n.attr(proto.attribute[0].name))
            values[n.outputs[0]] = value
            syms[n.outputs[0]] = variable(n.outputs[0], shape=value.shape)
            continue
        folded = _fold(n, values)
        if folded is not None:          # an operator on known values (a weight's Transpose): a known value
            values[n.outputs[0]] = folded
            syms[n.outputs[0]] = variable(n.outputs[0], shape=folded.shape)
            continue
        translate = _TABLE.get(n.op)
        if translate is None:
            raise n.error("has no translation to MXNet operators")
        ins = [syms[i] if i else None for i in n.inputs]
        out = translate(n, ins, values, syms)
        outs = out if isinstance(out, (list, tuple)) else [out]
        for name, s in zip(n.outputs, outs):
            syms[name] = s
    outputs = [syms[o.name] for o in graph.output]
    out = group(outputs) if len(outputs) > 1 else outputs[0]
    aux = set(out.list_auxiliary_states())
    from ast_hybrid import nd

    arg_params = {k: nd.array(v, dtype=v.dtype) for k, v in values.items() if k in out.list_arguments()}
    aux_params = {k: nd.array(v, dtype=v.dtype) for k, v in values.items() if k in aux}
    return out, arg_params, aux_params


def _fold(n, values):
    """The value of a shape operator whose inputs are all known (ONNX exporters transpose or reshape weights in
    the graph), else None."""
    if not n.inputs or any(i not in values for i in n.inputs if i):
        return None
    x = values[n.inputs[0]]
    if n.op == "Transpose":
        perm = n.attr("perm")
        return np.ascontiguousarray(np.transpose(x, perm if perm is not None else None))
    if n.op == "Identity":
        return x
    if n.op == "Cast":
        from onnx import helper

        return x.astype(helper.tensor_dtype_to_np_dtype(n.attr("to")))
    if n.op == "Reshape" and not n.attr("allowzero", 0):
        shape = [int(d) if d != 0 else x.shape[i] for i, d in enumerate(values[n.inputs[1]])]
        return x.reshape(shape)
    return None


# --- translations: (node, input Symbols, known values, Symbols by name) -> Symbol(s) -------------------------

def _sym():
    from ast_hybrid import sym

    return sym


def _pads(n, rank):
    pads = list(n.attr("pads", [0] * 2 * rank))
    if pads[:rank] != pads[rank:]:
        raise n.error(f"pads {pads} unevenly (MXNet's operators pad both sides alike)")
    if n.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise n.error(f"has auto_pad {n.attr('auto_pad')!r}; give explicit pads")
    return tuple(pads[:rank])


def conv(n, ins, values, syms):
    w = n.const(1)
    rank = w.ndim - 2
    kernel = tuple(n.attr("kernel_shape", w.shape[2:]))
    return _sym().Convolution(ins[0], ins[1], ins[2] if len(ins) > 2 else None, kernel=kernel,
                              stride=tuple(n.attr("strides", [1] * rank)),
                              dilate=tuple(n.attr("dilations", [1] * rank)), pad=_pads(n, rank),
                              num_filter=w.shape[0], num_group=n.attr("group", 1), no_bias=len(ins) < 3, name=n.name)


def conv_transpose(n, ins, values, syms):
    w = n.const(1)
    rank = w.ndim - 2
    group = n.attr("group", 1)
    if n.attr("output_shape") is not None:
        raise n.error("gives output_shape; give pads and output_padding")
    return _sym().Deconvolution(ins[0], ins[1], ins[2] if len(ins) > 2 else None,
                                kernel=tuple(n.attr("kernel_shape", w.shape[2:])),
                                stride=tuple(n.attr("strides", [1] * rank)),
                                dilate=tuple(n.attr("dilations", [1] * rank)), pad=_pads(n, rank),
                                adj=tuple(n.attr("output_padding", [0] * rank)), num_filter=w.shape[1] * group,
                                num_group=group, no_bias=len(ins) < 3, name=n.name)


def batch_norm(n, ins, values, syms):
    return _sym().BatchNorm(*ins[:5], eps=n.attr("epsilon", 1e-5), momentum=n.attr("momentum", 0.9),
                            fix_gamma=False, use_global_stats=True, name=n.name)


def pool(kind):
    def translate(n, ins, values, syms):
        kernel = tuple(n.attr("kernel_shape"))
        rank = len(kernel)
        extra = {"count_include_pad": bool(n.attr("count_include_pad", 0))} if kind == "avg" else {}
        if kind == "lp":
            extra["p_value"] = n.attr("p", 2)
        if any(d != 1 for d in n.attr("dilations", [1] * rank)):
            raise n.error("has dilations, which MXNet's Pooling has not")
        return _sym().Pooling(ins[0], kernel=kernel, pool_type=kind, stride=tuple(n.attr("strides", [1] * rank)),
                              pad=_pads(n, rank), pooling_convention="full" if n.attr("ceil_mode", 0) else "valid",
                              name=n.name, **extra)
    return translate


def global_pool(kind):
    def translate(n, ins, values, syms):
        extra = {"p_value": n.attr("p", 2)} if kind == "lp" else {}
        return _sym().Pooling(ins[0], kernel=(1, 1), pool_type=kind, global_pool=True, name=n.name, **extra)
    return translate


def gemm(n, ins, values, syms):
    s = _sym()
    alpha, beta = n.attr("alpha", 1.0), n.attr("beta", 1.0)
    a, b = ins[0], ins[1]
    if n.attr("transA", 0):
        a = s.transpose(a)
    bias = ins[2] if len(ins) > 2 and ins[2] is not None else None
    w = values.get(n.inputs[1])
    units = None if w is None else w.shape[0] if n.attr("transB", 0) else w.shape[1]
    c = values.get(n.inputs[2]) if bias is not None else None
    # a dense layer (FullyConnected) when the weight is known and the bias, if any, one value per unit
    if w is not None and alpha == 1.0 and beta == 1.0 and (bias is None or (c is not None and c.size == units)):
        if not n.attr("transB", 0):
            name = n.inputs[1] + "_T"
            values[name] = np.ascontiguousarray(w.T)
            b = syms[name] = _variable(name, values[name].shape)
        if bias is None:
            return s.FullyConnected(a, b, num_hidden=units, no_bias=True, name=n.name)
        if c.shape != (units,):
            bias = s.reshape(bias, shape=(-1,))
        return s.FullyConnected(a, b, bias, num_hidden=units, name=n.name)
    y = s.dot(a, b, transpose_b=bool(n.attr("transB", 0)))
    if alpha != 1.0:
        y = y * alpha
    if bias is not None:
        y = s.broadcast_add(y, bias * beta if beta != 1.0 else bias)
    return y


def _variable(name, shape):
    from ast_hybrid.symbol.graph import variable

    return variable(name, shape=shape)


def matmul(n, ins, values, syms):
    s = _sym()
    if n.inputs[1] in values and values[n.inputs[1]].ndim == 2:     # x @ W: a dense layer on the last axis
        w = values[n.inputs[1]]
        name = n.inputs[1] + "_T"
        values[name] = np.ascontiguousarray(w.T)
        syms[name] = _variable(name, values[name].shape)
        return s.FullyConnected(ins[0], syms[name], num_hidden=w.shape[1], no_bias=True, flatten=False,
                                name=n.name)
    known = syms[("input shapes",)]
    try:
        ranks = [len(x.infer_shape(**{k: v for k, v in known.items() if k in x.list_inputs()})[1][0]) for x in ins]
    except Exception:   # noqa: BLE001 - an input of unknown shape: the ranks stay unknown
        raise n.error("multiplies arrays whose ranks the import cannot infer (the graph's input shapes are not "
                      "all given)") from None
    if ranks[1] == 2:           # MXNet's dot contracts a's last axis with b's first: ONNX's MatMul here
        return s.dot(ins[0], ins[1], name=n.name)
    if ranks[0] == ranks[1] == 3:
        return s.batch_dot(ins[0], ins[1], name=n.name)
    raise n.error(f"multiplies arrays of ranks {ranks}, which MXNet's dot and batch_dot do not write")


def binary(op):
    def translate(n, ins, values, syms):
        return getattr(_sym(), op)(ins[0], ins[1], name=n.name)
    return translate


def unary(op):
    def translate(n, ins, values, syms):
        return getattr(_sym(), op)(ins[0], name=n.name)
    return translate


def activation(kind):
    def translate(n, ins, values, syms):
        return _sym().Activation(ins[0], act_type=kind, name=n.name)
    return translate


def leaky(kind, default=0.01):
    def translate(n, ins, values, syms):
        return _sym().LeakyReLU(ins[0], act_type=kind, slope=n.attr("alpha", default), name=n.name)
    return translate


def selu(n, ins, values, syms):
    if abs(n.attr("alpha", 1.67326319217681884765625) - 1.6732632) > 1e-6 or \
            abs(n.attr("gamma", 1.05070102214813232421875) - 1.0507010) > 1e-6:
        raise n.error("has alpha/gamma other than SELU's, which MXNet's selu fixes")
    return _sym().LeakyReLU(ins[0], act_type="selu", name=n.name)


def prelu(n, ins, values, syms):
    return _sym().LeakyReLU(ins[0], _sym().reshape(ins[1], shape=(-1,)), act_type="prelu", name=n.name)


def softmax(op):
    def translate(n, ins, values, syms):
        return getattr(_sym(), op)(ins[0], axis=n.attr("axis", -1), name=n.name)
    return translate


def flatten(n, ins, values, syms):
    axis = n.attr("axis", 1)
    if axis == 1:
        return _sym().Flatten(ins[0], name=n.name)
    if axis == 0:
        return _sym().reshape(ins[0], shape=(1, -1), name=n.name)
    raise n.error(f"flattens from axis {axis}, which needs the input's rank")


def reshape(n, ins, values, syms):
    if n.attr("allowzero", 0):
        raise n.error("has allowzero, which MXNet's Reshape codes cannot say")
    return _sym().reshape(ins[0], shape=tuple(int(v) for v in n.const(1)), name=n.name)


def transpose(n, ins, values, syms):
    perm = n.attr("perm")
    return _sym().transpose(ins[0], axes=tuple(perm) if perm is not None else (), name=n.name)


def concat(n, ins, values, syms):
    return _sym().concat(*ins, dim=n.attr("axis"), name=n.name)


def identity(n, ins, values, syms):
    return _sym().identity(ins[0], name=n.name)


def dropout(n, ins, values, syms):
    out = _sym().identity(ins[0], name=n.name)
    return [out, _sym().ones_like(ins[0])] if len(n.outputs) > 1 else out


def clip(n, ins, values, syms):
    lo = n.const(1, n.attr("min", -np.inf))
    hi = n.const(2, n.attr("max", np.inf))
    return _sym().clip(ins[0], float(np.asarray(lo).reshape(-1)[0]), float(np.asarray(hi).reshape(-1)[0]),
                       name=n.name)


def _axes(n, i=1):
    axes = n.attr("axes")
    if axes is None:
        axes = n.const(i)
    return None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]


def unsqueeze(n, ins, values, syms):
    out = ins[0]
    for a in sorted(_axes(n)):
        out = _sym().expand_dims(out, axis=a)
    return out


def squeeze(n, ins, values, syms):
    axes = _axes(n)
    return _sym().squeeze(ins[0], axis=tuple(axes) if axes else None, name=n.name)


def reduce(op):
    def translate(n, ins, values, syms):
        axes = _axes(n)
        if axes is None and n.attr("noop_with_empty_axes", 0):
            return _sym().identity(ins[0])
        return getattr(_sym(), op)(ins[0], axis=tuple(axes) if axes else None, keepdims=bool(n.attr("keepdims", 1)),
                                   name=n.name)
    return translate


def reduce_l(order):
    def translate(n, ins, values, syms):
        axes = _axes(n)
        return _sym().norm(ins[0], ord=order, axis=tuple(axes) if axes else None,
                           keepdims=bool(n.attr("keepdims", 1)), name=n.name)
    return translate


def cast(n, ins, values, syms):
    from onnx import helper

    return _sym().Cast(ins[0], dtype=np.dtype(helper.tensor_dtype_to_np_dtype(n.attr("to"))).name, name=n.name)


def pad(n, ins, values, syms):
    pads = [int(p) for p in (n.const(1) if len(n.inputs) > 1 else n.attr("pads"))]
    rank = len(pads) // 2
    width = tuple(v for pair in zip(pads[:rank], pads[rank:]) for v in pair)
    value = float(np.asarray(n.const(2, n.attr("value", 0.0))).reshape(-1)[0]) if len(n.inputs) > 2 or \
        n.attr("value") is not None else 0.0
    mode = n.attr("mode", "constant")
    return _sym().Pad(ins[0], mode={"constant": "constant", "edge": "edge", "reflect": "reflect"}[mode],
                      pad_width=width, constant_value=value, name=n.name)


def slice_(n, ins, values, syms):
    starts, ends = [int(v) for v in n.const(1)], [int(v) for v in n.const(2)]
    axes = [int(v) for v in n.const(3)] if len(n.inputs) > 3 and n.inputs[3] else list(range(len(starts)))
    steps = [int(v) for v in n.const(4)] if len(n.inputs) > 4 and n.inputs[4] else [1] * len(starts)
    if any(a < 0 for a in axes):
        raise n.error("slices by negative axes, which need the input's rank")
    big = np.iinfo(np.int64).max // 2
    begin, end, step = [None] * (max(axes) + 1), [None] * (max(axes) + 1), [None] * (max(axes) + 1)
    for a, b, e, st in zip(axes, starts, ends, steps):
        begin[a] = None if (b >= big and st < 0) else b
        end[a] = None if abs(e) >= big else e
        step[a] = st
    return _sym().slice(ins[0], begin=tuple(begin), end=tuple(end), step=tuple(step), name=n.name)


def gather(n, ins, values, syms):
    return _sym().take(ins[0], ins[1], axis=n.attr("axis", 0), mode="wrap", name=n.name)


def split(n, ins, values, syms):
    axis = n.attr("axis", 0)
    sizes = n.attr("split")
    if sizes is None and len(n.inputs) > 1 and n.inputs[1]:
        sizes = [int(v) for v in n.const(1)]
    if sizes is None or len(set(sizes)) == 1:
        out = _sym().split(ins[0], num_outputs=len(n.outputs), axis=axis, name=n.name)
    else:
        out = _sym().split_v2(ins[0], tuple(np.cumsum(sizes)[:-1].tolist()), axis=axis, name=n.name)
    return [out[i] for i in range(len(n.outputs))]


def resize(n, ins, values, syms):
    mode = n.attr("mode", "nearest")
    scales = n.const(2) if len(n.inputs) > 2 and n.inputs[2] else None
    if mode == "nearest" and scales is not None and scales[0] == scales[1] == 1 and scales[2] == scales[3] and \
            float(scales[2]).is_integer():
        return _sym().UpSampling(ins[0], scale=int(scales[2]), sample_type="nearest", name=n.name)
    if mode == "linear":
        sizes = n.const(3) if len(n.inputs) > 3 and n.inputs[3] else None
        align = n.attr("coordinate_transformation_mode", "half_pixel") == "align_corners"
        if sizes is not None:
            return _sym().contrib.BilinearResize2D(ins[0], height=int(sizes[2]), width=int(sizes[3]),
                                                   align_corners=align, name=n.name)
        if scales is not None:
            return _sym().contrib.BilinearResize2D(ins[0], scale_height=float(scales[2]),
                                                   scale_width=float(scales[3]), mode="size", align_corners=align,
                                                   name=n.name)
    raise n.error(f"resizes in mode {mode!r} by scales {scales}, which the import does not write")


def lrn(n, ins, values, syms):
    return _sym().LRN(ins[0], alpha=n.attr("alpha", 1e-4), beta=n.attr("beta", 0.75), knorm=n.attr("bias", 1.0),
                      nsize=n.attr("size"), name=n.name)


def instance_norm(n, ins, values, syms):
    return _sym().InstanceNorm(*ins[:3], eps=n.attr("epsilon", 1e-5), name=n.name)


def layer_norm(n, ins, values, syms):
    if n.attr("axis", -1) != -1 or len(ins) < 3:
        raise n.error("normalises more than the last axis or has no bias; MXNet's LayerNorm normalises one axis")
    return _sym().LayerNorm(*ins[:3], axis=-1, eps=n.attr("epsilon", 1e-5), name=n.name)


def hard_sigmoid(n, ins, values, syms):
    return _sym().hard_sigmoid(ins[0], alpha=n.attr("alpha", 0.2), beta=n.attr("beta", 0.5), name=n.name)


def arg(op):
    def translate(n, ins, values, syms):
        if n.attr("select_last_index", 0):
            raise n.error("selects the last index among equals, which MXNet's argmax does not")
        y = getattr(_sym(), op)(ins[0], axis=n.attr("axis", 0), keepdims=bool(n.attr("keepdims", 1)))
        return _sym().Cast(y, dtype="int64", name=n.name)
    return translate


def shape(n, ins, values, syms):
    syms[("shape of", n.outputs[0])] = ins[0]       # for a ConstantOfShape of it: an array like this one
    return _sym().shape_array(ins[0], name=n.name)


def constant_of_shape(n, ins, values, syms):
    from onnx import numpy_helper

    fill = n.attrs.get("value")
    value = numpy_helper.to_array(fill).reshape(-1)[0] if fill is not None else np.float32(0)
    like = syms.get(("shape of", n.inputs[0]))
    if like is None:
        raise n.error("fills a shape computed from an array the import cannot trace back")
    base = _sym().zeros_like(like) if value == 0 else _sym().ones_like(like)
    base = base if value in (0, 1) else base * float(value)
    return _sym().Cast(base, dtype=np.dtype(value.dtype).name, name=n.name)


def expand(n, ins, values, syms):
    return _sym().broadcast_to(ins[0], shape=tuple(int(d) for d in n.const(1)), name=n.name)


def mod(n, ins, values, syms):
    if n.attr("fmod", 0):
        raise n.error("is C's fmod (the dividend's sign), which MXNet's mod is not")
    return _sym().broadcast_mod(ins[0], ins[1], name=n.name)


def tile(n, ins, values, syms):
    return _sym().tile(ins[0], reps=tuple(int(r) for r in n.const(1)), name=n.name)


def where(n, ins, values, syms):
    return _sym().where(ins[0], ins[1], ins[2], name=n.name)


def add_n(n, ins, values, syms):
    return _sym().add_n(*ins, name=n.name)


_TABLE = {
    "Conv": conv, "ConvTranspose": conv_transpose, "BatchNormalization": batch_norm,
    "MaxPool": pool("max"), "AveragePool": pool("avg"), "LpPool": pool("lp"),
    "GlobalMaxPool": global_pool("max"), "GlobalAveragePool": global_pool("avg"), "GlobalLpPool": global_pool("lp"),
    "Gemm": gemm, "MatMul": matmul,
    "Add": binary("broadcast_add"), "Sub": binary("broadcast_sub"), "Mul": binary("broadcast_mul"),
    "Div": binary("broadcast_div"), "Pow": binary("broadcast_power"), "Max": binary("broadcast_maximum"),
    "Min": binary("broadcast_minimum"), "Sum": add_n,
    "Equal": binary("broadcast_equal"), "Greater": binary("broadcast_greater"), "Less": binary("broadcast_lesser"),
    "GreaterOrEqual": binary("broadcast_greater_equal"), "LessOrEqual": binary("broadcast_lesser_equal"),
    "And": binary("broadcast_logical_and"), "Or": binary("broadcast_logical_or"),
    "Xor": binary("broadcast_logical_xor"), "Not": unary("logical_not"), "Where": where,
    "Relu": unary("relu"), "Sigmoid": unary("sigmoid"), "Tanh": unary("tanh"), "Softplus": activation("softrelu"),
    "Softsign": unary("softsign"), "LeakyRelu": leaky("leaky"), "Elu": leaky("elu", 1.0), "Selu": selu,
    "PRelu": prelu, "HardSigmoid": hard_sigmoid, "Erf": unary("erf"),
    "Exp": unary("exp"), "Log": unary("log"), "Sqrt": unary("sqrt"), "Abs": unary("abs"), "Neg": unary("negative"),
    "Reciprocal": unary("reciprocal"), "Floor": unary("floor"), "Ceil": unary("ceil"), "Sign": unary("sign"),
    "Sin": unary("sin"), "Cos": unary("cos"), "Tan": unary("tan"), "Asin": unary("arcsin"), "Acos": unary("arccos"),
    "Atan": unary("arctan"), "Round": unary("rint"), "Sinh": unary("sinh"), "Cosh": unary("cosh"),
    "Asinh": unary("arcsinh"), "Acosh": unary("arccosh"), "Atanh": unary("arctanh"),
    "ArgMax": arg("argmax"), "ArgMin": arg("argmin"), "Shape": shape,
    "ConstantOfShape": constant_of_shape, "Expand": expand, "Tile": tile, "Mod": mod,
    "Softmax": softmax("softmax"), "LogSoftmax": softmax("log_softmax"),
    "Flatten": flatten, "Reshape": reshape, "Transpose": transpose, "Concat": concat, "Identity": identity,
    "Dropout": dropout, "Clip": clip, "Unsqueeze": unsqueeze, "Squeeze": squeeze, "Cast": cast, "Pad": pad,
    "Slice": slice_, "Gather": gather, "Split": split, "Resize": resize, "LRN": lrn,
    "InstanceNormalization": instance_norm, "LayerNormalization": layer_norm,
    "ReduceMean": reduce("mean"), "ReduceSum": reduce("sum"), "ReduceMax": reduce("max"), "ReduceMin": reduce("min"),
    "ReduceProd": reduce("prod"), "ReduceL1": reduce_l(1), "ReduceL2": reduce_l(2),
}
