"""The driver of ``python -m ast_hybrid.conformance``: run the models, keep the rows (JSON), print the table."""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import _models, _sides

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_JSON = ROOT / "bench" / "results" / "conformance.json"
DEFAULT_MD = ROOT / "bench" / "results" / "conformance.md"
FAMILIES = ("classification", "segmentation", "pose", "detection", "action", "action3d", "other", "nlp")


def _mxnet_env() -> dict:
    from ast_hybrid.testing import oracle
    return dict(os.environ, PYTHONPATH=str(oracle.gluon_pkgs()), OMP_NUM_THREADS="1",
                MXNET_ENGINE_TYPE="NaiveEngine")


def _mxnet_python() -> str:
    from ast_hybrid.testing import oracle
    oracle.ensure_gluon_pkgs()
    return str(oracle.ensure_venv())


def list_models() -> list[tuple[str, str]]:
    """(name, family) of every GluonCV model-zoo constructor (as MXNet's GluonCV lists them), then GluonNLP's."""
    code = "import json, gluoncv; print(json.dumps(list(gluoncv.model_zoo.get_model_list())))"
    done = subprocess.run([_mxnet_python(), "-c", code], env=_mxnet_env(), capture_output=True, text=True,
                          timeout=300)
    if done.returncode:
        raise RuntimeError("MXNet's GluonCV could not list its models: " + done.stderr.strip()[-500:])
    names = json.loads(done.stdout.strip().splitlines()[-1])
    rows = [(n, _models.family_of(n)) for n in names] + [(n, "nlp") for n in _models.NLP_MODELS]
    order = {f: i for i, f in enumerate(("classification", "segmentation", "pose", "detection", "other",
                                         "action", "action3d", "nlp"))}
    return sorted(rows, key=lambda r: order[r[1]])       # cheapest families first, zoo order within


def _side(argv: list[str], work: str, timeout: float, ours: bool, env_extra=None) -> tuple[dict | None, str]:
    if ours:
        command = [sys.executable, "-m", "ast_hybrid.conformance._sides"] + argv
        env = dict(os.environ)
    else:
        command = [_mxnet_python(), str(HERE / "_sides.py")] + argv
        env = dict(_mxnet_env(), **_models.mxnet_env(argv[1]), **(env_extra or {}))
    side = argv[0]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=str(ROOT))
    except subprocess.TimeoutExpired:
        return None, f"timeout: {side} side ran past {timeout:.0f} s"
    path = Path(work) / f"{side}.json"
    if not path.exists():
        tail = " ".join(done.stderr.strip().splitlines()[-1:])[:200]
        return None, f"crash: {side} side's process exited with {done.returncode} ({tail})"
    return json.loads(path.read_text()), ""


def run_model(name: str, family: str, timeout: float = 600, stand_ins: bool = False, between=None,
              timed: bool = True) -> dict:
    """One row (see the package's docstring).  ``between(work)``, if given, runs after MXNet's side (tests use it
    to damage what MXNet saved); ``timed=False``: values only, no timed calls on either side (no ``ratio``)."""
    flags = [] if timed else ["--untimed"]
    row = {"model": name, "family": family, "status": "fail", "built": False, "plain": False, "hybrid": False,
           "error": None, "ratio": None, "cause": "", "stand_ins": []}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="conformance-") as work:
        ref, trouble = _side(["mxnet", name, family, work] + flags, work, timeout, ours=False)
        if ref is None and trouble.startswith("timeout"):        # slow here, not impossible: its own status
            row.update(status="timeout", cause=trouble)
        elif ref is None or not ref.get("ok"):
            row.update(status="mxnet", cause="MXNet itself: " + (trouble or ref.get("cause", "")))
        else:
            row["shape"] = ref.get("shape")
            if ref.get("sensitivity") is not None:     # how far MXNet's own output moves for a 1e-6 input change
                row["sensitivity"] = ref["sensitivity"]
            if ref.get("base_served"):           # the constructor downloads a base network whatever it is told
                row["base_served"] = ref["base_served"]
            shutil.copy(Path(work) / "outputs.npz", Path(work) / "outputs-mxnet.npz")   # as MXNet wrote them
            if between is not None:
                between(Path(work))
            ours, trouble = _side(["ours", name, family, work] + flags + (["--stand-ins"] if stand_ins else []),
                                  work, timeout, ours=True)
            if ours is None:
                row.update(status="timeout" if trouble.startswith("timeout") else "fail", cause=trouble)
            else:
                row.update(built=ours["built"], plain=ours["plain"], hybrid=ours["hybrid"],
                           stand_ins=ours.get("stand_ins", []), cause=ours.get("cause", ""))
                errors = [ours.get(k) for k in ("error_plain", "error_hybrid") if ours.get(k) is not None]
                row["error"] = max(errors) if errors else None
                mode = "hybrid" if ref.get("time_hybrid") else "plain"     # MXNet's hybridized may itself fail
                if ours.get("time_" + mode) and ref.get("time_" + mode):
                    row["ratio"] = ours["time_" + mode] / ref["time_" + mode]
                if ref.get("hybrid_cause"):
                    row["mxnet_hybrid_cause"] = ref["hybrid_cause"]
                row["status"] = "match" if ours["plain"] and ours["hybrid"] else "fail"
                if "kept" in ref:                # detectors: how much the reference decides
                    row.update(kept=ref["kept"], distinct=ref["distinct"])
                    if row["status"] == "fail" and row["built"] and ref["distinct"] < ref["kept"]:
                        row["cause"] += (f"; MXNet's reference has tied scores ({ref['distinct']} distinct "
                                         f"of {ref['kept']} kept)")
                    elif row["status"] == "match" and not ref["kept"]:
                        row["cause"] = "note: MXNet's reference keeps no detection (only the -1 rows compared)"
                moved = ref.get("sensitivity") or 0.0
                if row["status"] == "fail" and ref.get("finite") is False:
                    row.update(status="mxnet", cause="MXNet itself: its output is not finite (overflow at this "
                               "initialisation), so it decides nothing; ours: " + row["cause"])
                elif row["status"] == "fail" and row["built"] and moved > 1e-4 and row["error"] <= 100 * moved:
                    row.update(status="ill-conditioned", cause=f"{row['cause']}; MXNet's own output moves "
                               f"{moved:.1e} of its scale for a 1e-6 relative change of the input")
                elif row["status"] == "fail" and row["built"] and row["error"] is not None and \
                        np.isfinite(row["error"]) and _models.mxnet_env(name).get("MXNET_MKLDNN_ENABLED") != "0":
                    _kernel_spread(row, name, family, work, timeout)
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def _kernel_spread(row: dict, name: str, family: str, work: str, timeout: float) -> None:
    """A row that differs: how far MXNet's own output moves when its float ops run on its reference CPU kernels
    instead of oneDNN's (``MXNET_MKLDNN_ENABLED=0``, the same parameters and input).  Where that moves MXNet as
    far as ours differs (simple_pose_resnet50_v1d_int8: a float Deconvolution's last bits, summed in oneDNN's
    order, flip a few requantized int8 values after it, 7.8e-3 of the output's scale either way), MXNet's
    reference is ill-conditioned in its float kernels' rounding: named so, measured (``kernel_spread``)."""
    sub = Path(work) / "reference-kernels"
    sub.mkdir()
    ref, _ = _side(["mxnet", name, family, str(sub)], str(sub), timeout, ours=False,
                   env_extra={"MXNET_MKLDNN_ENABLED": "0"})
    if ref is None or not ref.get("ok") or not (sub / "outputs.npz").exists():
        return
    with np.load(Path(work) / "outputs-mxnet.npz") as a, np.load(sub / "outputs.npz") as b:
        first, second = [a["arr_%d" % i] for i in range(len(a.files))], [b["arr_%d" % i] for i in range(len(b.files))]
    spread = _sides._error(second, first)
    row["kernel_spread"] = spread
    if spread > 1e-4 and row["error"] <= 100 * spread:
        row.update(status="ill-conditioned", cause=f"{row['cause']}; MXNet's own output moves {spread:.1e} of its "
                   "scale when its float ops run on its reference CPU kernels instead of oneDNN's")


def totals(rows: list[dict], listed: int) -> dict:
    count = {s: sum(r["status"] == s for r in rows) for s in ("match", "fail", "ill-conditioned", "timeout", "mxnet")}
    count.update(listed=listed, run=len(rows), built=sum(r["built"] for r in rows), not_run=listed - len(rows))
    return count


def _cell(value, fmt):
    return "" if value is None else (fmt % value)


def table(rows: list[dict], not_run: list[str]) -> str:
    yn = {True: "y", False: "n"}
    lines = ["| model | family | input | builds | plain | hybrid | worst error | ours/MXNet "
             "| first cause of a failure |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        shape = "x".join(map(str, r["shape"][1:])) if r.get("shape") else ""
        cause = r["cause"].replace("|", "\\|") if r["status"] != "match" or r["cause"].startswith("note:") else ""
        model = r["model"] + (" (s)" if r.get("stand_ins") else "")
        lines.append(f"| {model} | {r['family']} | {shape} | {yn[r['built']]} | {yn[r['plain']]} | "
                     f"{yn[r['hybrid']]} | {_cell(r['error'], '%.1e')} | {_cell(r['ratio'], '%.2f')} | {cause} |")
    if not_run:
        lines.append("")
        lines.append(f"Not run ({len(not_run)}): " + ", ".join(not_run))
    return "\n".join(lines)


def summary(count: dict, stand_ins: bool | int) -> str:
    """``stand_ins``: how many rows were given stand-ins (or whether this run asked for them)."""
    text = (f"{count['listed']} constructors listed, {count['run']} run: {count['built']} build, "
            f"{count['match']} match MXNet plain and hybridized, {count['fail']} fail, "
            f"{count['ill-conditioned']} differ "
            f"where MXNet's own output is ill-conditioned, {count['timeout']} time out, "
            f"{count['mxnet']} MXNet itself cannot run on CPU here; {count['not_run']} not run.")
    if stand_ins is True:
        return text + " STAND-INS given to missing import-time names (--stand-ins)."
    if stand_ins:
        return text + (f" STAND-INS: {stand_ins} rows, marked (s), ran while GluonCV/GluonNLP still needed "
                       "stand-ins for names missing at import time (--stand-ins; each row's stand_ins field in the "
                       "JSON lists them); the other rows ran without.")
    return text


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ast_hybrid.conformance", description=__doc__)
    p.add_argument("--family", choices=FAMILIES, action="append", help="only these families (repeatable)")
    p.add_argument("--only", metavar="PATTERN", help="only models whose name matches (fnmatch, e.g. 'resnet*')")
    p.add_argument("--limit", type=int, metavar="N", help="run at most N models this time")
    p.add_argument("--timeout", type=float, default=600, metavar="S", help="seconds per side per model (600)")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="models checked at once (1)")
    p.add_argument("--resume", action="store_true", help="keep the rows already in --json, run the others")
    p.add_argument("--redo", action="store_true",
                   help="with --resume: run the selected models again even where they have a row")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"rows (default {DEFAULT_JSON.relative_to(ROOT)})")
    p.add_argument("--markdown", type=Path, default=DEFAULT_MD, help="where the table goes (also printed)")
    p.add_argument("--stand-ins", action="store_true",
                   help="development only: empty stand-ins for names missing at import time (reported)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.limit is not None and args.limit < 0 or args.jobs < 1 or args.timeout <= 0:
        print("error: --limit must be >= 0, --jobs >= 1, --timeout > 0", file=sys.stderr)
        return 2
    try:
        models = list_models()
    except Exception as exc:          # noqa: BLE001 - no oracle: a diagnostic, not a traceback
        print(f"error: cannot list the models ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2
    selected = [(n, f) for n, f in models if (not args.family or f in args.family)
                and (not args.only or fnmatch.fnmatch(n, args.only))]
    rows = {}
    if args.resume and args.json.exists():
        rows = {r["model"]: r for r in json.loads(args.json.read_text())["rows"]}
    todo = [(n, f) for n, f in selected if args.redo or n not in rows][:args.limit]

    def save():
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": list(rows.values())}, indent=1))

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_model, n, f, args.timeout, args.stand_ins): n for n, f in todo}
        for future in concurrent.futures.as_completed(futures):
            row = future.result()
            rows[row["model"]] = row
            print(f"{row['model']}: {row['status']} {row['cause'][:150]}", file=sys.stderr, flush=True)
            save()
    save()
    # the report covers every listed model (--family/--only choose what runs, not what the table shows)
    shown = [rows[n] for n, _ in models if n in rows]
    not_run = [n for n, _ in models if n not in rows]
    given = sum(bool(r.get("stand_ins")) for r in shown)
    text = summary(totals(shown, len(models)), given) + "\n\n" + table(shown, not_run) + "\n"
    print(text)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text)
    return 0
