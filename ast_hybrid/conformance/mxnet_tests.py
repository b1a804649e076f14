"""MXNet 1.9.1's own unit tests as a conformance suite (issue 30 item 3).

    python -m ast_hybrid.conformance.mxnet_tests FOLDER [FILE ...] [--out DIR] [--timeout S] [--memory-gb G]

``FOLDER`` is MXNet's ``tests/python/unittest`` at the 1.9.1 release, read into a scratch folder by the user
(the files are MXNet's, not ours: ``git archive 1.9.1 tests/python/unittest tests/python/common`` of
apache/mxnet); ``FILE`` names files in it (default: the ones about what ast-hybrid implements, ``FILES``).
Each file runs twice under pytest (each outcome logged as it is known, with the peak memory so far:
``shims/_ah_outcomes.py``), in a process of its own: under MXNet 1.9.1 (the oracle's Python, pytest
from ``oracle.ensure_pytest_pkgs``) and under ``import mxnet`` = ast-hybrid.  Both sides get the same path:
the folder, its sibling ``common`` (``models.py``) and a stand-in for ``nose`` (``shims/``), which
``common.py`` imports and which no longer imports on Python 3.11.

Per file the report says how many tests MXNet passes here, how many of those pass under ast-hybrid, and for
each one that does not, its cause:

- ``not available``: the test reached an MXNet API ast-hybrid does not have, and the error said so;
- ``wrong value``: an assertion failed (a value, a shape, a dtype, an expected error not raised);
- ``internal error``: any other exception (a bug of ours until shown otherwise);
- ``gpu/network``: it needs a GPU or a download;
- ``timeout`` / ``memory``: the file's process ran past ``--timeout`` or its resident memory past
  ``--memory-gb`` (default 4; or 1.25 times the peak of MXNet's own process on the file, where MXNet needs
  more), and was stopped: the test running then (``stopped_in``) and those after it count here.

The peak resident memory of each side's process is reported too.  Output: ``DIR/mxnet_tests.json`` (every
test's outcome on both sides and our message) and ``DIR/mxnet_tests.md`` (the table and the most frequent
causes), default ``DIR`` = ``bench/results``.

A tool on top of the house: may import anything of ast_hybrid; nothing imports it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIMS = HERE / "shims"
FILES = ("test_loss.py", "test_autograd.py", "test_init.py", "test_gluon_trainer.py", "test_optimizer.py",
         "test_gluon.py", "test_gluon_rnn.py", "test_ndarray.py", "test_numpy_ndarray.py", "test_numpy_op.py",
         "test_operator.py")
MXNET_MEMORY = 16 << 30        # MXNet's own side is stopped only past this
CAUSES = ("not available", "wrong value", "internal error", "gpu/network", "timeout", "memory")
_GPU_OR_NETWORK = re.compile(r"\bgpu\b|cuda|cudnn|download|urlopen|URLError|ConnectionError|name resolution",
                             re.IGNORECASE)
_NOT_AVAILABLE = re.compile(r"not available in ast-hybrid|NotAvailable|ModuleNotAvailable|NotSupported")


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (Linux ``/proc``; 0 where unreadable)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def run_side(command, env, cwd, timeout: float, memory: int) -> dict:
    """Run ``command`` watching its memory: ``{"returncode", "peak", "stopped" (None/"timeout"/"memory"),
    "output"}``."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    state = {"peak": 0, "stopped": None}
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    start = time.monotonic()
    while proc.poll() is None:
        rss = _tree_rss(proc.pid)
        state["peak"] = max(state["peak"], rss)
        if rss > memory or time.monotonic() - start > timeout:
            state["stopped"] = "memory" if rss > memory else "timeout"
            proc.kill()
            break
        time.sleep(0.25)
    proc.wait()
    reader.join(timeout=10)
    return {"returncode": proc.returncode, "peak": state["peak"], "stopped": state["stopped"],
            "output": "".join(chunks)[-4000:]}


def outcomes(log: Path) -> dict:
    """``{test id: (outcome, message, peak bytes so far)}`` from ``_ah_outcomes``' JSON lines (outcome: passed,
    failed or skipped; a setup or teardown failure is a failure)."""
    found = {}
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                r = json.loads(line)
            except ValueError:          # a line cut by a stopped process
                continue
            if r["outcome"] in ("collection error", "started"):
                continue
            if r["id"] in found and found[r["id"]][0] == "failed":
                continue
            found[r["id"]] = (r["outcome"], r["message"], r.get("maxrss", 0))
    return found


def _running(log: Path):
    """The test that had started and not ended when the log stops (the one running when a side was stopped)."""
    last = None
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            last = r["id"] if r["outcome"] == "started" else (None if r["id"] == last else last)
    return last


def _collection_errors(log: Path) -> str:
    if not log.exists():
        return ""
    lines = [json.loads(line) for line in log.read_text().splitlines() if '"collection error"' in line]
    return "\n".join(r["message"] for r in lines)


def cause_of(message: str) -> str:
    """The cause of one of our failures, from its message (see the module doc)."""
    if _NOT_AVAILABLE.search(message):
        return "not available"
    if _GPU_OR_NETWORK.search(message.split("\n", 1)[0]):
        return "gpu/network"
    first = message.strip().split("\n", 1)[0]
    if first.startswith(("AssertionError", "assert ")) or "AssertionError" in first:
        return "wrong value"
    return "internal error"


def _error_lines(output: str) -> str:
    """pytest's ``E   ...`` lines of a run's output (a file that did not import), else its tail."""
    lines = [line[4:] for line in output.splitlines() if line.startswith("E   ")]
    return "\n".join(lines[-5:]) if lines else output[-300:]


def _env(extra_path, base=None):
    env = dict(base or os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in extra_path)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["MXNET_HOME"] = env.get("MXNET_HOME", str(Path.home() / ".mxnet"))
    return env


def _logged_side(log: Path):
    """MXNet's side as an earlier run logged it (``--reuse-mxnet``), or None when there is no complete log."""
    tests = outcomes(log)
    if not tests or _running(log):
        return None
    peak = max(r[2] for r in tests.values())
    return {"returncode": 0, "peak": peak, "stopped": None, "output": "", "tests": tests, "limit": MXNET_MEMORY,
            "collection": _collection_errors(log), "running": None}


def run_file(folder: Path, name: str, work: Path, timeout: float, memory: int, reuse_mxnet=False) -> dict:
    """One file on both sides: the row of the report (``reuse_mxnet``: MXNet's side from its log in ``work``
    where an earlier run left a complete one)."""
    from ast_hybrid.testing import oracle

    path = [SHIMS, folder, folder.parent / "common"]
    pytest_args = [name, "-q", "-p", "no:cacheprovider", "-p", "_ah_outcomes", "-o", "addopts=", "--rootdir",
                   str(folder)]
    sides = {}
    for side in ("mxnet", "ours"):
        log = work / f"{Path(name).stem}.{side}.jsonl"
        if side == "mxnet" and reuse_mxnet and _logged_side(log) is not None:
            sides[side] = _logged_side(log)
            continue
        log.unlink(missing_ok=True)
        if side == "mxnet":
            command = [str(oracle.venv_python()), "-m", "pytest", *pytest_args]
            # scipy built for MXNet's numpy comes with the GluonCV folder (test_gluon imports scipy.sparse)
            extra = [oracle.gluon_pkgs()] if oracle.gluon_pkgs().is_dir() else []
            env = _env([oracle.ensure_pytest_pkgs(), *path, *extra],
                       {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))})
        else:
            command = [sys.executable, "-m", "ast_hybrid.conformance.mxnet_tests", "--pytest-under-ours", *pytest_args]
            env = _env([*path, Path(__file__).resolve().parents[2]])
        env["AH_OUTCOMES"] = str(log)
        # MXNet's side may use what it needs (up to MXNET_MEMORY); ours at most --memory-gb, or 1.25 times what
        # MXNet's process peaked at where MXNet itself needs more (test_gluon's 537 MB pooling input: 4.8 GB)
        limit = MXNET_MEMORY if side == "mxnet" else max(memory, int(1.25 * sides["mxnet"]["peak"]))
        ran = run_side(command, env, str(folder), timeout, limit)
        sides[side] = dict(ran, tests=outcomes(log), limit=limit, collection=_collection_errors(log),
                           running=_running(log) if ran["stopped"] else None)
    theirs, ours = sides["mxnet"]["tests"], sides["ours"]["tests"]
    row = {"file": name, "tests": len(theirs), "mxnet_passed": 0, "ours_passed": 0,
           "causes": collections.Counter(), "failures": {}, "peak_mxnet": sides["mxnet"]["peak"],
           "peak_ours": sides["ours"]["peak"], "stopped": sides["ours"]["stopped"], "limit": sides["ours"]["limit"],
           "stopped_in": sides["ours"]["running"],
           "mxnet_stopped": sides["mxnet"]["stopped"]}
    if not theirs:
        row["note"] = "MXNet's run gave no results: " + sides["mxnet"]["output"][-500:]
    for test, (result, _, _) in theirs.items():
        if result != "passed":
            continue
        row["mxnet_passed"] += 1
        mine = ours.get(test)
        if mine is not None and mine[0] == "passed":
            row["ours_passed"] += 1
            continue
        if mine is None:        # never ran: the process was stopped, or the file did not import
            output = sides["ours"]["collection"] or _error_lines(sides["ours"]["output"])
            cause, message = sides["ours"]["stopped"] or cause_of(output), output
        elif mine[0] == "skipped":
            cause, message = ("gpu/network" if _GPU_OR_NETWORK.search(mine[1]) else "internal error"), mine[1]
        else:
            cause, message = cause_of(mine[1]), mine[1]
        row["causes"][cause] += 1
        row["failures"][test] = {"cause": cause, "message": message[:1500]}
    row["causes"] = dict(row["causes"])
    # where our memory grew: the tests after which our process's peak rose by more than 256 MB
    row["memory_steps"] = [(t, r[2]) for (t, r), before in zip(ours.items(), [0] + [r[2] for r in ours.values()])
                           if r[2] - before > 256 << 20]
    return row


def _first_line(message: str) -> str:
    line = message.strip().split("\n", 1)[0]
    return re.sub(r"0x[0-9a-f]+|\d+\.\d+e?-?\d*", "…", line)[:160]


def markdown(rows) -> str:
    head = ["| file | MXNet passes | of those, ours | % | " + " | ".join(CAUSES) + " | peak RSS ours / MXNet (GB) |",
            "|---|---:|---:|---:|" + "---:|" * len(CAUSES) + "---|"]
    total_m = sum(r["mxnet_passed"] for r in rows)
    total_o = sum(r["ours_passed"] for r in rows)
    for r in rows:
        pct = 100 * r["ours_passed"] / r["mxnet_passed"] if r["mxnet_passed"] else 0.0
        head.append(f"| {r['file']} | {r['mxnet_passed']} | {r['ours_passed']} | {pct:.0f}% | " +
                    " | ".join(str(r["causes"].get(c, 0)) for c in CAUSES) +
                    f" | {r['peak_ours'] / 2 ** 30:.1f} / {r['peak_mxnet'] / 2 ** 30:.1f} |")
    pct = 100 * total_o / total_m if total_m else 0.0
    head.append(f"| **all** | {total_m} | {total_o} | {pct:.0f}% | " + " | ".join(
        str(sum(r["causes"].get(c, 0) for r in rows)) for c in CAUSES) + " | |")
    lines = head + ["", "Most frequent causes (first line of our error, per file):", ""]
    for r in rows:
        counts = collections.Counter(f"{f['cause']}: {_first_line(f['message'])}" for f in r["failures"].values())
        if counts:
            lines.append(f"- **{r['file']}**")
            lines += [f"  - {n} x {text}" for text, n in counts.most_common(8)]
        if r.get("note"):
            lines.append(f"- **{r['file']}**: {r['note'][:300]}")
        if r.get("stopped"):
            lines.append(f"- **{r['file']}**: our process was stopped ({r['stopped']}, limit "
                         f"{r['limit'] / 2 ** 30:.1f} GB) in `{r.get('stopped_in')}`; the tests after it did not run")
    return "\n".join(lines) + "\n"


def _pytest_under_ours(args) -> int:
    """This process as a pytest run with ``import mxnet`` = ast-hybrid, as ``ast-hybrid run`` makes it (numpy's
    removed aliases, ``np.NaN``..., restored: MXNet's tests ran beside numpy < 1.24)."""
    from ast_hybrid.core.npmode import mxnet_dtypes

    mxnet_dtypes()
    import ast_hybrid.mxnet as compat
    import pytest
    from ast_hybrid.mxnet._activate import restore_numpy_aliases

    compat.install()
    restore_numpy_aliases()
    return pytest.main(args)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--pytest-under-ours"]:
        return _pytest_under_ours(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m ast_hybrid.conformance.mxnet_tests",
                                     description="MXNet 1.9.1's unit tests under MXNet and under ast-hybrid.")
    parser.add_argument("folder", help="MXNet 1.9.1's tests/python/unittest (a scratch copy)")
    parser.add_argument("files", nargs="*", help=f"test files in it (default: {' '.join(FILES)})")
    parser.add_argument("--out", default="bench/results", help="where mxnet_tests.json/.md go")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per file and side")
    parser.add_argument("--memory-gb", type=float, default=4.0,
                        help="our process stopped past this RSS (or 1.25 x MXNet's peak, if higher)")
    parser.add_argument("--reuse-mxnet", action="store_true",
                        help="take MXNet's side from the complete logs an earlier run left in --out (MXNet's "
                             "outcomes do not change with ours); run it where there is none")
    args = parser.parse_args(argv)
    folder = Path(args.folder).resolve()
    if not (folder / "common.py").is_file():
        parser.error(f"{folder} has no common.py: give MXNet 1.9.1's tests/python/unittest folder")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.files or FILES:
        if not (folder / name).is_file():
            parser.error(f"no {name} in {folder}")
        start = time.monotonic()
        rows.append(run_file(folder, name, out, args.timeout, int(args.memory_gb * 2 ** 30), args.reuse_mxnet))
        r = rows[-1]
        print(f"{name}: MXNet passes {r['mxnet_passed']} of {r['tests']}, ours {r['ours_passed']} of those "
              f"({time.monotonic() - start:.0f} s) {r['causes']}", flush=True)
        (out / "mxnet_tests.json").write_text(json.dumps(rows, indent=1))
        (out / "mxnet_tests.md").write_text(markdown(rows))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
