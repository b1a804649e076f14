"""The linter: static hybridizability checks over one source file (never imports or runs it).

This folder is ``ast-hybrid lint`` and :func:`ast_hybrid.lint`: the checks
(:func:`check_source` below, over :mod:`.module`, :mod:`.kinds` with
:mod:`.tags` and :mod:`.calls`, :mod:`.engine`, :mod:`.checks` with its rule
families :mod:`.checks_flow`, :mod:`.checks_assign`, :mod:`.checks_calls`, :mod:`.noqa`), the fixes they carry
(:mod:`.fixes`) and applying them (:mod:`.apply`), the settings and file
discovery (:mod:`.config`), and the Python API (:mod:`.api`).

May import: the standard library, gast, beniget and :mod:`ast_hybrid.common`
(its AST walkers included).  Never jax, numpy, the transpiler's runtime or
the Gluon front: linting must start fast and run where jax is not installed.

The pipeline of :func:`check_source`, in order:

1. parse with the standard :mod:`ast` (fast); a syntax error is HY020 at its
   position, and a file that mentions neither ``hybrid_forward`` nor
   ``forward`` stops here;
2. :class:`~ast_hybrid.linter.module.ModuleFacts`: imports, functions,
   classes, which classes are hybridized, the entry points (every
   ``hybrid_forward``; ``forward`` of HybridBlock subclasses, MXNet 2 style);
3. each entry becomes a :class:`~ast_hybrid.linter.kinds.Unit` (converted to
   gast on its own, def-use chains by beniget).  Helpers it passes ``F`` or a
   tensor to (module functions, methods, ``super().hybrid_forward``) become
   units too; the parameters' tensor tags and the helpers' return tags are
   propagated until nothing changes (at most :data:`MAX_ROUNDS` rounds).  A
   parameter's uses and documented type tell a tensor from a list of tensors
   (:mod:`.evidence`); operators' output counts are MXNet's (:mod:`ast_hybrid.common.op_outputs`), and so
   are the names ``mx.nd`` has and ``mx.sym`` lacks (:mod:`.nd_only`, HY013);
   whether ``self.a`` is read back by a later call comes from the class (:mod:`.state`);
4. :class:`~ast_hybrid.linter.checks.Checker` walks every unit and reports;
5. severities are set for the target, findings deduplicated, ``# noqa``
   applied; the findings on a path the author marked imperative-only (``if self.hybridizable:
   return out`` and what follows, nd guards) become one HY015 note at the guard (:mod:`.imperative`);
   the result is sorted by position.

Targets: ``"jax"`` (default; what ast-hybrid's conversion rejects) and
``"mxnet"`` (what breaks MXNet 1.x ``hybridize()``).  Each rule's severity
per target is in the rule catalogue, :mod:`ast_hybrid.common.rules`
(``Rule.jax``, ``Rule.mxnet``; ``None``: not reported on that target), and
nowhere else: ``ast-hybrid rule CODE`` prints a rule's page (also docs/rules/CODE.md), and
docs/lint.md's rule table is checked against the catalogue by a test.

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

from ast_hybrid.common.diagnostics import Diagnostic
from ast_hybrid.common.rules import RULES, TARGETS, message
from ast_hybrid.common.source import SourceError, SourceFile
from .noqa import noqa_map, suppressed

__all__ = ["check_source", "TARGETS", "MAX_ROUNDS"]

MAX_ROUNDS = 8   # rounds of propagating tags between a forward and its helpers (the engine's)


def check_source(src: SourceFile, *, target: str = "jax", imperative_notes: bool = True) -> list[Diagnostic]:
    """Every finding in ``src`` for ``target`` ("jax" or "mxnet"), noqa applied.  ``imperative_notes``:
    the findings on a path the author marked imperative-only become one HY015 note at its guard
    (:mod:`.imperative`); False reports each (the transpiler, which refuses them where they are traced)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
    try:
        tree = src.parse_ast()
    except SourceError as err:
        text, help = message("HY020", "syntax", reason=err.message)
        return [Diagnostic("HY020", text, err.path, err.span, help=help)]
    if "forward" not in src.text:
        return []
    from .engine import analyse  # late: gast/beniget only for files that need them
    from .imperative import collapse

    found = analyse(src, tree, target)
    kept, seen = [], set()
    noqa = noqa_map(src)
    for d, path in found:
        sev = RULES[d.code].severity(target)
        if sev is None:  # not reported on this target
            continue
        key = (d.code, d.span)
        if key in seen:
            continue
        seen.add(key)
        if sev is not d.severity:
            d = d.with_severity(sev)
        if not suppressed(d, noqa):
            kept.append((d, path if imperative_notes else None))
    out = [d for d in collapse(kept, src, target) if not suppressed(d, noqa)]
    out.sort(key=lambda d: d.sort_key())
    return out
