"""The rule catalogue: every diagnostic code ast-hybrid can emit, with everything about it.

One :class:`Rule` per code holds its name, summary and page (what, why,
example, instead, fix safety), which fixes it can carry, its severity per
target (``None``: not reported on that target), and the :class:`Message`
templates its producers format: the linter's checks, the conversion's
runtime and converter, the CLI.  ``ast-hybrid rules`` lists them;
``ast-hybrid rule HY001`` prints one page; the renderers read names and
pages from here.  Codes are public interface: never renumber them.
A :class:`Message` may name the targets it is reported on, where a rule's
ways of being found differ (HY007: numpy on both, ``mx.nd`` on mxnet only).

Over 600 lines: the catalogue is one table, a page of text per rule (the
docs' rule pages are generated from it); split, a rule's page would live
apart from its severities and messages.

>>> RULES["HY006"].severity("jax").value, RULES["HY006"].severity("mxnet").value
('note', 'warning')
>>> RULES["HY008"].severity("jax") is None
True
>>> message("HY001", op="+", name="h")
('in-place `+=` on tensor `h`', 'write `h = h + ...`: MXNet Symbols have no in-place operators')
>>> RULES["HY999"].internal, RULES["HY999"].jax.value
(True, 'error')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import RULE_URL, Severity

__all__ = ["Rule", "Message", "RULES", "TARGETS", "get_rule", "message"]

#: The targets a rule has a severity for: ``jax`` (what ast-hybrid's conversion
#: rejects) and ``mxnet`` (what breaks MXNet 1.x ``hybridize()``).
TARGETS = ("jax", "mxnet")

ERROR, WARNING, NOTE = Severity.ERROR, Severity.WARNING, Severity.NOTE


@dataclass(frozen=True)
class Message:
    """One way a rule reports: :meth:`str.format` templates of the message and its help line."""

    text: str
    help: str | None = None  # None: the diagnostic has no help line
    #: the targets this way of being found is reported on (None: every target the rule has a severity for)
    targets: tuple[str, ...] | None = None

    def format(self, **values) -> tuple[str, str | None]:
        return self.text.format(**values), None if self.help is None else self.help.format(**values)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str            # kebab-case, as ruff names rules
    summary: str         # one line: what the rule reports
    what: str = ""       # what it does
    why: str = ""        # why it breaks hybridization / conversion
    example: str = ""    # code that triggers it
    instead: str = ""    # what to write instead
    fix: str = "No automatic fix."  # fix availability and safety (the page's text)
    origin: str = "lint"  # "lint" (static), "convert" (by ast_hybrid.convert), "internal" (either)
    #: severity per target; None: not reported on that target
    jax: Severity | None = ERROR
    mxnet: Severity | None = ERROR
    #: how its producers word it: variant -> templates (one variant per way of being found)
    messages: dict[str, Message] = field(default_factory=dict, compare=False)
    #: the applicabilities its fixes can have ("safe", "unsafe"); empty: no automatic fix
    fixes: tuple[str, ...] = ()
    #: the template of its fix's title
    fix_title: str | None = None
    #: select/ignore can turn it off (not a file that cannot be read, not a failure of the tool)
    selectable: bool = True
    #: a failure of ast-hybrid itself, not a finding about the code: the run exits 2
    internal: bool = False

    @property
    def url(self) -> str:
        return RULE_URL.format(code=self.code)

    def severity(self, target: str) -> Severity | None:
        """The severity on ``target`` ("jax" or "mxnet"); None when not reported there."""
        by_target = {"jax": self.jax, "mxnet": self.mxnet}
        if target not in by_target:
            raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
        return by_target[target]

    def message(self, variant: str = "default", **values) -> tuple[str, str | None]:
        """``(message, help)`` of ``variant``, its templates formatted with ``values``."""
        try:
            template = self.messages[variant]
        except KeyError:
            raise KeyError(f"{self.code} has no message {variant!r} (it has: "
                           f"{', '.join(self.messages) or 'none'})") from None
        return template.format(**values)

    def fix_message(self, **values) -> str:
        """The title of its fix (:attr:`fix_title` formatted with ``values``)."""
        if self.fix_title is None:
            raise ValueError(f"{self.code} has no automatic fix")
        return self.fix_title.format(**values)


#: HY034's help where there is nothing better to write instead
_AS_IT_IS = "call it as it is (it is not converted), or mark it `@ast_hybrid.do_not_convert`"

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
            "reference.",
        fixes=("safe", "unsafe"), fix_title="Replace with `{name} = {name} {op} ...`",
        messages={"default": Message(
            "in-place `{op}=` on tensor `{name}`",
            "write `{name} = {name} {op} ...`: MXNet Symbols have no in-place operators")}),
    Rule(
        "HY002", "tensor-item-assignment", "Item or slice assignment into a tensor (`x[:] = ...`)",
        what="Finds `x[i] = v`, `x[a:b] = v` (and `x[i] += v`) where `x` is a tensor.",
        why="Symbols do not support `__setitem__` (AttributeError when hybridized); JAX arrays are "
            "immutable.",
        example="def hybrid_forward(self, F, x):\n    x[:, 0] = 0\n    return x",
        instead="def hybrid_forward(self, F, x):\n    mask = F.one_hot(F.zeros_like(x[:, 0]), x.shape[1])\n"
                "    return F.where(mask, F.zeros_like(x), x)  # or F.slice_assign / F.scatter_nd",
        messages={"default": Message(
            "item or slice assignment into a tensor ({what})",
            "build a new tensor instead: `F.where(mask, value, x)`, `F.concat`, "
            "or `F.slice_assign`/`F.scatter_nd`")},
    ),
    Rule(
        "HY003", "out-argument", "`out=` argument to an operator",
        what="Finds calls of `F` ops, `mx.nd`/`mx.sym`/`numpy` functions or tensor methods with `out=`.",
        why="`out=` writes into an existing NDArray.  A hybridized Symbol graph ignores it silently "
            "(`mx.sym.relu(s, out=s)` returns a new symbol), and JAX has no output buffers.",
        example="F.relu(x, out=y)",
        instead="y = F.relu(x)",
        messages={"default": Message(
            "`out=` argument to an operator",
            "assign the result instead: `y = F.op(...)`; hybridized code cannot "
            "write into an existing array")},
    ),
    Rule(
        "HY004", "host-synchronisation", "Host synchronisation of a tensor (`.asnumpy()`, `float(x)`, ...)",
        what="Finds `.asnumpy()`, `.asscalar()`, `.item()`, `.tolist()`, `numpy.array/asarray(x)` and "
             "`float/int/bool/complex(x)` of a tensor in a forward.",
        why="These need the tensor's value on the host.  A Symbol or a traced JAX array has no value "
            "(`NotImplementedForSymbol`, `TracerConversionError`); imperatively they block on the device.",
        example="scale = float(x.max())\nreturn x / scale",
        instead="return F.broadcast_div(x, x.max())",
        messages={
            "asnumpy": Message("`.{name}()` copies a tensor to the host",
                               "keep the computation in `F` ops; a hybridized forward has no values to copy"),
            "item": Message("`.{name}()` copies a tensor to the host",
                            "keep the computation in `F` ops"),
            "builtin": Message("`{name}()` of a tensor forces its value to the host",
                               "keep it a tensor (`x.astype(...)`), or compute the value from static shapes"),
            "numpy": Message("`numpy.{name}` of a tensor copies it to the host",
                             "keep the computation in `F` ops"),
        },
    ),
    Rule(
        "HY005", "wait-in-forward", "`.wait_to_read()` or `waitall()` inside a forward",
        what="Finds `.wait_to_read()` and `mx.nd.waitall()` in a forward.",
        why="Synchronisation belongs to the caller; Symbols raise `NotImplementedForSymbol`, and "
            "there is nothing to wait for while tracing.",
        example="x.wait_to_read()",
        instead="(remove it; call `mx.nd.waitall()` or `.block_until_ready()` outside the model)",
        messages={
            "wait_to_read": Message("`.wait_to_read()` inside a forward",
                                    "remove it: there is nothing to wait for while tracing"),
            "waitall": Message("`waitall()` inside a forward",
                               "remove it: there is nothing to wait for while tracing"),
        },
    ),
    Rule(
        "HY006", "print-tensor", "`print` of a tensor inside a forward",
        what="Finds `print(...)` with a tensor argument (also inside an f-string).",
        why="Target mxnet: a hybridized forward runs once, while tracing, so it prints `<Symbol ...>` "
            "once and never again (a warning).  Target jax: a note; ast-hybrid turns it into a "
            "run-time print of the values.",
        example="print(x)",
        instead="print the output of the non-hybridized block, or use `jax.debug.print` under ast-hybrid",
        jax=NOTE, mxnet=WARNING,
        messages={"default": Message(
            "`print` of a tensor inside a forward",
            "prints `<Symbol ...>` once while tracing under MXNet; use a debugger "
            "on the non-hybridized block, or `jax.debug.print` under ast-hybrid")},
    ),
    Rule(
        "HY007", "op-outside-f", "Operator called through `mx.nd`, `nd`, `mx.sym` or `numpy` instead of `F`",
        what="Finds calls of `mx.nd.*`/`nd.*` and `mx.sym.*` functions in a forward (target mxnet; `mx.sym` "
             "ones not under `if F is mx.sym:`), of `mx.np.*`/`mx.npx.*` functions on tensors (target mxnet), "
             "and of numpy functions on tensors (both targets), except those numpy hands to the tensor's own "
             "method (`np.swapaxes(x, 0, 1)`, `np.sum(x, axis=1)`, `np.transpose(x, axes)`).  Imports are "
             "followed (`from mxnet import ndarray as nd`).",
        why="`F` is `mx.nd` when the block runs imperatively and `mx.sym` when hybridized: a hard-wired "
            "namespace fails in the other mode (`Argument data must have NDArray type, but got "
            "<Symbol>`).  numpy cannot take Symbols or traced arrays.  ast-hybrid runs `mx.nd` and `mx.sym` "
            "ops on the traced arrays of a hybridized forward, so on target jax only numpy is reported.",
        example="def hybrid_forward(self, F, x):\n    return nd.relu(x)",
        instead="def hybrid_forward(self, F, x):\n    return F.relu(x)",
        fix="Unsafe fix `nd.op(...)` -> `F.op(...)` when the function has an `F` parameter: `F` may "
            "lack an op of the same name (e.g. `nd` helpers that are not operators).",
        fixes=("unsafe",), fix_title="Call it through `{f}`",
        messages={
            "nd": Message("operator `{name}` called through `mx.nd` instead of `F`",
                          "call `F.{name}(...)`: `mx.nd` ops fail on Symbols once hybridized", ("mxnet",)),
            "sym": Message("operator `{name}` called through `mx.sym` instead of `F`",
                           "call `F.{name}(...)`: `mx.sym` ops fail on NDArrays when not hybridized", ("mxnet",)),
            "mxnp": Message("operator `{name}` called through `mx.{ns}` instead of `F`",
                            "call `F.{ns}.{name}(...)`: `mx.{ns}` ops take MXNet's numpy arrays, not the Symbols of a "
                            "hybridized forward", ("mxnet",)),
            "numpy": Message("numpy function `{name}` applied to a tensor",
                             "use the `F` operator (`F.{name}` or its MXNet name)"),
        },
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
        jax=None,
        messages={
            "len": Message("`len()` of a tensor",
                           "a hybridized Symbol has no length (len() is silently 1); pass sizes in as "
                           "Python values or use shape-free ops (`F.shape_array`, `*_like` ops)"),
            "transpose": Message("`.T` of a tensor", "MXNet Symbols have no `.T`; use `F.transpose(x)`"),
            "attribute": Message("`.{attr}` of a tensor",
                                 "MXNet Symbols have no shape/context; guard it with `if F is nd:`, pass "
                                 "sizes in as Python values, or use `*_like` ops and `F.shape_array`"),
        },
    ),
    Rule(
        "HY009", "tensor-slicing", "Slicing a tensor with `[]` (target mxnet)",
        what="Target mxnet only: finds `x[a:b]`, `x[:, i]` and other non-integer subscripts of a tensor "
             "in a `hybrid_forward`, outside `F is nd` guards.",
        why="MXNet 1.9.1 Symbols only support an integer index (the i-th output): `sym[:2]` raises "
            "IndexError and `sym[0, :]` TypeError.  Fine under jax.",
        example="head = x[:, :2]",
        instead="head = F.slice_axis(x, axis=1, begin=0, end=2)",
        jax=None,
        messages={"default": Message(
            "slicing a tensor with `[]` ({what})",
            "MXNet 1.x Symbols cannot be sliced with `[]`; use `F.slice`, `F.slice_axis` "
            "or `F.slice_like`")},
    ),
    Rule(
        "HY010", "tensor-control-flow", "Python control flow on a tensor value",
        what="Finds truth tests of tensors: `if`/`while` tests, `x if c else y`, `and`/`or`/`not`, "
             "`assert`, comprehension conditions and chained comparisons (`a < b < c`).",
        why="A Symbol has no truth value (`NotImplementedForSymbol`) and a traced JAX array neither.  "
            "Target jax: a note, since ast-hybrid converts it to `lax.cond`/`while_loop`.",
        example="if x.sum() > 0:\n    x = x * 2",
        instead="x = F.where(x.sum() > 0, x * 2, x)   # or F.contrib.cond (mxnet)",
        jax=NOTE,
        messages={
            "truth": Message("Python truth test of a tensor ({what})",
                             "use `F.where`/`F.contrib.cond` (mxnet) or let ast-hybrid convert it "
                             "to `lax.cond`/`while_loop` (jax)"),
            "chained": Message("chained comparison of tensors takes the truth value of the first one",
                               "compare pairwise and combine with `F.logical_and`"),
        },
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
        jax=NOTE,
        messages={
            "iteration": Message("iteration over a tensor ({what})",
                                 "a hybridized MXNet Symbol iterates as one element; use `F.split(x, "
                                 "num_outputs=n, axis=0, squeeze_axis=True)`, `F.contrib.foreach`, or an "
                                 "index loop"),
            "index": Message("integer indexing of a tensor ({what})",
                             "a Symbol's `[i]` selects its i-th *output*, silently; use "
                             "`F.slice_axis(x, axis=0, begin=i, end=i + 1).squeeze(axis=0)` or `F.take`"),
            "unpacking": Message("unpacking a tensor into names iterates over it",
                                 "use `F.split(x, num_outputs=n, axis=0, squeeze_axis=True)`"),
        },
    ),
    Rule(
        "HY012", "self-attribute-assignment", "State kept on `self` across calls of a forward",
        what="Finds assignments (also augmented, item and `setattr`) in a forward of a value computed from "
             "the inputs (a tensor, or from one) to an attribute of the block that a later call reads "
             "back (some method reads it before setting it: a cached mask, the previous output), "
             "and `self.n += ...` that the forward computes with (a step counter, an annealed weight: a new "
             "value every call; a counter used only in op names is not reported), and `self.out.append(v)` "
             "(`extend`, `insert`) of such a value into a list a later call reads back (op by op it grows every "
             "call).  A method the class itself never calls counts as a later call, and `self.m(...)` is "
             "followed into `m`.  A constant, a scratch value the same call sets and then reads, a value the "
             "same call stores again before it returns (only the last one reaches a later call), and "
             "`self.n += 1` inside its own `if self.n == 0:` (a first-call guard) are not reported.",
        why="A hybridized forward runs once, while tracing: the attribute is set once, to a Symbol "
            "or tracer, and never updated again; the next call reads that stale value.",
        example="prev = self._prev_output\n...\nself._prev_output = out",
        instead="return the value (`return out, extra`), or keep it in a Parameter/auxiliary state",
        messages={
            "assignment": Message("`self.{attr}` keeps a value computed from the inputs, read back by a later call",
                                  "a hybridized forward runs once while tracing, so this state is set once; "
                                  "return the value, or keep state in a Parameter/aux state"),
            "update": Message("`self.{attr}` is updated on every call (a counter, an annealed value)",
                              "a hybridized forward runs once while tracing, so it is updated once and later "
                              "calls reuse the traced value; compute it outside the forward and pass it in"),
            "setattr": Message("`setattr` on the block inside a forward",
                               "a hybridized forward runs once while tracing; return the value instead"),
            "append": Message("`self.{attr}.{method}(...)` keeps values computed from the inputs in a list the "
                              "block keeps across calls",
                              "op by op the list grows on every call, hybridized it is filled once while "
                              "tracing; build a local list (`out = []`) and return it"),
        },
    ),
    Rule(
        "HY013", "op-missing-in-sym", "`F.<name>` that `mx.nd` has and `mx.sym` lacks (target mxnet)",
        what="Target mxnet only: finds `F.<name>` in a `hybrid_forward` (and the helpers it passes `F` to), "
             "outside `F is nd` guards, where MXNet 1.9.1 has `mx.nd.<name>` but no `mx.sym.<name>`: "
             "`F.array`, `F.add`, `F.greater`, `F.concatenate`, `F.contrib.isnan`, `F.NDArray`, ... "
             "The list is MXNet's own (`ast_hybrid/linter/nd_only.py`, generated from MXNet 1.9.1 by "
             "`tests/lint/nd_only_oracle.py`).",
        why="`F` is `mx.nd` when the block runs imperatively and `mx.sym` once it is hybridized: the "
            "block works until `hybridize()`, which then fails with `AttributeError: module "
            "'mxnet.symbol' has no attribute 'array'`.  Fine under ast-hybrid, where `F` is `nd` in both "
            "modes.",
        example="def hybrid_forward(self, F, x):\n    return x + F.array([1.0, 2.0])",
        instead="def __init__(self, **kwargs):\n    super().__init__(**kwargs)\n"
                "    self.offset = self.params.get_constant('offset', [1.0, 2.0])\n\n"
                "def hybrid_forward(self, F, x, offset):\n    return F.broadcast_add(x, offset)",
        jax=None,
        messages={"default": Message(
            "`F.{name}` exists in `mx.nd` but not in `mx.sym`: `hybridize()` fails on it",
            "{instead}")},
    ),
    Rule(
        "HY014", "function-in-hybrid-forward", "An `autograd.Function` called in a `hybrid_forward` "
        "(target mxnet)",
        what="Target mxnet only: finds the instantiation of an `mx.autograd.Function` subclass of the same "
             "file (custom gradients: gradient reversal, straight-through estimators) in a "
             "`hybrid_forward` or a helper it passes `F` to, outside `F is nd` guards.",
        why="MXNet 1.9.1 runs an `autograd.Function`'s custom backward only for NDArrays recorded op by op.  "
            "`hybridize()` passes Symbols to it: when the first hybridized call is recorded "
            "(`autograd.record()`), MXNet fails (`ndim cannot be less than -1`, or a crash of the "
            "process); when it is not (a predict call first), its `forward` is traced as ordinary Symbol "
            "ops and its `backward` dropped, so the gradient is silently the forward's (a gradient "
            "reversal does not reverse: `[2, 2]` where the block not hybridized gives `[-2, -2]`).  A "
            "forward with NDArray-only code (`x.copy()`) fails with `NotImplementedForSymbol`.  Fine "
            "under ast-hybrid, which traces both forward and backward into the compiled program.",
        example="class GradReverse(mx.autograd.Function):\n    def forward(self, x):\n        return x * 1\n"
                "    def backward(self, dy):\n        return -dy\n\n"
                "def hybrid_forward(self, F, x):\n    return GradReverse()(x)",
        instead="# a custom operator hybridizes: CustomOp + CustomOpProp, registered, called with F.Custom\n"
                "@mx.operator.register('grad_reverse')\nclass GradReverseProp(mx.operator.CustomOpProp):\n"
                "    def create_operator(self, ctx, shapes, dtypes):\n        return GradReverseOp()\n\n"
                "def hybrid_forward(self, F, x):\n    return F.Custom(x, op_type='grad_reverse')",
        jax=None,
        messages={"default": Message(
            "`{name}` is an `autograd.Function`: a hybridized MXNet block drops its backward",
            "`hybridize()` gives it Symbols: MXNet fails, or traces its forward and ignores its backward "
            "(the gradient is silently the forward's); write it as a custom operator "
            "(`mx.operator.CustomOp` + `CustomOpProp`, called as `F.Custom(x, op_type=...)`), or call it "
            "under `if F is nd:` in a block that is not hybridized")},
    ),
    Rule(
        "HY015", "imperative-only-path", "A path the author marked imperative-only, reported once",
        what="Collapses the findings on a path that only runs imperatively into one note at its guard, "
             "listing them: after `if self.hybridizable: return ...` (or the `else` of `if self.hybridizable:`, "
             "the body of `if not self.hybridizable:`; any flag whose name says hybridizable), a flag the "
             "constructor ties to it (`assert use_nms or not hybridizable`: the path where `self.use_nms` "
             "is False), and `if F is nd:` / `isinstance(x, nd.NDArray)` guards.",
        why="Model zoos keep NumPy post-processing behind their own flag: the block hybridizes in its "
            "default configuration, and the guarded path fails under `hybridize()` only when the user "
            "builds it with the flag off.  One finding per construct there (dozens in one file) says the "
            "model cannot be hybridized when it can; one note says which configuration cannot, and lists "
            "what would fail (as related locations in JSON, SARIF and the editor).",
        example="def hybrid_forward(self, F, x):\n    out = self.body(x)\n    if self.hybridizable:\n"
                "        return out\n    return [o.asnumpy() for o in out]",
        instead="# nothing to change where the flag's default hybridizes; hybridize() only blocks built\n"
                "# with hybridizable=True, or move the host code out of the forward",
        jax=NOTE, mxnet=NOTE,
        messages={
            "flag": Message(
                "imperative-only path when {condition}: {n} construct{s} here would fail under hybridize()",
                "the block hybridizes as long as {on}; built otherwise, call it without hybridize() "
                "(the constructs are listed below)"),
            "nd": Message(
                "imperative-only path (only when {condition}): {n} construct{s} here would fail under "
                "hybridize()",
                "it never runs hybridized, where F is mx.sym (the constructs are listed below)")},
    ),
    Rule(
        "HY016", "positional-reshape", "`x.reshape(a, b, ...)` with the shape as separate arguments (target mxnet)",
        what="Target mxnet only: finds `.reshape()` of a tensor called with two or more positional arguments "
             "where the first is not a tuple or list (`x.reshape(-1, n)`, `x.reshape(b, c, h, w)`), in a "
             "forward or a helper it passes `F` to, outside `F is nd` guards.",
        why="NDArray's `reshape(*shape)` takes the shape as separate arguments; a Symbol's `reshape` takes "
            "its operator's parameters in order (`shape`, `reverse`), so `x.reshape(-1, n)` passes `reverse=n`: "
            "once hybridized MXNet fails (`Invalid Parameter format for reverse expect boolean but "
            "value='n'`), or, with `n` 0 or 1, silently gives another shape: `x.reshape(-1, 1)` is `(6,)` where "
            "NDArray's is `(6, 1)` (oracle).  Fine under ast-hybrid, which gives tensors NDArray's reshape.",
        example="def hybrid_forward(self, F, x):\n    return x.reshape(-1, 4)",
        instead="def hybrid_forward(self, F, x):\n    return x.reshape((-1, 4))",
        fix="Safe fix: the arguments put into one tuple, `x.reshape((a, b, ...))`, which NDArray and Symbol "
            "both read as the shape.",
        fixes=("safe",), fix_title="Pass the shape as one tuple",
        jax=None,
        messages={"default": Message(
            "`reshape` given the shape as {n} separate arguments: a Symbol reads the second as `reverse`",
            "pass one tuple, `.reshape(({args}))`: NDArray and Symbol both take it as the shape")},
    ),
    Rule(
        "HY017", "implicit-broadcast", "An operator between tensors whose shapes differ by construction (target mxnet)",
        what="Target mxnet only: finds `+ - * / % **` and comparisons in a forward (or a helper it passes `F` to) "
             "between a tensor and a reduction of an expression that mentions it, taken over every axis "
             "(`F.sum(x)`, `x.mean()`) or with `keepdims=True` (`x - x.max(axis=1, keepdims=True)`, "
             "`x / F.sum(F.ones_like(x))`), or between two `expand_dims` on different axes (an outer product); "
             "an operand may be a name bound once to such an expression.  Outside `F is nd` guards.",
        why="NDArray's operators broadcast; a Symbol's `+`, `-`, `*`, `/`... are elementwise (`_plus`, `_div`), "
            "so the first hybridized call fails in shape inference (`Check failed: ... elemwise_op_common`, "
            "oracle).  Fine under ast-hybrid, which broadcasts as NDArray does.",
        example="def hybrid_forward(self, F, x):\n    return x - x.max(axis=1, keepdims=True)",
        instead="def hybrid_forward(self, F, x):\n    return F.broadcast_sub(x, x.max(axis=1, keepdims=True))",
        fix="Safe fix: `F.broadcast_<op>(a, b)` (`broadcast_add`, `broadcast_sub`, `broadcast_mul`, "
            "`broadcast_div`, `broadcast_mod`, `broadcast_power`, `broadcast_equal`, `broadcast_lesser`...), which "
            "NDArray computes as its operator does, when the function has an `F` parameter.",
        fixes=("safe",), fix_title="Call `{f}.{f_op}(...)`",
        jax=None,
        messages={
            "reduction": Message(
                "`{op}` between `{of}` and a reduction of it: a Symbol's `{op}` does not broadcast",
                "call `F.{f_op}(a, b)`: NDArray's `{op}` broadcasts, a Symbol's fails once hybridized"),
            "outer": Message(
                "`{op}` between `expand_dims` on two different axes: a Symbol's `{op}` does not broadcast",
                "call `F.{f_op}(a, b)`: NDArray's `{op}` broadcasts, a Symbol's fails once hybridized")},
    ),
    Rule(
        "HY020", "syntax-error", "The file cannot be read or parsed",
        what="Reports a file that cannot be read, decoded (UTF-8 or a PEP 263 coding) or parsed, at "
             "the error's position.",
        why="Nothing in it can be checked; the other files are still linted.",
        example="def hybrid_forward(self, F, x:\n    return x",
        instead="fix the syntax error",
        selectable=False,
        messages={
            "syntax": Message("{reason}", "fix the syntax error; the other files are still linted"),
            "unreadable": Message("{reason}", "ast-hybrid reads Python source files (UTF-8 or a PEP 263 "
                                              "coding); the other files are still linted"),
            "too-deep": Message("cannot analyse: nesting too deep ({error})",
                                "split the deeply nested expression"),
            "missing-path": Message("path does not exist", "check the path; the other paths are still linted"),
            "convert-cli": Message("{reason}"),   # `ast-hybrid convert FILE`: the file's error alone
        },
    ),
    Rule("HY030", "branch-only-assignment",
         "Variable assigned in only one branch of a traced `if` and used after it", origin="convert",
         what="Reported by conversion: a traced `if` must bind the same names in both branches; likewise a "
              "variable first assigned inside a traced loop (which may run zero times) and used after it, "
              "and a `:=` in an operand of `and`/`or` or a branch of `a if c else b` that a traced value "
              "decides whether to evaluate.",
         why="`lax.cond` returns one value per name from both branches.",
         instead="assign the name before the `if` or in both branches",
         mxnet=None,
         messages={"default": Message(
             "`{name}` is assigned in the `{where}` branch of an `if` on a traced value "
             "but not in the `{other}` branch, and it is used after the `if`",
             "assign `{name}` before the `if` or in both branches"),
             "loop": Message(
                 "`{name}` is first assigned inside {where} and used after it, but how many times the loop "
                 "runs depends on a traced value: if it runs zero times, Python leaves `{name}` unassigned "
                 "(UnboundLocalError), and a compiled loop has no value to give it",
                 "give `{name}` a value before the loop (`{name} = 0`, or an array of its shape and dtype)"),
             "walrus": Message(
                 "`{name} := ...` is in {part}, which runs only when {when}, and that depends on a traced "
                 "value: both run while tracing, so `{name}` would be assigned whatever the value",
                 "assign `{name}` in a statement before the expression, or move the `:=` into the first operand "
                 "(or the condition)"),
         }),
    Rule("HY031", "loop-carried-change",
         "Loop-carried variable changes shape or dtype across iterations", origin="convert",
         what="Reported by conversion: a `while`/`for` state changes shape or dtype between iterations.",
         why="`lax.while_loop`/`scan` need a fixed carry type.",
         instead="pad to a fixed shape, or cast to one dtype before the loop",
         mxnet=None,
         messages={"default": Message(
             "loop variable `{name}` changes from {before} to {after} across iterations "
             "of a loop on a traced value",
             "give `{name}` its final shape and dtype before the loop (pad, or cast with .astype)")}),
    Rule("HY032", "unsupported-in-traced-control-flow",
         "Construct that cannot live inside traced control flow", origin="convert",
         what="Reported by conversion when an `if`/`while`/`for` on a traced value contains `try`, `with`, "
              "`del`, `raise`, an assignment to a `global`/`nonlocal` name, an assignment to an attribute "
              "or item that cannot be carried as the statement's state (a key that is an expression or a slice, "
              "or that the branch or loop changes or that is traced; an object that is a global or closure "
              "variable, or that the branch or loop reassigns), or a call of a method that changes an object "
              "made outside it (`out.append(v)`, `d.update(...)`); also, anywhere, a comprehension's "
              "`if`, a `match` subject compared with patterns or a `case` guard on a traced value.  "
              "Items and attributes with static keys "
              "(`d['h'] = ...`, `self.h = ...`, `out[0] = ...`) are carried, as variables are.",
         why="The branches and the loop body become functions that `lax` traces once each, whatever the "
             "value: both branches of a traced `if` run while tracing, so an exception would always be raised, "
             "a side effect on an outside object would always happen, and a `try` cannot catch anything that "
             "happens at run time.",
         example="def hybrid_forward(self, F, x):\n    if x.sum() > 0:\n        self.history.append(x)\n    return x",
         instead="return the value (or keep it in a Parameter); select with `F.where`; validate inputs "
                 "outside the traced branch",
         mxnet=None,
         messages={
             "default": Message(
                 "`{what}` cannot live inside {where}",
                 "move it out of the tensor-dependent branch or loop, or make the condition a Python value"),
             "mutation": Message(
                 "`{what}(...)` changes an object made outside {where}: it would run once while tracing, "
                 "whatever the values",
                 "carry the values as arrays the branch or loop assigns (`acc = acc.at[i].set(v)`, "
                 "`total = total + v`), or make the condition a Python value"),
             "composite": Message(
                 "`{what}` is assigned inside {where}, but {why}: it cannot be carried as the statement's state",
                 "assign items and attributes by constant keys or by variables the branch or loop does not change "
                 "(`d['h'] = ...`, `self.h = ...`), of an object made before it in this function; or keep the "
                 "value in a variable and store it after the branch or loop"),
             "traced-key": Message(
                 "`{what}` is assigned inside {where} with a key that is a traced value: which slot it names "
                 "is not known while tracing",
                 "use a Python value as the key, or keep the values in an array and update it with "
                 "`a = a.at[i].set(v)` (`F.where` on a one-hot mask for NDArrays)"),
             "python-only": Message(
                 "{what} is a traced value: {why}",
                 "make it a Python value (a static argument, a shape), or compute on arrays instead "
                 "(`jnp.where` on a mask for a filter, `if`/`elif` for a `match`)"),
             "recursion": Message(
                 "`{what}` calls itself under a condition on a traced value, {depth} levels deep: a recursion "
                 "whose depth depends on a traced value would be traced forever",
                 "recurse on a Python value (a static argument, a shape), or write the repetition as a `while` "
                 "loop on the traced value"),
         }),
    Rule("HY033", "branch-structure-mismatch",
         "Branches of a traced `if` produce different structures", origin="convert",
         what="Reported by conversion: the two branches give values of different pytree structure, "
              "shape or dtype.",
         why="`lax.cond` requires both branches to return the same structure.",
         instead="make both branches return the same kind of value",
         mxnet=None,
         messages={
             "returns": Message("the function returns {a} on one path and {b} on another, and which path "
                                "runs depends on a traced value",
                                "return the same kind of value on every path (a bare `return` returns None: "
                                "return an array of the same shape instead)"),
             "if": Message("the branches of an `if` on a traced value give different structures: "
                           "`{name}` is {a} in one and {b} in the other",
                           "make both branches produce the same kind of value (same structure, shape and dtype)"),
             "ifexp": Message("the two values of a conditional expression on a traced value give "
                              "different structures: they are {a} in one and {b} in the other",
                              "make both branches produce the same kind of value (same structure, shape and "
                              "dtype)"),
         }),
    Rule("HY034", "unconvertible-function",
         "A function that cannot be converted at all", origin="convert",
         what="Reported by `ast_hybrid.convert`/`jit` for a function with no Python source (defined at an "
              "interactive prompt or by `exec`, a builtin or C function), a generator, an `async` function, "
              "a class, or a lambda whose source cannot be isolated.",
         why="Conversion rewrites the function's source; without it, or for code that does not return a "
             "value when called, there is nothing to rewrite into one compiled program.",
         example="gen = ast_hybrid.jit(lambda_from_repl)   # or a function that uses `yield`",
         instead="define the function with `def` in a .py file; return a list or a stacked array instead of "
                 "yielding; or mark it `@ast_hybrid.do_not_convert` so it is called as it is",
         mxnet=None,
         messages={
             "not-a-function": Message("cannot convert `{name}`: it is not a Python function", _AS_IT_IS),
             "class": Message("cannot convert `{name}`: it is a class; convert one of its methods",
                              "convert `obj.method`, or the function the class calls"),
             "callable": Message("cannot convert `{name}`: it is a {type}, not a Python function: there is no "
                                 "Python source to convert", _AS_IT_IS),
             "generator": Message("cannot convert `{name}`: it is a generator (`yield`): its values are "
                                  "produced lazily, outside any compiled program",
                                  "return a list or a stacked array instead"),
             "async": Message("cannot convert `{name}`: it is an `async` function", "make it a plain `def`"),
             "no-source": Message("cannot convert `{name}`: Python kept no source for it (defined at an "
                                  "interactive prompt, by `exec`, or in a compiled module)",
                                  "define it in a .py file, or mark it `@ast_hybrid.do_not_convert`"),
             "unparsable": Message("cannot convert `{name}`: its source could not be parsed: {reason}",
                                   _AS_IT_IS),
             "def-not-found": Message("cannot convert `{name}`: its `def` was not found where Python says "
                                      "it starts", _AS_IT_IS),
             "lambda-ambiguous": Message("cannot convert `{name}`: several lambdas with the same parameters "
                                         "are on its line", "write it as a `def`"),
             "lambda-not-isolated": Message("cannot convert `{name}`: its source could not be isolated",
                                            "write it as a `def`"),
         }),
    Rule("HY999", "internal-error", "ast-hybrid failed on this file", origin="internal",
         what="An internal error of ast-hybrid; please report it.",
         instead="report it with the file; meanwhile mark a function that cannot be converted "
                 "`@ast_hybrid.do_not_convert`",
         selectable=False, internal=True,
         messages={
             "function": Message("internal error while linting `{name}`: {error}",
                                 "this is a bug in ast-hybrid; please report it with the file. "
                                 "The other functions were linted"),
             "file": Message("internal error while linting this file: {error}",
                             "this is a bug in ast-hybrid; please report it with the file. "
                             "The other files were linted"),
             "convert": Message("internal error while converting `{name}`: {error}",
                                "this is a bug in ast-hybrid; please report it with the function. "
                                "Meanwhile mark the function `@ast_hybrid.do_not_convert`"),
         }),
]

#: Every code ast-hybrid can emit, HY999 (internal error) included.
RULES: dict[str, Rule] = {r.code: r for r in _RULES}


def get_rule(code: str) -> Rule | None:
    """The rule with ``code`` (any case), HY999 included; None for a code ast-hybrid never emits."""
    return RULES.get(code.upper())


def message(code: str, variant: str = "default", **values) -> tuple[str, str | None]:
    """``(message, help)`` of ``code``'s ``variant``, formatted: what every producer calls."""
    return RULES[code].message(variant, **values)
