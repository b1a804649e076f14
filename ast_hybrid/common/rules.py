"""The rule catalogue: every diagnostic code ast-hybrid can emit, with its page.

``ast-hybrid rules`` lists them; ``ast-hybrid rule HY001`` prints one page.
Codes are public interface: never renumber them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import RULE_URL

__all__ = ["Rule", "RULES", "get_rule"]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str            # kebab-case, as ruff names rules
    summary: str         # one line: what the rule reports
    what: str = ""       # what it does
    why: str = ""        # why it breaks hybridization / conversion
    example: str = ""    # code that triggers it
    instead: str = ""    # what to write instead
    fix: str = "No automatic fix."  # fix availability and safety
    origin: str = "lint"  # "lint" (static) or "convert" (reported by ast_hybrid.convert)

    @property
    def url(self) -> str:
        return RULE_URL.format(code=self.code)


_RULES = [
    Rule(
        "HY001", "inplace-augmented-assignment", "In-place augmented assignment to a tensor (`x += y`)",
        what="Finds `x op= y` where `x` holds a tensor inside a forward (and the helpers it passes `F` to).",
        why="NDArray's `+=` mutates the array in place; MXNet Symbols have no in-place operators and "
            "raise `NotImplementedForSymbol` at the first hybridized call (MXNet's own "
            "`PoissonNLLLoss(compute_full=True)` does this).  Under JAX arrays are immutable, and code "
            "that relied on the mutation being visible through another name changes meaning.",
        example="def hybrid_forward(self, F, x, y):\n    z = F.relu(x)\n    z += y\n    return z",
        instead="def hybrid_forward(self, F, x, y):\n    z = F.relu(x)\n    z = z + y\n    return z",
        fix="Fix `x = x op (y)`.  Safe when nothing else can see the array: every definition of `x` "
            "reaching the statement is a fresh value (a call, arithmetic, a literal) and no use of it "
            "lets it escape (`y = x`, a container, a non-`F` call, `return`, an attribute, a view "
            "such as `x.reshape()` or `x[a:b]`).  Unsafe when `x` is a parameter (the caller's array "
            "would no longer be modified), a loop/`with` target, an unpacked value or a copy of another "
            "reference."),
    Rule(
        "HY002", "tensor-item-assignment", "Item or slice assignment into a tensor (`x[:] = ...`)",
        what="Finds `x[i] = v`, `x[a:b] = v` (and `x[i] += v`) where `x` is a tensor.",
        why="Symbols do not support `__setitem__` (AttributeError when hybridized); JAX arrays are "
            "immutable.",
        example="def hybrid_forward(self, F, x):\n    x[:, 0] = 0\n    return x",
        instead="def hybrid_forward(self, F, x):\n    mask = F.one_hot(F.zeros_like(x[:, 0]), x.shape[1])\n"
                "    return F.where(mask, F.zeros_like(x), x)  # or F.slice_assign / F.scatter_nd",
    ),
    Rule(
        "HY003", "out-argument", "`out=` argument to an operator",
        what="Finds calls of `F` ops, `mx.nd`/`mx.sym`/`numpy` functions or tensor methods with `out=`.",
        why="`out=` writes into an existing NDArray.  A hybridized Symbol graph ignores it silently "
            "(`mx.sym.relu(s, out=s)` returns a new symbol), and JAX has no output buffers.",
        example="F.relu(x, out=y)",
        instead="y = F.relu(x)",
    ),
    Rule(
        "HY004", "host-synchronisation", "Host synchronisation of a tensor (`.asnumpy()`, `float(x)`, ...)",
        what="Finds `.asnumpy()`, `.asscalar()`, `.item()`, `.tolist()`, `numpy.array/asarray(x)` and "
             "`float/int/bool/complex(x)` of a tensor in a forward.",
        why="These need the tensor's value on the host.  A Symbol or a traced JAX array has no value "
            "(`NotImplementedForSymbol`, `TracerConversionError`); imperatively they block on the device.",
        example="scale = float(x.max())\nreturn x / scale",
        instead="return F.broadcast_div(x, x.max())",
    ),
    Rule(
        "HY005", "wait-in-forward", "`.wait_to_read()` or `waitall()` inside a forward",
        what="Finds `.wait_to_read()` and `mx.nd.waitall()` in a forward.",
        why="Synchronisation belongs to the caller; Symbols raise `NotImplementedForSymbol`, and "
            "there is nothing to wait for while tracing.",
        example="x.wait_to_read()",
        instead="(remove it; call `mx.nd.waitall()` or `.block_until_ready()` outside the model)",
    ),
    Rule(
        "HY006", "print-tensor", "`print` of a tensor inside a forward",
        what="Finds `print(...)` with a tensor argument (also inside an f-string).",
        why="Target mxnet: a hybridized forward runs once, while tracing, so it prints `<Symbol ...>` "
            "once and never again (a warning).  Target jax: a note; ast-hybrid turns it into a "
            "run-time print of the values.",
        example="print(x)",
        instead="print the output of the non-hybridized block, or use `jax.debug.print` under ast-hybrid",
    ),
    Rule(
        "HY007", "op-outside-f", "Operator called through `mx.nd`, `nd`, `mx.sym` or `numpy` instead of `F`",
        what="Finds calls of `mx.nd.*`/`nd.*` and `mx.sym.*` functions in a forward, and of numpy "
             "functions on tensors.  Imports are followed (`from mxnet import ndarray as nd`).",
        why="`F` is `mx.nd` when the block runs imperatively and `mx.sym` when hybridized: a hard-wired "
            "namespace fails in the other mode (`Argument data must have NDArray type, but got "
            "<Symbol>`).  numpy cannot take Symbols or traced arrays.",
        example="def hybrid_forward(self, F, x):\n    return nd.relu(x)",
        instead="def hybrid_forward(self, F, x):\n    return F.relu(x)",
        fix="Unsafe fix `nd.op(...)` -> `F.op(...)` when the function has an `F` parameter: `F` may "
            "lack an op of the same name (e.g. `nd` helpers that are not operators).",
    ),
    Rule(
        "HY008", "tensor-shape-access", "`.shape`, `.ndim`, `.size`, `.context` or `len()` of a tensor",
        what="Target mxnet only: finds `.shape`, `.ndim`, `.size`, `.context`, `.ctx`, `.dtype`, `.T` "
             "and `len()` of a tensor in a `hybrid_forward`, unless guarded by `if F is nd:` (also "
             "`F is mx.nd`, `isinstance(x, nd.NDArray)`, or the `else` of `F is sym`).",
        why="MXNet 1.x Symbols have no shape, context or dtype (AttributeError) and `len(sym)` is "
            "silently 1.  Not reported for target jax: shapes of traced arrays are static Python ints "
            "there.",
        example="n = x.shape[0]\nreturn F.reshape(x, (n, -1))",
        instead="return F.reshape(x, (0, -1))   # or F.shape_array(x), *_like ops",
    ),
    Rule(
        "HY009", "tensor-slicing", "Slicing a tensor with `[]` (target mxnet)",
        what="Target mxnet only: finds `x[a:b]`, `x[:, i]` and other non-integer subscripts of a tensor "
             "in a `hybrid_forward`, outside `F is nd` guards.",
        why="MXNet 1.9.1 Symbols only support an integer index (the i-th output): `sym[:2]` raises "
            "IndexError and `sym[0, :]` TypeError.  Fine under jax.",
        example="head = x[:, :2]",
        instead="head = F.slice_axis(x, axis=1, begin=0, end=2)",
    ),
    Rule(
        "HY010", "tensor-control-flow", "Python control flow on a tensor value",
        what="Finds truth tests of tensors: `if`/`while` tests, `x if c else y`, `and`/`or`/`not`, "
             "`assert`, comprehension conditions and chained comparisons (`a < b < c`).",
        why="A Symbol has no truth value (`NotImplementedForSymbol`) and a traced JAX array neither.  "
            "Target jax: a note, since ast-hybrid converts it to `lax.cond`/`while_loop`.",
        example="if x.sum() > 0:\n    x = x * 2",
        instead="x = F.where(x.sum() > 0, x * 2, x)   # or F.contrib.cond (mxnet)",
    ),
    Rule(
        "HY011", "tensor-iteration", "Iteration or integer indexing of a tensor",
        what="Finds `for r in x`, comprehensions over `x`, `a, b = x` and `x[0]`/`x[i]` (an int index) "
             "where `x` is certainly a tensor (not a possible tuple such as a child block's output or "
             "`F.split`'s result).",
        why="Silently wrong after `hybridize()`: a Symbol iterates as a single element and `sym[0]` "
            "selects the first *output*, not the first row.  Target jax: a note, converted to "
            "`lax.scan`/indexing.",
        example="for row in x:\n    out.append(F.relu(row))",
        instead="rows = F.split(x, num_outputs=n, axis=0, squeeze_axis=True)   # or F.contrib.foreach",
    ),
    Rule(
        "HY012", "self-attribute-assignment", "Assignment to `self.<attr>` inside a forward",
        what="Finds assignments (also augmented, item and `setattr`) to the block's attributes in a forward.",
        why="A hybridized forward runs once, while tracing: the attribute is set once, to a Symbol "
            "or tracer, and never updated again.",
        example="self.last = out",
        instead="return the value (`return out, extra`), or keep it in a Parameter/auxiliary state",
    ),
    Rule(
        "HY020", "syntax-error", "The file cannot be read or parsed",
        what="Reports a file that cannot be read, decoded (UTF-8 or a PEP 263 coding) or parsed, at "
             "the error's position.",
        why="Nothing in it can be checked; the other files are still linted.",
        example="def hybrid_forward(self, F, x:\n    return x",
        instead="fix the syntax error",
    ),
    Rule("HY030", "branch-only-assignment",
         "Variable assigned in only one branch of a traced `if` and used after it", origin="convert",
         what="Reported by conversion: a traced `if` must bind the same names in both branches.",
         why="`lax.cond` returns one value per name from both branches.",
         instead="assign the name before the `if` or in both branches"),
    Rule("HY031", "loop-carried-change",
         "Loop-carried variable changes shape or dtype across iterations", origin="convert",
         what="Reported by conversion: a `while`/`for` state changes shape or dtype between iterations.",
         why="`lax.while_loop`/`scan` need a fixed carry type.",
         instead="pad to a fixed shape, or cast to one dtype before the loop"),
    Rule("HY032", "unsupported-in-traced-control-flow",
         "Construct that cannot live inside traced control flow", origin="convert",
         what="Reported by conversion when an `if`/`while`/`for` on a traced value contains `try`, `with`, "
              "`del`, `raise`, an assignment to a `global`/`nonlocal` name, or an assignment to an attribute "
              "or item of an object made outside it (`self.cache = h`, `d[k] = v`).",
         why="The branches and the loop body become functions that `lax` traces once each, whatever the "
             "value: both branches of a traced `if` run while tracing, so an exception would always be raised, "
             "a side effect on an outside object would always happen, and a `try` cannot catch anything that "
             "happens at run time.",
         example="def hybrid_forward(self, F, x):\n    if x.sum() > 0:\n        self.cache = x\n    return x",
         instead="return the value (or keep it in a Parameter); select with `F.where`; validate inputs "
                 "outside the traced branch"),
    Rule("HY033", "branch-structure-mismatch",
         "Branches of a traced `if` produce different structures", origin="convert",
         what="Reported by conversion: the two branches give values of different pytree structure, "
              "shape or dtype.",
         why="`lax.cond` requires both branches to return the same structure.",
         instead="make both branches return the same kind of value"),
    Rule("HY034", "unconvertible-function",
         "A function that cannot be converted at all", origin="convert",
         what="Reported by `ast_hybrid.convert`/`jit` for a function with no Python source (defined at an "
              "interactive prompt or by `exec`, a builtin or C function), a generator, an `async` function, "
              "a class, or a lambda whose source cannot be isolated.",
         why="Conversion rewrites the function's source; without it, or for code that does not return a "
             "value when called, there is nothing to rewrite into one compiled program.",
         example="gen = ast_hybrid.jit(lambda_from_repl)   # or a function that uses `yield`",
         instead="define the function with `def` in a .py file; return a list or a stacked array instead of "
                 "yielding; or mark it `@ast_hybrid.do_not_convert` so it is called as it is"),
]

RULES: dict[str, Rule] = {r.code: r for r in _RULES}


def get_rule(code: str) -> Rule | None:
    return RULES.get(code.upper())
