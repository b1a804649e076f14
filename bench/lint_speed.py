"""How fast ``ast-hybrid lint`` is on real Gluon code, against flake8 in the same run.

Usage::

    python -m bench.lint_speed [DIR ...] [--repeat N]      (python -m bench runs it with the rest)

``DIR`` defaults to the three labelled trees of real Gluon code: MXNet 1.9.1's
``mxnet/gluon`` (:func:`ast_hybrid.testing.corpus.gluon_tree`), GluonCV 0.10.5
and GluonNLP 0.10.0 (:func:`ast_hybrid.testing.corpus.package_tree`).  Times,
medians of ``N`` interleaved rounds (``bench/harness.py``):

1. in-process: :func:`ast_hybrid.linter.api.lint_files` over every file (files/s);
2. whole process: ``python -m ast_hybrid lint DIR`` as a subprocess, start included;
3. interpreter start with ast-hybrid's imports, to show what process start costs;
4. flake8 on the same files, whole process, one job (``-j1``), default checks.

Prints the ratios flake8 / ast-hybrid.  Not a test: the machine is shared
and noisy, compare only ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench import harness

ROOT = Path(__file__).resolve().parents[1]


def _proc(args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return lambda: subprocess.run(args, cwd=cwd, env=env, capture_output=True)


def _per_run(fn):
    """A harness contender: ``fn()`` run ``n`` times, seconds per run."""
    def time_it(n):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) / n
    return time_it


def scenario(report, quick=False, trees=None, repeat=5):
    """ast-hybrid lint in-process and as a process against flake8 -j1 on the same files, interleaved."""
    if not trees:
        from ast_hybrid.testing.corpus import gluon_tree, package_tree
        trees = [gluon_tree()] if quick else [gluon_tree(), package_tree("gluoncv"), package_tree("gluonnlp")]
    from ast_hybrid.linter.config import Settings, discover
    from ast_hybrid.linter.api import lint_files

    settings = Settings(root=trees[0])
    files = [f for tree in trees for f in discover([tree], settings)[0]]
    n_lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    for target in ("jax", "mxnet"):
        diags = lint_files(files, Settings(root=trees[0], target=target))
        internal = sum(d.code == "HY999" for d in diags)
        print(f"diagnostics, target {target}: {len(diags)} (internal errors: {internal})")
    py = sys.executable
    contenders = {
        "ast-hybrid in-process": _per_run(lambda: lint_files(files, settings)),
        harness.OURS: _per_run(_proc([py, "-m", "ast_hybrid", "lint", "--isolated", "-q", "--exit-zero",
                                      *map(str, trees)])),
        "python start + imports": _per_run(_proc([py, "-c", "import ast_hybrid.cli, ast_hybrid.linter"])),
    }
    try:
        import flake8  # noqa: F401
    except ImportError:
        report.cannot("flake8 comparison", "flake8 is not installed (pip install -e '.[bench]')")
    else:
        contenders["flake8 -j1"] = _per_run(_proc([py, "-m", "flake8", "-j1", "--exit-zero", *files]))
    t = harness.interleave(contenders, 1, rounds=3 if quick else repeat)
    names = ", ".join(Path(tree).name for tree in trees)
    note = f"{len(files)} files, {n_lines} lines; ours = whole process, start included; " + \
        ", ".join(f"{k}: {len(files) / v:,.0f} files/s" for k, v in t.items() if "start" not in k)
    row = report.add("lint throughput", f"lint {names}", "ms", {k: v * 1e3 for k, v in t.items()}, note)
    if "flake8 -j1" in t:
        row.ratios["flake8/ours"] = t["flake8 -j1"] / t[harness.OURS]
        row.ratios["flake8/ours in-process"] = t["flake8 -j1"] / t["ast-hybrid in-process"]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", help="directories of Python files (default: gluon, gluoncv, gluonnlp)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    row = scenario(harness.Report(), trees=[Path(t) for t in args.trees], repeat=args.repeat)
    for k, v in row.ratios.items():
        print(f"ratio {k}: {v:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
