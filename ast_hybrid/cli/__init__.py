"""The ``ast-hybrid`` command line (also ``python -m ast_hybrid``).

Subcommands (one module of this package each: ``lint``, ``rules``, ``convert``, ``demo``, ``run``, ``launch``,
``config``, ``export``, ``server``)::

    ast-hybrid lint PATH...        # hybridizability diagnostics (never imports the code)
    ast-hybrid rules               # every rule: code, name, fixability, summary
    ast-hybrid rule HY001          # one rule's page
    ast-hybrid convert FILE[::QUALNAME]   # the transpiler's converted source
    ast-hybrid demo                # lint, convert and run an embedded Gluon model
    ast-hybrid config              # every AST_HYBRID_* setting, its current value and what it does
    ast-hybrid run SCRIPT [ARGS]   # run an MXNet script unchanged (`import mxnet` is ast-hybrid)
    ast-hybrid launch -n N SCRIPT  # N local processes running it together (kvstore='dist_sync')
    ast-hybrid export SYMBOL.json PARAMS --input-shape 1,3,224,224   # MXNet's saved model as ONNX
    ast-hybrid server              # the linter as a language server (LSP over stdio) for editors

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
from importlib import import_module

__all__ = ["main", "build_parser", "EXIT_CLEAN", "EXIT_FINDINGS", "EXIT_ERROR"]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

# subcommand -> the module of this package that runs it (``run(args) -> exit code``),
# imported only when that command runs: ``lint`` never loads jax
COMMANDS = {"lint": "lint", "check": "lint", "rules": "rules", "rule": "rules",
            "convert": "convert", "demo": "demo", "run": "run", "launch": "launch", "config": "config",
            "export": "export", "server": "server"}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 on usage errors, as we want
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from ast_hybrid import __version__
    from ast_hybrid.common.render import FORMATS
    from ast_hybrid.common.rules import TARGETS

    p = _Parser(prog="ast-hybrid",
                description="Lint MXNet Gluon models for hybridizability; convert them to JAX.")
    p.add_argument("--version", action="version", version=f"ast-hybrid {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    lint = sub.add_parser("lint", aliases=["check"], help="report constructs that break hybridization",
                          description="Report constructs that break hybridization (static; "
                                      "never imports or runs the code).")
    lint.add_argument("paths", nargs="*", metavar="PATH",
                      help="files or directories (default: the current directory)")
    lint.add_argument("--target", choices=TARGETS, default=None,
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
    lint.add_argument("--output-format", choices=FORMATS, default=None)
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

    config = sub.add_parser("config", help="every AST_HYBRID_* setting: its current value, default and values",
                            description="Print every setting ast-hybrid reads from the environment "
                                        "(ast_hybrid/core/settings.py) with its current value, default, "
                                        "accepted values and what it does; exit 2 if one holds a bad value.")
    config.add_argument("--markdown", action="store_true", help="the documentation's table instead")

    run = sub.add_parser("run", help="run an MXNet script unchanged, `import mxnet` resolving to ast-hybrid",
                         description="Run a script as python would, with `import mxnet` resolving to "
                                     "ast-hybrid's compatibility package (ast_hybrid.mxnet).")
    run.add_argument("--force", action="store_true",
                     help="use ast-hybrid even where a real MXNet is installed (never shadowed otherwise)")
    run.add_argument("--hybridize", action="store_true",
                     help="hybridize every block the script calls, HybridBlock or Block (a forward that does not "
                          "convert runs op by op, block by block, with a warning naming the block and why)")
    run.add_argument("script", metavar="SCRIPT", help="the Python file to run")
    run.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments")

    launch = sub.add_parser("launch", help="run a script in N local processes training together",
                            description="Start N local processes joined by jax.distributed (gloo on CPU), each "
                                        "running SCRIPT as `ast-hybrid run` does; mx.kv.create('dist_sync') "
                                        "sees them as its workers.")
    launch.add_argument("-n", "--num-processes", type=int, required=True, metavar="N", help="how many processes")
    launch.add_argument("--devices-per-process", type=int, default=1, metavar="K",
                        help="simulated CPU devices per process (XLA_FLAGS device count; default 1)")
    launch.add_argument("--port", type=int, default=0, help="the coordinator's local port (default: a free one)")
    launch.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="after a process fails, how long the others get to exit before they are stopped "
                             "(default 10)")
    launch.add_argument("--all-output", action="store_true",
                        help="show every process's standard output (default: process 0's only)")
    launch.add_argument("--force", action="store_true", help="as for `run`")
    launch.add_argument("script", metavar="SCRIPT", help="the Python file to run")
    launch.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's own arguments")
    export = sub.add_parser("export", help="write MXNet's saved model (-symbol.json + .params) as ONNX",
                            description="Write an MXNet graph and its parameters (what HybridBlock.export "
                                        "writes) as an ONNX model, op by op as mx.onnx.export_model.")
    export.add_argument("symbol", metavar="SYMBOL_JSON", help="the graph: PREFIX-symbol.json")
    export.add_argument("params", metavar="PARAMS", help="its parameters: PREFIX-EPOCH.params")
    export.add_argument("--input-shape", action="append", required=True, metavar="1,3,224,224",
                        help="an input's shape (once per input, in the graph's order)")
    export.add_argument("--input-type", action="append", metavar="DTYPE",
                        help="an input's dtype (once per input, or once for all; default float32)")
    export.add_argument("--dynamic", action="store_true", help="leave every input dimension free")
    export.add_argument("-o", "--output", metavar="FILE.onnx", help="where to write (default PREFIX.onnx)")
    export.add_argument("--check", action="store_true",
                        help="run the file in ONNX Runtime on random inputs and compare with the graph run here")
    sub.add_parser("server", help="the linter as a language server for editors (LSP over stdin/stdout)",
                   description="Speak the Language Server Protocol on stdin/stdout: lint each open Python file "
                               "as the editor holds it, with code actions for the fixes and the rules' pages "
                               "on hover. Settings: [tool.ast-hybrid] of the nearest pyproject.toml.")
    return p


def main(argv=None) -> int:
    """Run the CLI; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_ERROR
    try:
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_ERROR
        command = import_module(f"{__name__}.{COMMANDS[args.command]}")
        return command.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `ast-hybrid lint | head`: stop quietly
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_CLEAN


def err(msg: str):
    """Print a usage or tool error to stderr (what every command does before exiting 2)."""
    print(f"error: {msg}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
