"""``ast-hybrid lint PATH...`` (alias ``check``): settings, lint (or fix), render, exit code.

Each step is one function: :func:`settings_from` reads the command line and
the configuration, :func:`lint_or_fix` produces the diagnostics (and the fixes
with ``--fix``/``--diff``), :func:`report` renders them, :func:`exit_code`
turns them into ruff's exit codes.  ``PATH`` ``-`` reads stdin (editors).
Nothing here imports jax or numpy.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, err
from ast_hybrid.common.diagnostics import Severity
from ast_hybrid.common.rules import RULES
from ast_hybrid.common.render import STATISTICS_FORMATS, render, render_statistics, render_summary
from ast_hybrid.linter.api import lint_file, lint_files, lint_source, resolve_settings
from ast_hybrid.linter.config import ConfigError, discover

__all__ = ["run"]

#: codes that are a failure of ast-hybrid itself (HY999): the run exits 2
_INTERNAL = frozenset(code for code, rule in RULES.items() if rule.internal)


@dataclass
class Outcome:
    """What linting the paths gave: the diagnostics, and what fixing did."""

    diagnostics: list = field(default_factory=list)
    fixed: int = 0                 # fixes applied (or, with --diff, that would be)
    diffs: list = field(default_factory=list)
    failed_writes: int = 0


def run(args) -> int:
    paths = args.paths or ["."]
    try:
        settings = settings_from(args, paths)
    except ConfigError as exc:
        err(str(exc))
        return EXIT_ERROR
    fmt = args.output_format or settings.output_format
    if args.statistics and fmt not in STATISTICS_FORMATS:
        err(f"--statistics cannot be written as {fmt}; use one of {', '.join(STATISTICS_FORMATS)}")
        return EXIT_ERROR
    if paths == ["-"]:
        return _lint_stdin(args, settings, fmt)
    files, missing = discover(paths, settings)
    for m in missing:
        err(f"path does not exist: {m}")
    outcome = lint_or_fix(args, files, settings)
    if args.diff:
        if outcome.diffs:
            sys.stdout.write("".join(outcome.diffs))
        if not args.quiet:
            print(f"Would fix {outcome.fixed} error{'s' if outcome.fixed != 1 else ''}.", file=sys.stderr)
        if outcome.fixed and not args.exit_zero:
            return EXIT_FINDINGS
        return EXIT_ERROR if missing else EXIT_CLEAN
    report(args, outcome, fmt)
    if missing or outcome.failed_writes:
        return EXIT_ERROR
    return exit_code(outcome.diagnostics, args.exit_zero)


def settings_from(args, paths):
    """The command line laid over the configuration (``[tool.ast-hybrid]``, unless ``--isolated``)."""
    return resolve_settings(
        paths, config=args.config, respect_config=not args.isolated,
        target=args.target, select=_codes(args.select), ignore=_codes(args.ignore),
        extend_select=_codes(args.extend_select))


def lint_or_fix(args, files, settings) -> Outcome:
    """Lint every file; with ``--fix``/``--diff`` apply (or only diff) the fixes first."""
    if not (args.fix or args.diff):
        return Outcome(lint_files(files, settings))
    from ast_hybrid.linter.apply import fix_file

    out = Outcome()
    for f in files:
        try:
            res = fix_file(f, lambda src: lint_source(src, settings),
                           unsafe=args.unsafe_fixes, write=args.fix and not args.diff)
        except OSError as exc:
            out.diagnostics.extend(lint_file(f, settings))
            err(f"cannot fix {f}: {exc.strerror or exc}")
            out.failed_writes += 1
            continue
        out.fixed += res.fixed
        if args.diff and res.changed:
            out.diffs.append(res.diff())
        out.diagnostics.extend(res.remaining)
    return out


#: the formats printed for people: a summary follows the diagnostics (ruff's full and concise)
_TEXT = ("text", "full", "concise")


def report(args, outcome: Outcome, fmt: str) -> None:
    """Print the diagnostics in ``fmt`` (or, with ``--statistics``, their counts), then the summary for text."""
    diagnostics, out = outcome.diagnostics, sys.stdout
    color = args.color if args.color is not None else (fmt in _TEXT and out.isatty())
    if args.statistics:
        text = render_statistics(diagnostics, fmt, unsafe_fixes=args.unsafe_fixes, color=color)
    else:
        text = render(diagnostics, fmt, color=color, unsafe_fixes=args.unsafe_fixes)
    if fmt in _TEXT:
        if text:
            out.write(text + "\n")
        if fmt == "concise" and text and not args.statistics:
            out.write("\n")
        if not args.quiet:
            print(render_summary(diagnostics, unsafe_fixes=args.unsafe_fixes, fixed=outcome.fixed,
                                 fix_enabled=args.fix))
    elif text or fmt != "github":
        out.write(text + "\n")


def exit_code(diagnostics, exit_zero: bool) -> int:
    """ruff's: 2 when the tool failed (an internal error), 1 when a finding fails the run (notes never do)."""
    if any(d.code in _INTERNAL for d in diagnostics):
        return EXIT_ERROR
    failing = any(d.severity != Severity.NOTE for d in diagnostics)
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN


def _lint_stdin(args, settings, fmt) -> int:
    """``ast-hybrid lint -``: lint stdin (editors); with ``--fix`` print the fixed source."""
    from ast_hybrid.common.source import SourceFile

    name = args.stdin_filename or "-"
    text = sys.stdin.read()
    lint_text = lambda t: lint_source(SourceFile.from_text(t, name), settings)  # noqa: E731
    if args.fix:
        from ast_hybrid.linter.apply import fix_text

        res = fix_text(text, name, lint_text, unsafe=args.unsafe_fixes)
        sys.stdout.write(res.text)
        diagnostics = res.remaining
        if diagnostics:
            print(render(diagnostics, "text", unsafe_fixes=args.unsafe_fixes), file=sys.stderr)
    else:
        diagnostics = lint_text(text)
        report(args, Outcome(diagnostics), fmt)
    return exit_code(diagnostics, args.exit_zero)


def _codes(values):
    """``--select A,B --select C`` -> ``[A, B, C]``; None when not given."""
    if not values:
        return None
    out = []
    for v in values:
        out.extend(x for x in v.split(",") if x.strip())
    return out
