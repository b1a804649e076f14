"""The ``ast-hybrid`` command line (also ``python -m ast_hybrid``).

Subcommands::

    ast-hybrid lint PATH...        # hybridizability diagnostics (never imports the code)
    ast-hybrid rules               # every rule: code, name, fixability, summary
    ast-hybrid rule HY001          # one rule's page
    ast-hybrid convert FILE[::QUALNAME]   # the transpiler's converted source
    ast-hybrid demo                # lint, convert and run an embedded Gluon model

Exit codes, as ruff: 0 when no finding fails the run, 1 when there are
findings (errors or warnings; *notes never fail a run*), 2 for a usage error,
a path that does not exist (the other paths are still linted), a bad
configuration, or a failure of the tool itself (an internal-error HY999).

The lint path imports neither jax nor numpy.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main", "build_parser"]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 on usage errors, as we want
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from ast_hybrid import __version__

    p = _Parser(prog="ast-hybrid",
                description="Lint MXNet Gluon models for hybridizability; convert them to JAX.")
    p.add_argument("--version", action="version", version=f"ast-hybrid {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    lint = sub.add_parser("lint", aliases=["check"], help="report constructs that break hybridization",
                          description="Report constructs that break hybridization (static; "
                                      "never imports or runs the code).")
    lint.add_argument("paths", nargs="*", metavar="PATH",
                      help="files or directories (default: the current directory)")
    lint.add_argument("--target", choices=("jax", "mxnet"), default=None,
                      help="jax (default): what ast-hybrid's conversion rejects; "
                           "mxnet: what breaks MXNet 1.x hybridize()")
    lint.add_argument("--select", action="append", metavar="CODES",
                      help="comma-separated codes or prefixes to report (default: all)")
    lint.add_argument("--extend-select", action="append", metavar="CODES",
                      help="codes or prefixes to add to the selection")
    lint.add_argument("--ignore", action="append", metavar="CODES",
                      help="comma-separated codes or prefixes not to report")
    lint.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    lint.add_argument("--unsafe-fixes", action="store_true",
                      help="also apply (with --fix) or count unsafe fixes")
    lint.add_argument("--diff", action="store_true",
                      help="with or without --fix: print the fixes as a unified diff, write nothing")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    lint.add_argument("--statistics", action="store_true", help="count findings per rule")
    lint.add_argument("--output-format", choices=("text", "json", "sarif", "github"), default=None)
    lint.add_argument("--config", metavar="PYPROJECT",
                      help="read [tool.ast-hybrid] from this file instead of the nearest pyproject.toml")
    lint.add_argument("--stdin-filename", metavar="PATH",
                      help="the file name to report when the source is read from stdin (PATH `-`)")
    lint.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    color = lint.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_const", const=True, default=None)
    color.add_argument("--no-color", dest="color", action="store_const", const=False)
    lint.add_argument("-q", "--quiet", action="store_true",
                      help="print only the diagnostics (no summary)")

    sub.add_parser("rules", help="list every rule")
    rule = sub.add_parser("rule", help="print a rule's page")
    rule.add_argument("code", metavar="CODE")

    conv = sub.add_parser("convert", help="print the converted source of a function or method")
    conv.add_argument("target", metavar="FILE[::QUALNAME]")

    sub.add_parser("demo", help="lint, convert and run an embedded Gluon model (no files needed)")
    return p


def main(argv=None) -> int:
    """Run the CLI; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_ERROR
    try:
        if args.command in ("lint", "check"):
            return _cmd_lint(args)
        if args.command == "rules":
            return _cmd_rules(args)
        if args.command == "rule":
            return _cmd_rule(args)
        if args.command == "convert":
            return _cmd_convert(args)
        if args.command == "demo":
            from ast_hybrid.cli.demo import main as demo
            return demo()
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `ast-hybrid lint | head`: stop quietly
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_CLEAN


def _err(msg: str):
    print(f"error: {msg}", file=sys.stderr)


def _join(values):
    if not values:
        return None
    out = []
    for v in values:
        out.extend(x for x in v.split(",") if x.strip())
    return out


def _cmd_lint(args) -> int:
    from ast_hybrid.linter.config import ConfigError, discover
    from ast_hybrid.common.diagnostics import Severity
    from ast_hybrid.linter.api import lint_files, lint_source, resolve_settings
    from ast_hybrid.common.render import render, render_statistics, render_summary

    paths = args.paths or ["."]
    try:
        settings = resolve_settings(
            paths, config=args.config, respect_config=not args.isolated,
            target=args.target, select=_join(args.select), ignore=_join(args.ignore),
            extend_select=_join(args.extend_select))
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_ERROR
    fmt = args.output_format or settings.output_format
    if paths == ["-"]:
        return _lint_stdin(args, settings, fmt)
    files, missing = discover(paths, settings)
    for m in missing:
        _err(f"path does not exist: {m}")

    fixed = failed_writes = 0
    diffs = []
    if args.fix or args.diff:
        from ast_hybrid.linter.apply import fix_file

        diagnostics = []
        for f in files:
            try:
                res = fix_file(f, lambda src: lint_source(src, settings),
                               unsafe=args.unsafe_fixes, write=args.fix and not args.diff)
            except OSError as exc:
                from ast_hybrid.linter.api import lint_file
                diagnostics.extend(lint_file(f, settings))
                _err(f"cannot fix {f}: {exc.strerror or exc}")
                failed_writes += 1
                continue
            fixed += res.fixed
            if args.diff and res.changed:
                diffs.append(res.diff())
            diagnostics.extend(res.remaining)
    else:
        diagnostics = lint_files(files, settings)

    out = sys.stdout
    color = args.color if args.color is not None else (fmt == "text" and out.isatty())
    if args.diff:
        if diffs:
            out.write("".join(diffs))
        if not args.quiet:
            print(f"Would fix {fixed} error{'s' if fixed != 1 else ''}.", file=sys.stderr)
        return EXIT_FINDINGS if (fixed and not args.exit_zero) else (EXIT_ERROR if missing else EXIT_CLEAN)
    if args.statistics:
        if diagnostics:
            print(render_statistics(diagnostics, unsafe_fixes=args.unsafe_fixes))
    else:
        text = render(diagnostics, fmt, color=color, unsafe_fixes=args.unsafe_fixes)
        if fmt == "text":
            if text:
                out.write(text + "\n")
            if not args.quiet:
                print(render_summary(diagnostics, unsafe_fixes=args.unsafe_fixes, fixed=fixed,
                                     fix_enabled=args.fix))
        elif text or fmt != "github":
            out.write(text + "\n")

    internal = any(d.code == "HY999" for d in diagnostics)
    if missing or internal or failed_writes:
        return EXIT_ERROR
    failing = any(d.severity != Severity.NOTE for d in diagnostics)
    if failing and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _lint_stdin(args, settings, fmt) -> int:
    """``ast-hybrid lint -``: lint stdin (editors); with ``--fix`` print the fixed source."""
    from ast_hybrid.common.diagnostics import Severity
    from ast_hybrid.linter.api import lint_source
    from ast_hybrid.common.render import render, render_summary
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
        out = render(diagnostics, fmt, unsafe_fixes=args.unsafe_fixes)
        if out:
            print(out)
        if fmt == "text" and not args.quiet:
            print(render_summary(diagnostics, unsafe_fixes=args.unsafe_fixes))
    if any(d.code == "HY999" for d in diagnostics):
        return EXIT_ERROR
    failing = any(d.severity != Severity.NOTE for d in diagnostics)
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def _cmd_rules(args) -> int:
    from ast_hybrid.common.rules import RULES

    for code, rule in RULES.items():
        fix = "[*]" if "safe" in rule.fix.lower() and not rule.fix.lower().startswith("no ") else "   "
        origin = "" if rule.origin == "lint" else f"  ({rule.origin})"
        print(f"{code}  {fix} {rule.name:<36} {rule.summary}{origin}")
    return EXIT_CLEAN


def _cmd_rule(args) -> int:
    from ast_hybrid.common.rules import get_rule

    rule = get_rule(args.code)
    if rule is None:
        _err(f"unknown rule code {args.code!r}; `ast-hybrid rules` lists them")
        return EXIT_ERROR
    print(f"# {rule.name} ({rule.code})\n")
    print(f"{rule.summary}\n")
    if rule.origin != "lint":
        print(f"Reported by: `ast_hybrid.{rule.origin}` (at conversion time).\n")
    for title, body in (("What it does", rule.what), ("Why is this bad?", rule.why),
                        ("Example", rule.example), ("Use instead", rule.instead),
                        ("Fix safety", rule.fix)):
        if body:
            print(f"## {title}\n")
            if title in ("Example", "Use instead") and "```" not in body:
                print(f"```python\n{body.strip()}\n```\n")
            else:
                print(f"{body.strip()}\n")
    print(f"See {rule.url}")
    return EXIT_CLEAN


def _cmd_convert(args) -> int:
    """``convert FILE[::QUALNAME]``: the transpiler's output, from the source alone."""
    from ast_hybrid.cli import convert as cli_convert

    return cli_convert.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
