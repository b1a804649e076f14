"""Every benchmark in one run: ``python -m bench [--quick] [--only SCENARIO ...] [--no-mxnet] [--out DIR]``.

Scenarios, in order (each a ``scenario(report, ...)`` of its own module, timed by ``bench/harness.py``:
contenders interleaved round by round, medians, ratios to MXNet 1.9.1 static_alloc and to hand-written
``jax.jit`` where there is one):

- ``mlp``: the chapter's MLP at batch 1, 64 and 1024 (``bench/mlp.py``);
- ``control_flow``: while+if, an RNN over 50 steps as a Python ``for``, a loop with ``break``, a tiny
  function's call overhead, their first calls, conversion of a 100-line function (``bench/control_flow.py``);
- ``zoo``: the vision model zoo at batch 1 and 16, and at batch 1 on a 64x64 input where the model takes one,
  with ONNX Runtime on MXNet's export; first calls on an empty compile cache and in a second process on a
  filled one (``bench/zoo.py``; ``--quick``: two models at 64x64, batch 1 and 4);
- ``deploy``: the model zoo's CPU inference here (XLA), through our ONNX export in ONNX Runtime, and through
  MXNet's own ONNX export in the same ONNX Runtime (``bench/deploy.py``);
- ``blocks``: plain ``nn.Block`` models hybridized against op by op (``bench/block_hybridize.py``);
- ``train``: training steps, ``bench/train.py``'s ``main()`` where that file exists;
- ``convert``: conversion of every function of MXNet's mxnet/gluon (``bench/convert_speed.py``);
- ``lint``: lint throughput against flake8 (``bench/lint_speed.py``);
- ``lsp``: the language server's diagnostics round trip on an edit of a 2,000-line file, against linting
  the same text in-process (``bench/lsp_latency.py``).

``python -m bench --gpu-check [--dry-run]`` runs the GPU check instead (``bench/gpu_check.py``).

Writes ``bench.md``, ``bench.json`` and ``bench.png`` (``--quick``: ``quick.*``) into ``bench/results/``, and
lists what could not run and why.  The machine is shared and noisy: compare only ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
import traceback
from pathlib import Path

from bench import harness

SCENARIOS = ("mlp", "control_flow", "zoo", "deploy", "blocks", "train", "convert", "lint", "lsp")


def run_train(report, quick, mxnet=True):
    """``bench/train.py``'s ``main(argv)`` (written apart); rows it returns (``harness.Row`` or dicts with
    ``case``, ``unit``, ``times``) join the report."""
    if importlib.util.find_spec("bench.train") is None:
        report.cannot("training steps", "bench/train.py is not there yet")
        return
    train = importlib.import_module("bench.train")
    rows = train.main((["--quick"] if quick else []) + ([] if mxnet else ["--no-mxnet"]))
    for r in rows if isinstance(rows, (list, tuple)) else ():
        r = vars(r) if isinstance(r, harness.Row) else r
        report.add(r.get("scenario", "training steps"), r["case"], r["unit"], r["times"], r.get("note", ""))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--gpu-check" in argv:         # the GPU check is a script of its own (bench/gpu_check.py)
        from bench import gpu_check

        return gpu_check.main([a for a in argv if a != "--gpu-check"])
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls, two small models")
    ap.add_argument("--only", nargs="+", choices=SCENARIOS, help="run these scenarios only")
    ap.add_argument("--no-mxnet", action="store_true", help="leave MXNet's columns out")
    ap.add_argument("--no-onnx", action="store_true", help="leave ONNX Runtime (on MXNet's export) out")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args(argv)
    from bench import block_hybridize, control_flow, convert_speed, deploy, lint_speed, lsp_latency, mlp, zoo

    zoo.fresh_compile_cache()     # first calls timed compiling, and the user's cache left alone
    report = harness.Report()
    quick = args.quick
    with harness.mxnet_oracle(not args.no_mxnet, report) as mx:
        steps = {"mlp": lambda: mlp.scenario(report, mx, quick),
                 "control_flow": lambda: control_flow.scenario(report, quick),
                 "zoo": lambda: zoo.scenario(report, mx, quick,
                                             onnx=zoo.onnx_folder(report, mx is not None and not args.no_onnx)),
                 "deploy": lambda: deploy.scenario(report, mx if not args.no_onnx else None, quick),
                 "blocks": lambda: block_hybridize.scenario(report, 20 if quick else None),
                 "train": lambda: run_train(report, quick, not args.no_mxnet),
                 "convert": lambda: convert_speed.scenario(report, quick),
                 "lint": lambda: lint_speed.scenario(report, quick),
                 "lsp": lambda: lsp_latency.scenario(report, quick)}
        for name in args.only or SCENARIOS:
            t = time.perf_counter()
            print(f"== {name}", flush=True)
            try:
                steps[name]()
            except Exception as exc:  # noqa: BLE001 - one scenario failing is reported, the rest still run
                traceback.print_exc()
                report.cannot(f"scenario {name}", f"{type(exc).__name__}: {exc}")
            print(f"== {name}: {time.perf_counter() - t:.0f} s", flush=True)
    for path in report.write(args.out, "quick" if quick else "bench"):
        print("wrote", path)
    print(report.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
