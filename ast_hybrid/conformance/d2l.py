"""The MXNet notebooks of *Dive into Deep Learning* (d2l 0.17.6) as a conformance suite (issue 30 item 2).

    python -m ast_hybrid.conformance.d2l BOOK [CHAPTER ...] [--only NOTEBOOK ...] [--out DIR] [--timeout S]

``BOOK`` is the book's source at its 0.17.6 release, read into a scratch folder by the user (the notebooks are
the book's, not ours: ``git archive v0.17.6 'chapter_*'`` of d2l-ai/d2l-en); ``CHAPTER`` names chapter folders
(default ``CHAPTERS``: preliminaries up to computational performance), their notebooks in the order of the
chapter's table of contents.  Each notebook's MXNet code (its cells tagged ``mxnet`` or ``all``, or untagged;
IPython's ``%`` lines dropped) runs as Jupyter's "Run all" would (``shims/_ah_notebook.py``), in a process of its
own, three times: under MXNet 1.9.1 (the oracle's Python) with seeds 0 and 1, and under ``ast-hybrid run``
with seed 0.  The files the notebooks download are small local stand-ins (``_d2l_data``), the same on all sides.

A notebook's row: whether MXNet runs it here, whether ours does (else the first error, its cell and cause),
and whether ours prints MXNet's numbers.  Numbers are compared cell by cell, in order: those MXNet prints alike
under both seeds must be ours to 1e-4 of their size (deterministic: shapes, sums, the book's worked examples),
in a cell whose numbers move with the seed (random draws; losses and accuracies after random initialisation,
shuffling, dropout), three in four of them must lie within ten times the largest distance between MXNet's
two runs in that cell (a random draw of ours against MXNet's is no closer than MXNet's against itself),
and after such a cell within 5% where MXNet's runs print alike (a perplexity rounded to one decimal);
a time (``1.2 sec``, ``5000.0 tokens/sec``, any number of a cell that reads a timer) or an address is not
compared.

Both Pythons need the ``d2l`` package (0.17.6) and what it imports (pandas, matplotlib, matplotlib-inline,
IPython, requests); the command says which are missing and how to install them.  Output: ``DIR/d2l.json`` (every
cell's output on each side) and ``DIR/d2l.md`` (the table), default ``DIR`` = ``bench/results``.

A tool on top of the house: may import anything of ast_hybrid; nothing imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import _d2l_data
from .mxnet_tests import run_side

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "shims" / "_ah_notebook.py"
CHAPTERS = ("preliminaries", "linear-networks", "multilayer-perceptrons", "deep-learning-computation",
            "convolutional-neural-networks", "convolutional-modern", "recurrent-neural-networks", "recurrent-modern",
            "attention-mechanisms", "optimization", "computational-performance")
NEEDS = ("d2l.mxnet", "pandas", "matplotlib", "matplotlib_inline", "IPython", "requests")
MEMORY = 8 << 30
_CELL = re.compile(r"^```\{\.python \.input[^}]*\}\s*\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")     # not inside a name
_TIMED = re.compile(r"\btimer\.|\bTimer\(|Benchmark\(|\btime\.(?:time|perf_counter)\(")
_NOT_COMPARED = re.compile(r"[-+]?[\d.]+(?:[eE][-+]?\d+)?\s*(?:\w+/)?(?:sec|ms)\b|0x[0-9a-f]+")


def mxnet_cells(markdown: str) -> list[str]:
    """The cells of a d2l notebook that MXNet's edition runs: tagged ``mxnet`` or ``all``, or untagged."""
    cells = []
    for body in _CELL.findall(markdown):
        lines = body.splitlines()
        if lines and lines[0].startswith("#@tab"):
            tabs = {t.strip() for t in lines[0][len("#@tab"):].split(",")}
            if not tabs & {"mxnet", "all"}:
                continue
        code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
        if code.strip():
            cells.append(code + "\n")
    return cells


def notebooks(book: Path, chapter: str) -> list[Path]:
    """The chapter's notebooks in the order of its ``index.md`` table of contents."""
    folder = book / f"chapter_{chapter}"
    index = (folder / "index.md").read_text()
    toc = re.search(r"```toc.*?\n(.*?)```", index, re.DOTALL)
    names = [line.strip() for line in (toc.group(1) if toc else "").splitlines()
             if line.strip() and not line.strip().startswith(":")]
    return [folder / f"{name}.md" for name in names if (folder / f"{name}.md").is_file()]


def _log(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _numbers(output: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(_NOT_COMPARED.sub(" ", output))]


def compare(first: list[dict], second: list[dict], ours: list[dict], sources=()) -> str | None:
    """None where ours prints MXNet's numbers in every cell (see the module's rule), else the first difference;
    a cell whose source times something (``sources[i]`` reads a timer) is held to the count of its numbers."""
    earlier = False
    for i, (a, b, o) in enumerate(zip(first, second, ours)):
        na, nb, no = _numbers(a["output"]), _numbers(b["output"]), _numbers(o["output"])
        if len(no) != len(na):
            return f"cell {i}: {len(no)} numbers printed where MXNet prints {len(na)}: {o['output'][-300:]!r}"
        if i < len(sources) and _TIMED.search(sources[i]):
            continue
        moving = len(nb) != len(na) or na != nb
        earlier = earlier or moving
        if len(nb) != len(na):
            nb = na
        spread = 10 * max((abs(x - y) for x, y in zip(na, nb)), default=0.0)
        # after a cell that moved with the seed, MXNet's two runs may still print alike what is random (a
        # perplexity to one decimal): 5% of the number then
        off = [(x, y, z) for x, y, z in zip(na, nb, no)
               if abs(z - x) > max(1e-4 * max(abs(x), 1.0), spread, 0.05 * abs(x) if earlier else 0.0)]
        if off and (not earlier or len(off) > 0.25 * len(na)):
            x, y, z = off[0]
            return (f"cell {i}: {z!r} where MXNet prints {x!r} (seed 1: {y!r}; {len(off)} of {len(na)} numbers "
                    f"off); output {o['output'][-300:]!r}")
    return None


def _cause(error: str) -> str:
    if re.search(r"not available in ast-hybrid|NotAvailable", error):
        return "not available"
    if re.search(r"ConnectionError|no network|gpu|cuda", error, re.IGNORECASE):
        return "gpu/network"
    return "internal error"


def run_notebook(path: Path, work: Path, sides: dict, timeout: float) -> dict:
    """One notebook on the three sides: its row."""
    name = f"{path.parent.name[len('chapter_'):]}/{path.stem}"
    cells = mxnet_cells(path.read_text())
    row = {"notebook": name, "cells": len(cells)}
    logs = {}
    for side, (command, env, seed) in sides.items():
        root = work / side
        cells_dir = root / "cells" / name
        cells_dir.mkdir(parents=True, exist_ok=True)
        for old in cells_dir.glob("cell_*.py"):
            old.unlink()
        for i, code in enumerate(cells):
            (cells_dir / f"cell_{i:03d}.py").write_text(code)
        log = root / "logs" / f"{name.replace('/', '.')}.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)
        cwd = root / "run" / path.parent.name
        cwd.mkdir(parents=True, exist_ok=True)
        ran = run_side([*command, str(DRIVER), str(cells_dir), str(log), str(seed)], env, str(cwd), timeout, MEMORY)
        records = _log(log)
        logs[side] = records
        done = len(records) == len(cells) and not any(r["error"] for r in records)
        row[side] = {"ran": done, "cells_run": len(records), "stopped": ran["stopped"],
                     "seconds": round(sum(r["seconds"] for r in records), 1)}
        if not done:
            bad = next((r for r in records if r["error"]), None)
            row[side]["error"] = (f"cell {len(records) - 1}: {bad['error']}" if bad else
                                  f"stopped ({ran['stopped'] or ran['returncode']}): {ran['output'][-500:]}")
            row[side]["traceback"] = bad["traceback"] if bad else ""
    row["d2l_used"] = logs["mxnet0"][-1].get("d2l_used", []) if logs["mxnet0"] else []
    row["mxnet_runs"] = row["mxnet0"]["ran"]
    row["ours_runs"] = row["ours"]["ran"]
    if row["ours_runs"] and row["mxnet_runs"]:
        row["difference"] = compare(logs["mxnet0"], logs["mxnet1"] if row["mxnet1"]["ran"] else logs["mxnet0"],
                                    logs["ours"], cells)
        row["agrees"] = row["difference"] is None
    else:
        row["agrees"] = False
        if not row["ours_runs"]:
            row["cause"] = _cause(row["ours"]["error"])
    return row


def _sides(work: Path) -> dict:
    from ast_hybrid.testing import oracle

    fixtures = work / "fixtures"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_", "PYTHONPATH"))}
    sides = {}
    for side, seed in (("mxnet0", 0), ("mxnet1", 1), ("ours", 0)):
        home = work / side / "mxnet-home"
        _d2l_data.write(fixtures, home)
        env = dict(base, MXNET_HOME=str(home), AH_D2L_FIXTURES=str(fixtures), OMP_NUM_THREADS="1",
                   AH_SIDE="mxnet" if side.startswith("mxnet") else "ours", MPLBACKEND="Agg")
        if side.startswith("mxnet"):
            command = [str(oracle.venv_python())]
        else:
            command = [sys.executable, "-m", "ast_hybrid", "run"]
            env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        sides[side] = (command, env, seed)
    return sides


def _missing(command, env) -> list[str]:
    code = ("import importlib.util as u, sys\n"
            f"print(' '.join(n for n in {list(NEEDS)!r} if u.find_spec(n.split('.')[0]) is None))")
    done = subprocess.run([command[0], "-c", code], env=env, capture_output=True, text=True)
    return done.stdout.split()


def library_names(python) -> list[str]:
    """The functions and classes ``d2l/mxnet.py`` defines (its top-level ``def``/``class``, read, not run)."""
    import ast

    done = subprocess.run([str(python), "-c", "import d2l, os; print(os.path.dirname(d2l.__file__))"],
                          capture_output=True, text=True)
    path = Path(done.stdout.strip()) / "mxnet.py"
    if done.returncode or not path.is_file():
        return []
    tree = ast.parse(path.read_text())
    return sorted({n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))})


def coverage(rows, names) -> tuple[list[str], list[str]]:
    """Of the library's ``names``: those run by a notebook where ours prints MXNet's numbers, and the rest."""
    passed = set().union(*[set(r.get("d2l_used", ())) for r in rows if r["agrees"]]) & set(names)
    return sorted(passed), sorted(set(names) - passed)


def markdown(rows, names=()) -> str:
    ran = [r for r in rows if r["mxnet_runs"] and r["cells"]]      # a notebook of prose only is not counted
    lines = ["| notebook | cells | MXNet runs | ours runs | MXNet's numbers | ours (s) | MXNet (s) | "
             "first difference |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        note = r.get("difference") or (r["ours"].get("error") if not r["ours_runs"] else "") or \
            (r["mxnet0"].get("error") if not r["mxnet_runs"] else "")
        note = note or "" if r["cells"] else "no MXNet code (not counted)"
        note = note.replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| {r['notebook']} | {r['cells']} | {'yes' if r['mxnet_runs'] else 'no'} | "
                     f"{'yes' if r['ours_runs'] else 'no'} | {'yes' if r['agrees'] else 'no'} | "
                     f"{r['ours']['seconds']} | {r['mxnet0']['seconds']} | {note} |")
    lines.append("")
    lines.append(f"Of the {len(ran)} notebooks MXNet runs here, ours runs "
                 f"{sum(r['ours_runs'] for r in ran)} and prints MXNet's numbers in {sum(r['agrees'] for r in ran)}.")
    if names:
        passed, rest = coverage(rows, names)
        lines.append("")
        lines.append(f"Of the {len(names)} functions and classes of the d2l library (`d2l/mxnet.py`), {len(passed)} "
                     f"run in a notebook where ours prints MXNet's numbers; not run so: {', '.join(rest)}.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ast_hybrid.conformance.d2l",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("book", help="d2l-en's sources at v0.17.6 (a scratch copy with the chapter_* folders)")
    parser.add_argument("chapters", nargs="*", default=list(CHAPTERS))
    parser.add_argument("--only", nargs="*", help="notebook names (without .md) to run, of the chapters given")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--work", default=None, help="scratch folder (default: ast-hybrid-d2l in the system's "
                        "temporary folder)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per notebook and side")
    args = parser.parse_args(argv)
    book, out = Path(args.book), Path(args.out)
    work = Path(args.work) if args.work else Path(tempfile.gettempdir()) / "ast-hybrid-d2l"
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    sides = _sides(work.resolve())
    for side in ("mxnet0", "ours"):
        missing = _missing(*sides[side][:2])
        if missing:
            python = sides[side][0][0]
            parser.error(f"{python} lacks {', '.join(missing)}: `{python} -m pip install d2l==0.17.6 --no-deps` "
                         "and `pandas matplotlib matplotlib-inline ipython requests`")
    report = out / "d2l.json"
    rows = json.loads(report.read_text()) if report.is_file() else []
    for chapter in args.chapters:
        for path in notebooks(book, chapter):
            if args.only and path.stem not in args.only:
                continue
            row = run_notebook(path, work.resolve(), sides, args.timeout)
            rows = [r for r in rows if r["notebook"] != row["notebook"]] + [row]
            print(f"{row['notebook']}: mxnet {row['mxnet_runs']}, ours {row['ours_runs']}, agrees {row['agrees']}"
                  + (f" -- {row.get('difference') or row['ours'].get('error', '')}"[:400] if not row["agrees"] else ""),
                  flush=True)
            report.write_text(json.dumps(rows, indent=1))
    order = {c: i for i, c in enumerate(CHAPTERS)}
    rows.sort(key=lambda r: order.get(r["notebook"].split("/")[0], len(order)))
    (out / "d2l.md").write_text(markdown(rows, library_names(sides["mxnet0"][0][0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
