"""Static hybridizability checks over one source file (never imports or runs it).

The pipeline of :func:`check_source`, in order:

1. parse with the standard :mod:`ast` (fast); a syntax error is HY020 at its
   position, and a file that mentions neither ``hybrid_forward`` nor
   ``forward`` stops here;
2. :class:`~ast_hybrid.linter.module.ModuleFacts`: imports, functions,
   classes, which classes are hybridized, the entry points (every
   ``hybrid_forward``; ``forward`` of HybridBlock subclasses, MXNet 2 style);
3. each entry becomes a :class:`~ast_hybrid.linter.kinds.Unit` (converted to
   gast on its own, def-use chains by beniget).  Helpers it passes ``F`` to
   (module functions, methods, ``super().hybrid_forward``) become units too;
   the parameters' tensor tags and the helpers' return tags are propagated
   until nothing changes (at most :data:`MAX_ROUNDS` rounds);
4. :class:`~ast_hybrid.linter.checks.Checker` walks every unit and reports;
5. severities are set for the target, findings deduplicated, ``# noqa``
   applied, and the result sorted by position.

Targets: ``"jax"`` (default; what ast-hybrid's conversion rejects) and
``"mxnet"`` (what breaks MXNet 1.x ``hybridize()``).  Per code:

======  =================  ==============================================
code    jax                mxnet
======  =================  ==============================================
HY001   error              error
HY002   error              error
HY003   error              error
HY004   error              error
HY005   error              error
HY006   note (run-time     warning (prints ``<Symbol>`` once, while
        print)             tracing)
HY007   error              error
HY008   not reported       error (Symbols have no shape)
        (static shapes)
HY009   not reported       error (Symbols cannot be sliced with ``[]``)
HY010   note (converted)   error
HY011   note (converted)   error (silently wrong)
HY012   error              error
======  =================  ==============================================

An exception inside the analysis of one function becomes an HY999
internal-error diagnostic at that function; the other functions are still
checked.

>>> from ast_hybrid.common.source import SourceFile
>>> code = '''
... class Net(HybridBlock):
...     def hybrid_forward(self, F, x):
...         n = x.shape[0]
...         if x.sum() > 0:
...             x += 1
...         return x
... '''
>>> [(d.code, d.span.line, d.severity.value) for d in check_source(SourceFile.from_text(code))]
[('HY010', 5, 'note'), ('HY001', 6, 'error')]
>>> [(d.code, d.span.line) for d in check_source(SourceFile.from_text(code), target="mxnet")]
[('HY008', 4), ('HY010', 5), ('HY001', 6)]
"""

from __future__ import annotations

from ast_hybrid.common.diagnostics import Diagnostic, Severity
from ast_hybrid.common.source import SourceError, SourceFile
from .noqa import noqa_map, suppressed

__all__ = ["check_source", "TARGETS", "MAX_ROUNDS"]

TARGETS = ("jax", "mxnet")
MAX_ROUNDS = 8

_NOT_REPORTED = {"jax": {"HY008", "HY009"}, "mxnet": set()}
_SEVERITY = {
    "jax": {"HY006": Severity.NOTE, "HY010": Severity.NOTE, "HY011": Severity.NOTE},
    "mxnet": {"HY006": Severity.WARNING},
}


def check_source(src: SourceFile, *, target: str = "jax") -> list[Diagnostic]:
    """Every finding in ``src`` for ``target`` ("jax" or "mxnet"), noqa applied."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
    try:
        tree = src.parse_ast()
    except SourceError as err:
        return [Diagnostic("HY020", err.message, err.path, err.span,
                           help="fix the syntax error; the other files are still linted")]
    if "forward" not in src.text:
        return []
    from .engine import analyse  # late: gast/beniget only for files that need them

    found = analyse(src, tree, target)
    out, seen = [], set()
    noqa = noqa_map(src)
    for d in found:
        if d.code in _NOT_REPORTED[target]:
            continue
        key = (d.code, d.span)
        if key in seen:
            continue
        seen.add(key)
        sev = _SEVERITY[target].get(d.code)
        if sev is not None:
            d = d.with_severity(sev)
        if not suppressed(d, noqa):
            out.append(d)
    out.sort(key=lambda d: d.sort_key())
    return out
