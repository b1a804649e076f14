"""How fast ``ast-hybrid lint`` is on real Gluon code, against flake8 in the same run.

Usage::

    python bench/lint_speed.py [DIR ...] [--repeat N]

``DIR`` defaults to the three labelled trees of real Gluon code: MXNet 1.9.1's
``mxnet/gluon`` (:func:`ast_hybrid.testing.corpus.gluon_tree`), GluonCV 0.10.5
and GluonNLP 0.10.0 (:func:`ast_hybrid.testing.corpus.package_tree`).  Times,
medians of ``N`` repeats:

1. in-process: :func:`ast_hybrid.linter.api.lint_files` over every file (files/s);
2. whole process: ``python -m ast_hybrid lint DIR`` as a subprocess, start included;
3. bare interpreter start (``python -c pass``), to show what process start costs;
4. flake8 on the same files, whole process, one job (``-j1``), default checks.

Prints the ratios flake8 / ast-hybrid.  Not a test: the machine is shared
and noisy, compare only ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _proc(args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return lambda: subprocess.run(args, cwd=cwd, env=env, capture_output=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", help="directories of Python files (default: gluon, gluoncv, gluonnlp)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    if args.trees:
        trees = [Path(t) for t in args.trees]
    else:
        from ast_hybrid.testing.corpus import gluon_tree, package_tree
        trees = [gluon_tree(), package_tree("gluoncv"), package_tree("gluonnlp")]
    from ast_hybrid.linter.config import Settings, discover
    from ast_hybrid.linter.api import lint_files

    settings = Settings(root=trees[0])
    files = [f for tree in trees for f in discover([tree], settings)[0]]
    n_lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    print(f"trees: {', '.join(map(str, trees))}\nfiles: {len(files)}, lines: {n_lines}, "
          f"repeats: {args.repeat} (medians)")

    for target in ("jax", "mxnet"):
        diags = lint_files(files, Settings(root=trees[0], target=target))
        internal = sum(d.code == "HY999" for d in diags)
        print(f"diagnostics, target {target}: {len(diags)} (internal errors: {internal})")

    rows = []
    t_in = _median_time(lambda: lint_files(files, settings), args.repeat)
    rows.append(("ast-hybrid lint, in-process", t_in))
    py = sys.executable
    t_proc = _median_time(_proc([py, "-m", "ast_hybrid", "lint", "--isolated", "-q", "--exit-zero",
                                 *map(str, trees)]), args.repeat)
    rows.append(("ast-hybrid lint, whole process", t_proc))
    t_start = _median_time(_proc([py, "-c", "pass"]), args.repeat)
    rows.append(("python -c pass (process start)", t_start))
    t_imp = _median_time(_proc([py, "-c", "import ast_hybrid.cli, ast_hybrid.linter"]), args.repeat)
    rows.append(("python -c 'import ast_hybrid.cli' (start + imports)", t_imp))
    t_flake = None
    try:
        import flake8  # noqa: F401
    except ImportError:
        print("flake8 is not installed (pip install flake8): no comparison")
    else:
        t_flake = _median_time(_proc([py, "-m", "flake8", "-j1", "--exit-zero", *files]), args.repeat)
        rows.append(("flake8 -j1, whole process", t_flake))

    for name, t in rows:
        rate = f"{len(files) / t:8.0f} files/s" if "start" not in name else ""
        print(f"{name:<52} {t * 1000:8.1f} ms {rate}")
    if t_flake:
        print(f"ratio flake8 / ast-hybrid (whole process): {t_flake / t_proc:.2f}x")
        print(f"ratio flake8 / ast-hybrid (flake8 process vs ast-hybrid in-process): {t_flake / t_in:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
