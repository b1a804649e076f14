"""The rule catalogue: every diagnostic code ast-hybrid can emit, with its page.

``ast-hybrid rules`` lists them; ``ast-hybrid rule HY001`` prints one page.
Codes are public interface: never renumber them.

TODO(linter): fill each page's sections (what, why, example, instead, fix).
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
    Rule("HY001", "inplace-augmented-assignment", "In-place augmented assignment to a tensor (`x += y`)"),
    Rule("HY002", "tensor-item-assignment", "Item or slice assignment into a tensor (`x[:] = ...`)"),
    Rule("HY003", "out-argument", "`out=` argument to an operator"),
    Rule("HY004", "host-synchronisation", "Host synchronisation of a tensor (`.asnumpy()`, `float(x)`, ...)"),
    Rule("HY005", "wait-in-forward", "`.wait_to_read()` or `waitall()` inside a forward"),
    Rule("HY006", "print-tensor", "`print` of a tensor inside a forward"),
    Rule("HY007", "op-outside-f", "Operator called through `mx.nd`, `nd`, `mx.sym` or `numpy` instead of `F`"),
    Rule("HY008", "tensor-shape-access", "`.shape`, `.ndim`, `.size`, `.context` or `len()` of a tensor"),
    Rule("HY010", "tensor-control-flow", "Python control flow on a tensor value"),
    Rule("HY011", "tensor-iteration", "Iteration or integer indexing of a tensor"),
    Rule("HY012", "self-attribute-assignment", "Assignment to `self.<attr>` inside a forward"),
    Rule("HY020", "syntax-error", "The file cannot be read or parsed"),
    Rule("HY030", "branch-only-assignment", "Variable assigned in only one branch of a traced `if` and used after it", origin="convert"),
    Rule("HY031", "loop-carried-change", "Loop-carried variable changes shape or dtype across iterations", origin="convert"),
    Rule("HY032", "unsupported-in-traced-control-flow", "Construct that cannot live inside traced control flow", origin="convert"),
    Rule("HY033", "branch-structure-mismatch", "Branches of a traced `if` produce different structures", origin="convert"),
]

RULES: dict[str, Rule] = {r.code: r for r in _RULES}


def get_rule(code: str) -> Rule | None:
    return RULES.get(code.upper())
