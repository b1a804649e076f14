"""Conversion of real code: every function of a tree of Gluon code, from source, timed.

    python -m bench.convert_speed                 # MXNet 1.9.1's own mxnet/gluon (the oracle's wheel)
    python -m bench.convert_speed TREE [TREE ...] # e.g. an unpacked gluoncv/ and gluonnlp/

Each function (and method) is converted as ``ast-hybrid convert`` does:
nothing imported, the linter asked for its refusals, the pipeline run, the
result compiled.  Prints how many converted, any failure (an internal error:
a bug), the number of forwards, and the time per 100 source lines (reading
and parsing the files not included; the collector paused, as ``convert`` does).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


from ast_hybrid.cli.convert import functions
from ast_hybrid.transpiler.converter import collector_paused, compile_tree, lint_refusals, transform_function
from ast_hybrid.common.source import SourceError, read_file


def convert_tree(root: Path):
    done, failed, forwards, lines, seconds, longest = 0, [], 0, 0, 0.0, (0, 0.0, "")
    for path in sorted(Path(root).rglob("*.py")):
        try:
            source = read_file(path)
            module = source.parse()
        except SourceError:
            continue
        for qualname, fn, cls in list(functions(module)):
            fn.decorator_list = []
            n = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            start = time.perf_counter()
            try:
                with collector_paused():
                    tree, _ = transform_function(fn, source, cls, refusals=lint_refusals(fn, source))
                    compile_tree(tree, source)
            except Exception as exc:  # noqa: BLE001 - a failure is what this counts
                failed.append(f"{path}::{qualname}: {type(exc).__name__}: {exc}")
                continue
            dt = time.perf_counter() - start
            done, lines, seconds = done + 1, lines + n, seconds + dt
            forwards += fn.name in ("hybrid_forward", "forward")
            if n > longest[0]:
                longest = (n, dt, f"{path.name}::{qualname}")
    return done, failed, forwards, lines, seconds, longest


def scenario(report, quick=False):
    """Conversion of every function of MXNet 1.9.1's mxnet/gluon, per 100 source lines."""
    from ast_hybrid.testing.corpus import gluon_tree

    root = gluon_tree()
    done, failed, forwards, lines, seconds, longest = convert_tree(Path(root))
    report.add("conversion", "every function of mxnet/gluon, per 100 lines", "ms",
               {"ours": seconds / max(lines, 1) * 100 * 1e3},
               note=f"{done} functions ({forwards} forwards, {lines} lines), {len(failed)} failed; longest "
                    f"{longest[2]} ({longest[0]} lines) {longest[1] * 1e3:.1f} ms")
    for f in failed[:20]:
        print("  FAILED", f)


def main(argv=None) -> int:
    trees = (argv if argv is not None else sys.argv[1:])
    if not trees:
        from ast_hybrid.testing.corpus import gluon_tree
        trees = [str(gluon_tree())]
    status = 0
    for root in trees:
        done, failed, forwards, lines, seconds, longest = convert_tree(Path(root))
        print(f"{root}: {done} functions converted ({forwards} forwards, {lines} lines), {len(failed)} failed; "
              f"{seconds / max(lines, 1) * 100 * 1e3:.1f} ms per 100 lines; longest {longest[2]} "
              f"({longest[0]} lines) {longest[1] * 1e3:.1f} ms")
        for f in failed[:20]:
            print("  FAILED", f)
        status |= bool(failed)
    return status


if __name__ == "__main__":
    sys.exit(main())
