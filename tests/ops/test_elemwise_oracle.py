"""Element-wise ops and NDArray arithmetic against MXNet 1.9.1: dtype rules, broadcast vs elemwise, scalars."""

import pytest
from ops_harness import check, inputs, mx_results

pytestmark = pytest.mark.oracle

ARR = inputs(
    1,
    a=((3, 4), "float32"), b=((3, 4), "float32"), c=((1, 4), "float32"), u=((4,), "float32"),
    p=((3, 4), "float32", 0.1, 3.0), q=((2, 3, 5), "float32", -0.9, 0.9), g=((2, 3, 5), "float32", 1.1, 4.0),
    h=((3, 4), "float16"), hp=((3, 4), "float16", 0.1, 3.0), i=((3, 4), "int32"), j=((3, 4), "int32", 1, 7),
    ip=((3, 4), "int32", 0, 50), i8=((2, 3), "int8", -120, 120), u8=((2, 3), "uint8", 0, 250),
    m=((3, 4), "float32", 0, 2), r=((3,), "float32", 0, 2),
)
ARR["m"] = (ARR["m"] > 1).astype("float32")
ARR["r"] = (ARR["r"] > 1).astype("float32")

BINARY = ["add", "sub", "mul", "div", "mod", "power", "maximum", "minimum", "hypot", "equal", "not_equal", "greater",
          "greater_equal", "lesser", "lesser_equal", "logical_and", "logical_or", "logical_xor"]
INT_BINARY = ["add", "sub", "mul", "maximum", "minimum", "equal", "greater", "lesser", "logical_and", "logical_xor"]
UNARY_ANY = ["abs", "sign", "negative", "square", "relu", "sigmoid", "tanh", "sin", "cos", "tan", "arctan", "sinh",
             "cosh", "arcsinh", "exp", "expm1", "floor", "ceil", "round", "rint", "fix", "trunc", "degrees", "radians",
             "softsign", "erf", "logical_not", "cbrt", "identity", "stop_gradient", "BlockGrad", "make_loss",
             "zeros_like", "ones_like", "hard_sigmoid", "smooth_l1", "log_sigmoid", "mish", "no_such_op"]
UNARY_POS = ["sqrt", "rsqrt", "rcbrt", "log", "log10", "log2", "log1p", "reciprocal", "gamma", "gammaln"]
UNARY_UNIT = ["arcsin", "arccos", "arctanh", "erfinv"]

CASES = [
    # operators: broadcasting, dtypes, scalars (cast to the array's dtype), reflected forms
    "a + b", "a - b", "a * b", "a / b", "a % b", "p ** b", "a ** 2", "2 ** a", "-a", "abs(a)", "a + c", "a * u",
    "c - a", "a + 1", "1 + a", "3 - a", "a / 2", "2 / p", "a % 0.7", "5 % p", "a % -0.7",
    "a == b", "a != b", "a < b", "a <= b", "a > b", "a >= b", "a > 0.5", "1 < a", "a == a", "a == 1",
    "a + i", "i + a", "a + h", "a * q",
    "i * 2.5", "2.5 * i", "i / 2", "i / j", "7 / j", "i % 3", "(-i) % 4", "i % j", "i % -3", "7 % j", "i ** 2",
    "2 ** j", "7 - i", "i >= 2.5", "i > 1.9", "i == 2", "i + 1.7", "-i", "abs(i)", "i8 * 100", "-u8", "u8 + 10",
    "h + h", "h * 1.1", "h / 3", "h > 0.5", "h + 1", "i // 2",
    "x = a.copy()\nx += b\nres = x", "x = a.copy()\nx -= 1\nres = x", "x = i.copy()\nx *= 2.5\nres = x",
    "x = a.copy()\nx /= 4\nres = x", "x = a.copy()\nx %= 0.5\nres = x",
    "x = a.copy()\ny = x\nx += 1\nres = y",
    "nd.add(a, b)", "nd.subtract(a, 1)", "nd.multiply(2, a)", "nd.divide(i, 2)", "nd.modulo(a, b)", "nd.power(p, 2)",
    "nd.maximum(a, b)", "nd.maximum(a, 0.5)", "nd.minimum(i, 2.5)", "nd.equal(i, 2)", "nd.not_equal(a, b)",
    "nd.greater(a, 0)", "nd.lesser_equal(a, b)", "nd.logical_and(m, a)", "nd.logical_or(m, 0)", "nd.true_divide(a, 2)",
    "nd.add(1, 2)",
    # elemwise_* want equal shapes; broadcast_* broadcast
    "nd.elemwise_add(a, b)", "nd.elemwise_sub(a, b)", "nd.elemwise_mul(a, b)", "nd.elemwise_div(a, p)",
    "nd.elemwise_add(a, c)", "nd.elemwise_mul(a, u)", "nd.elemwise_add(a, i)", "nd.elemwise_add(i, j)",
    "nd.broadcast_add(a, c)", "nd.broadcast_plus(c, a)", "nd.broadcast_minus(a, u)", "nd.broadcast_add(a, q)",
    "nd.broadcast_add(a, i)", "nd.broadcast_div(i, j)", "nd.broadcast_mod(i, j)", "nd.broadcast_equal(a, c)",
    "nd.broadcast_mul(a, nd.ones((3, 1)))",
] + [f"nd.broadcast_{op}(a, c)" for op in BINARY if op not in ("add", "sub", "mul", "div")] \
  + [f"nd.broadcast_{op}(i, j)" for op in INT_BINARY] \
  + [f"nd.{op}(a)" for op in UNARY_ANY] + [f"nd.{op}(q)" for op in UNARY_UNIT] \
  + [f"nd.{op}(p)" for op in UNARY_POS] + [f"nd.{op}(g)" for op in ("arccosh", "gamma", "gammaln")] \
  + [f"nd.{op}(hp)" for op in ("sqrt", "exp", "log", "sigmoid", "tanh", "relu", "abs", "square")] \
  + ["nd.sigmoid(j)", "nd.tanh(i)"] \
  + [f"nd.{op}(ip)" for op in ("sqrt", "exp", "log", "reciprocal", "rsqrt", "degrees", "square", "abs",
                               "sign", "relu", "round", "floor", "logical_not", "negative", "cbrt")] \
  + [
    "nd.sign(i8)", "nd.abs(i8)", "nd.hard_sigmoid(a, alpha=0.3, beta=0.4)", "nd.smooth_l1(a, scalar=2.0)",
    "nd.clip(a, -0.5, 0.5)", "nd.clip(i, 1.5, 3.5)", "nd.clip(h, -1, 1)", "a.clip(0, 1)",
    "nd.where(m, a, b)", "nd.where(r, a, b)", "nd.where(m, a, i)", "nd.where(c, a, b)", "nd.where(i, a, b)",
    "nd.add_n(a, b, a)", "nd.ElementWiseSum(a, b)", "nd.add_n(a, c)",
    "nd.cast(a, dtype='int32')", "nd.cast(a * 10, dtype='uint8')", "nd.Cast(i, dtype='float16')",
    "a.astype('int32')", "i.astype('float32')", "a.astype('float16')", "a.astype('float32', copy=False) is a",
    "a.abs()", "a.sqrt()", "p.log()", "a.exp()", "a.sigmoid()", "a.relu()", "a.square()", "a.sign()", "a.round()",
    "a.floor()", "p.rsqrt()", "a.tanh()", "p.reciprocal()", "a.zeros_like()", "a.ones_like()",
]
CASES = list(dict.fromkeys(CASES))


@pytest.fixture(scope="module")
def ref(oracle):
    return mx_results(oracle, [(c, c) for c in CASES], ARR)


@pytest.mark.parametrize("code", CASES)
def test_matches_mxnet(ref, code):
    check(ref[code], code, ARR)
