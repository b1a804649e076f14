"""Translations of MXNet's elementwise operators: unary functions, binary and broadcast arithmetic and
comparisons, the ``*_scalar`` family (the scalar an initialiser of the input's dtype), ``clip``, casts, ``where``
and the ``*_like`` creators.  MXNet's comparisons give 0/1 in their input's dtype; ONNX's give booleans, cast
back here."""

from __future__ import annotations

import numpy as np

from ast_hybrid.onnx.emit import onnx_dtype

__all__ = ["TABLE"]

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "abs": "Abs", "negative": "Neg", "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "arcsin": "Asin", "arccos": "Acos", "arctan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "arcsinh": "Asinh", "arccosh": "Acosh", "arctanh": "Atanh",
          "sign": "Sign", "erf": "Erf", "softsign": "Softsign", "_copy": "Identity", "identity": "Identity",
          "BlockGrad": "Identity", "stop_gradient": "Identity", "Dropout": "Identity", "make_loss": "Identity",
          "MakeLoss": "Identity"}
_BINARY = {"Add": ("elemwise_add", "broadcast_add", "broadcast_plus", "_plus", "_add", "_Plus"),
           "Sub": ("elemwise_sub", "broadcast_sub", "broadcast_minus", "_minus", "_sub", "_Minus"),
           "Mul": ("elemwise_mul", "broadcast_mul", "_mul", "_Mul"),
           "Div": ("elemwise_div", "broadcast_div", "_div", "_Div"),
           "Pow": ("broadcast_power", "_power", "_Power"),
           "Max": ("broadcast_maximum", "_maximum", "_Maximum"),
           "Min": ("broadcast_minimum", "_minimum", "_Minimum")}
_COMPARE = {"Equal": ("broadcast_equal", "_equal"), "Less": ("broadcast_lesser", "_lesser"),
            "LessOrEqual": ("broadcast_lesser_equal", "_lesser_equal"), "Greater": ("broadcast_greater", "_greater"),
            "GreaterOrEqual": ("broadcast_greater_equal", "_greater_equal"),
            "NotEqual": ("broadcast_not_equal", "_not_equal")}
_LOGICAL = {"And": ("broadcast_logical_and", "_logical_and"), "Or": ("broadcast_logical_or", "_logical_or"),
            "Xor": ("broadcast_logical_xor", "_logical_xor")}
# op -> (ONNX op, scalar first)
_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False), "_rminus_scalar": ("Sub", True),
           "_mul_scalar": ("Mul", False), "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True), "_maximum_scalar": ("Max", False),
           "_minimum_scalar": ("Min", False), "_equal_scalar": ("Equal", False),
           "_not_equal_scalar": ("NotEqual", False), "_greater_scalar": ("Greater", False),
           "_greater_equal_scalar": ("GreaterOrEqual", False), "_lesser_scalar": ("Less", False),
           "_lesser_equal_scalar": ("LessOrEqual", False)}
_BOOLEAN = {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor"}
_BOOL = 9


def _finish(e, n, op, ins):
    """``op`` on ``ins``; a boolean result cast to the output's dtype (MXNet's 0/1)."""
    if op == "NotEqual":             # ONNX has no NotEqual
        e.op("Cast", [e.op("Not", [e.op("Equal", ins)])], n.out, to=onnx_dtype(n.out_dtypes[0]))
    elif op in _BOOLEAN:
        e.op("Cast", [e.op(op, ins)], n.out, to=onnx_dtype(n.out_dtypes[0]))
    else:
        e.op(op, ins, n.out)


def _unary(op):
    def translate(e, n):
        e.op(op, n.inputs[:1], n.out)
    return translate


def _binary(op):
    def translate(e, n):
        _finish(e, n, op, n.inputs[:2])
    return translate


def _logical(op):
    def translate(e, n):
        a, b = (e.op("Cast", [x], to=_BOOL) for x in n.inputs[:2])
        e.op("Cast", [e.op(op, [a, b])], n.out, to=onnx_dtype(n.out_dtypes[0]))
    return translate


def _scalar(op, reverse):
    def translate(e, n):
        dtype = n.in_dtypes[0]
        value = float(n.attr("scalar", 1.0))
        c = e.const(np.asarray(value).astype(dtype), hint=n.name + "_scalar")
        _finish(e, n, op, [c, n.inputs[0]] if reverse else [n.inputs[0], c])
    return translate


def _python_mod(e, n, a, b):
    """MXNet's ``mod``: the sign of the divisor (Python's %), 0 for a divisor 0."""
    dt = n.in_dtypes[0]
    if dt.kind in "iu":
        return e.op("Mod", [a, b], n.out, fmod=0)
    zero = e.const(np.asarray(0, dt), hint=n.name + "_zero")
    r = e.op("Mod", [a, b], fmod=1)
    wrong = e.op("And", [e.op("Not", [e.op("Equal", [r, zero])]),
                         e.op("Xor", [e.op("Less", [r, zero]), e.op("Less", [b, zero])])])
    fixed = e.op("Where", [wrong, e.op("Add", [r, b]), r])
    e.op("Where", [e.op("Equal", [b, zero]), zero, fixed], n.out)


def mod(e, n):
    _python_mod(e, n, *n.inputs[:2])


def _mod_scalar(reverse):
    def translate(e, n):
        c = e.const(np.asarray(float(n.attr("scalar", 1.0))).astype(n.in_dtypes[0]), hint=n.name + "_scalar")
        _python_mod(e, n, *([c, n.inputs[0]] if reverse else [n.inputs[0], c]))
    return translate


def square(e, n):
    e.op("Mul", [n.inputs[0], n.inputs[0]], n.out)


def rsqrt(e, n):
    e.op("Reciprocal", [e.op("Sqrt", n.inputs[:1])], n.out)


def _one(e, n):
    return e.const(np.asarray(1).astype(n.in_dtypes[0]), hint=n.name + "_one")


def log1p(e, n):
    e.op("Log", [e.op("Add", [n.inputs[0], _one(e, n)])], n.out)


def expm1(e, n):
    e.op("Sub", [e.op("Exp", n.inputs[:1]), _one(e, n)], n.out)


def _log_base(base):
    def translate(e, n):
        c = e.const(np.asarray(np.log(base)).astype(n.in_dtypes[0]), hint=n.name + "_lnb")
        e.op("Div", [e.op("Log", n.inputs[:1]), c], n.out)
    return translate


def round_away(e, n):
    """MXNet's ``round`` rounds halves away from zero (ONNX's Round to even): sign(x) * floor(|x| + 0.5)."""
    x = n.inputs[0]
    half = e.const(np.asarray(0.5).astype(n.in_dtypes[0]), hint=n.name + "_half")
    e.op("Mul", [e.op("Sign", [x]), e.op("Floor", [e.op("Add", [e.op("Abs", [x]), half])])], n.out)


def fix(e, n):
    x = n.inputs[0]
    e.op("Mul", [e.op("Sign", [x]), e.op("Floor", [e.op("Abs", [x])])], n.out)


def hard_sigmoid(e, n):
    e.op("HardSigmoid", n.inputs[:1], n.out, alpha=float(n.attr("alpha", 0.2)), beta=float(n.attr("beta", 0.5)))


def logical_not(e, n):
    e.op("Cast", [e.op("Not", [e.op("Cast", n.inputs[:1], to=_BOOL)])], n.out, to=onnx_dtype(n.out_dtypes[0]))


def clip(e, n):
    dtype = n.in_dtypes[0]
    lo = e.const(np.asarray(float(n.attr("a_min", -np.inf))).astype(dtype), hint=n.name + "_min")
    hi = e.const(np.asarray(float(n.attr("a_max", np.inf))).astype(dtype), hint=n.name + "_max")
    e.op("Clip", [n.inputs[0], lo, hi], n.out)


def cast(e, n):
    e.op("Cast", n.inputs[:1], n.out, to=onnx_dtype(n.out_dtypes[0]))


def amp_multicast(e, n):
    """AMP's casts to the widest of its inputs' types (``cast_narrow``: the narrowest)."""
    for x, out, dt in zip(n.inputs, n.outputs, n.out_dtypes):
        e.op("Cast", [x], out, to=onnx_dtype(dt))


def add_n(e, n):
    e.op("Sum", n.inputs, n.out) if len(n.inputs) > 1 else e.op("Identity", n.inputs, n.out)


def where(e, n):
    cond = e.op("Cast", n.inputs[:1], to=_BOOL)
    e.op("Where", [cond, n.inputs[1], n.inputs[2]], n.out)


def _filled(value):
    def translate(e, n):
        from onnx import numpy_helper

        fill = numpy_helper.from_array(np.asarray([value]).astype(n.out_dtypes[0]))
        e.op("ConstantOfShape", [e.op("Shape", n.inputs[:1])], n.out, value=fill)
    return translate


TABLE = {
    **{mx: _unary(op) for mx, op in _UNARY.items() if op},
    **{mx: _binary(op) for op, names in _BINARY.items() for mx in names},
    **{mx: _binary(op) for op, names in _COMPARE.items() for mx in names},
    **{mx: _logical(op) for op, names in _LOGICAL.items() for mx in names},
    **{mx: _scalar(op, rev) for mx, (op, rev) in _SCALAR.items()},
    "square": square, "rsqrt": rsqrt, "round": round_away, "rint": _unary("Round"), "fix": fix, "trunc": fix,
    "log2": _log_base(2), "log10": _log_base(10), "log1p": log1p, "expm1": expm1,
    "hard_sigmoid": hard_sigmoid, "logical_not": logical_not, "clip": clip, "Cast": cast, "cast": cast,
    "amp_cast": cast, "amp_multicast": amp_multicast, "add_n": add_n, "ElementWiseSum": add_n, "where": where,
    "zeros_like": _filled(0), "ones_like": _filled(1),
    "broadcast_mod": mod, "elemwise_mod": mod, "_mod": mod, "_mod_scalar": _mod_scalar(False),
    "_rmod_scalar": _mod_scalar(True),
}
