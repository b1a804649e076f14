"""What every benchmark here shares: contenders timed in interleaved rounds, medians, ratios, one report.

A *contender* is a callable ``time(n) -> seconds per call``: :func:`local` makes one from ``f(*args)`` in this
process; a contender in another process (MXNet in its oracle) times itself there and returns the same.
:func:`interleave` runs one round of every contender, then the next round, so that all see the same noise
(the machine is shared: two runs differ by up to 1.5x, compare only ratios taken in one run), and returns
each one's median.  :class:`Report` collects the rows of all scenarios, what could not run and why, and
writes them as Markdown, JSON and a PNG plot.
"""

from __future__ import annotations

import contextlib
import json
import math
import platform
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import jax

OURS, MXNET, JIT = "ours", "mxnet", "jax.jit"     # the names the ratios are taken between
ORT = "onnxruntime"                                 # ONNX Runtime on MXNet's own mx.onnx export (bench/zoo.py)


def ready(y):
    """Wait for ``y`` (an NDArray, a jax array or a pytree of them) to be computed."""
    return jax.block_until_ready(jax.tree_util.tree_map(lambda v: getattr(v, "_arr", v), y))


# Each round of a contender starts with untimed calls for at least this long (and at least n // 5 of them),
# every contender alike (MXNet's and ONNX Runtime's timing snippets read it as ``inp['warm']``).  After 0.4 s
# of idleness, ours took 5-40 calls to come back to its steady time on this machine (squeezenet1.1 b1: 10.8 ms
# for the first calls, 7.0 after 40), MXNet's not (bench/HISTORY.md): a round of 6 calls right after another
# contender's round measured whichever state the machine was left in.
WARM_S = 0.3


def remote(mx, code: str, key: str = "s", scale: float = 1.0):
    """A contender timed in another process: ``code`` run by ``mx`` (an oracle) with ``inp['n']`` calls and
    ``inp['warm']`` seconds of untimed ones sets ``meta[key]``, the time per call (times ``scale``: seconds)."""
    import numpy as np

    return lambda n: mx.run(code, n=np.array(n), warm=np.array(WARM_S))["meta"][key] * scale


def local(f, *args, warmup: int = 3):
    """A contender calling ``f(*args)`` here: warmed up (compiled, the optimised programs compiled in the
    background swapped in), then each round runs untimed calls for ``WARM_S`` seconds (at least ``n // 5``)
    and ``n`` timed ones, waiting for the last result."""
    from ast_hybrid.core import tiers

    for _ in range(warmup):
        ready(f(*args))
    tiers.finish()          # steady state: what compiles in the background (core/tiers.py) has taken over
    ready(f(*args))

    def time_it(n):
        t, k = time.perf_counter(), 0
        while k < max(1, n // 5) or time.perf_counter() - t < WARM_S:
            ready(f(*args))
            k += 1
        t = time.perf_counter()
        for _ in range(n):
            y = f(*args)
        ready(y)
        return (time.perf_counter() - t) / n

    return time_it


def interleave(contenders: dict, n: int, rounds: int = 5) -> dict:
    """Median seconds per call of each contender, over ``rounds`` rounds in which each runs ``n`` calls in
    turn (the order rotates, so none always goes first)."""
    names = list(contenders)
    times = {k: [] for k in names}
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            times[k].append(contenders[k](n))
    return {k: statistics.median(v) for k, v in times.items()}


def once(f, *args) -> float:
    """Seconds of one call of ``f(*args)`` (a first call: tracing and compiling included)."""
    t = time.perf_counter()
    ready(f(*args))
    return time.perf_counter() - t


@dataclass
class Row:
    scenario: str
    case: str
    unit: str                       # of the values in ``times``
    times: dict                     # contender -> median (missing: did not run)
    note: str = ""
    ratios: dict = field(default_factory=dict)

    def __post_init__(self):
        ours = self.times.get(OURS)
        for base in (MXNET, JIT, ORT):
            if ours is not None and self.times.get(base):
                self.ratios[f"{OURS}/{base}"] = ours / self.times[base]


class Report:
    """Rows of every scenario, plus what could not run and why."""

    def __init__(self):
        self.rows: list[Row] = []
        self.missing: list[str] = []
        self.started = time.time()

    def add(self, scenario, case, unit, times, note=""):
        row = Row(scenario, case, unit, {k: v for k, v in times.items() if v is not None}, note)
        self.rows.append(row)
        shown = ", ".join(f"{k} {_fmt(v)}" for k, v in row.times.items())
        ratios = ", ".join(f"{k} {v:.2f}" for k, v in row.ratios.items())
        print(f"[{scenario}] {case}: {shown} {row.unit}{'; ' + ratios if ratios else ''}"
              f"{' (' + note + ')' if note else ''}", flush=True)
        return row

    def cannot(self, what: str, why: str):
        self.missing.append(f"{what}: {why}")
        print(f"NOT RUN: {what}: {why}", flush=True)

    def markdown(self) -> str:
        out = [f"Machine: {platform.machine()}, {_cores()} cores, {platform.python_implementation()} "
               f"{platform.python_version()}, jax {jax.__version__}; medians of interleaved rounds, one run.", ""]
        for scenario in dict.fromkeys(r.scenario for r in self.rows):
            rows = [r for r in self.rows if r.scenario == scenario]
            names = list(dict.fromkeys(k for r in rows for k in r.times))
            ratios = list(dict.fromkeys(k for r in rows for k in r.ratios))
            out += [f"### {scenario}", "", "| case | unit | " + " | ".join(names + ratios) + " | note |",
                    "|---|---|" + "---|" * (len(names) + len(ratios)) + "---|"]
            for r in rows:
                cells = [_fmt(r.times[k]) if k in r.times else "–" for k in names]
                cells += [f"{r.ratios[k]:.2f}" if k in r.ratios else "–" for k in ratios]
                out.append(f"| {r.case} | {r.unit} | " + " | ".join(cells) + f" | {r.note} |")
            out.append("")
        if self.missing:
            out += ["### Not run", ""] + [f"- {m}" for m in self.missing] + [""]
        return "\n".join(out)

    def write(self, folder: Path, stem: str = "bench") -> list[Path]:
        folder.mkdir(parents=True, exist_ok=True)
        md, js, png = (folder / f"{stem}.{ext}" for ext in ("md", "json", "png"))
        md.write_text(self.markdown())
        js.write_text(json.dumps({"machine": {"cores": _cores(), "platform": platform.platform(),
                                              "jax": jax.__version__},
                                  "seconds": round(time.time() - self.started, 1),
                                  "rows": [asdict(r) for r in self.rows], "not_run": self.missing}, indent=1))
        written = [md, js]
        try:
            self.plot(png)
            written.append(png)
        except ImportError as exc:
            self.cannot("the PNG plot", f"matplotlib is not installed ({exc}); pip install -e '.[bench]'")
            md.write_text(self.markdown())
        return written

    def plot(self, path: Path):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        keys = ((f"{OURS}/{MXNET}", "tab:blue"), (f"{OURS}/{JIT}", "tab:orange"), (f"{OURS}/{ORT}", "tab:green"))
        rows = [r for r in self.rows if any(k in r.ratios for k, _ in keys)]
        fig, ax = plt.subplots(figsize=(10, max(3.0, 0.28 * len(rows) + 1.5)))
        for j, (key, colour) in enumerate(keys):
            ys = [i + 0.27 * j for i, r in enumerate(rows) if key in r.ratios]
            ax.barh(ys, [r.ratios[key] for r in rows if key in r.ratios], height=0.27, color=colour, label=key)
        ax.set_yticks([i + 0.27 for i in range(len(rows))], [f"{r.scenario}: {r.case}" for r in rows], fontsize=7)
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.invert_yaxis()
        ax.set_xlabel("time ratio (below 1: ours faster)")
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


@contextlib.contextmanager
def mxnet_oracle(wanted: bool, report: Report):
    """MXNet 1.9.1 as users run it (``Oracle(as_users_run_it=True)``: threaded engine, OpenMP on every core)
    for the MXNet contenders, or None (recorded in ``report``) where it is not installed or not wanted."""
    if not wanted:
        report.cannot("MXNet columns", "--no-mxnet")
        yield None
        return
    from ast_hybrid.testing.oracle import Oracle, OracleUnavailable

    try:
        mx = Oracle(as_users_run_it=True)
    except OracleUnavailable as exc:
        report.cannot("MXNet columns", f"the oracle is unavailable ({exc}); python -m ast_hybrid.testing.oracle setup")
        yield None
        return
    try:
        yield mx
    finally:
        mx.close()


def _fmt(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _cores():
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
