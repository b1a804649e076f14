"""What the whole-program channel-last layout gives: the vision model zoo hybridized, layout on and off.

    python -m bench.channel_last [--quick] [--models NAME ...] [--batch 1 16]

Two worker processes, one with ``AST_HYBRID_CHANNEL_LAST=0`` (the program as traced: MXNet's NCHW, XLA
transposing around each convolution) and one with the layout on (``xla/channel_last.py``, the default),
each building MXNet's own model_zoo networks on our front (same parameters: initialised from one seed),
hybridized; timed in interleaved rounds (5, ``--quick`` 3), medians, ms per call; and the ratio on/off
(below 1: the layout is faster).  Also printed: each worker's first call (trace, compile) in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from bench.zoo import FULL

SWITCH = "AST_HYBRID_CHANNEL_LAST"
QUICK = {"squeezenet1.1": 224, "mobilenet1.0": 224}


def _worker():
    """Serve ``{"name", "size", "batch", "n"}`` lines with ``{"s": seconds per call, "first": s}``."""
    from ast_hybrid import nd
    from ast_hybrid.gluon import finish_tuning
    from bench.zoo import vision

    v, nets = vision(), {}
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["name"], req["size"], req["batch"])
        if key not in nets:
            import mxnet as mx      # our compat module under `ast-hybrid`'s import hook (bench.zoo.vision)

            mx.random.seed(0)
            net = v.get_model(key[0], classes=1000)
            net.initialize(mx.init.Xavier())
            net(nd.array(np.random.RandomState(0).standard_normal((1, 3, key[1], key[1])).astype("float32")))
            net.hybridize()
            x = nd.array(np.random.RandomState(1).standard_normal((key[2], 3, key[1], key[1])).astype("float32"))
            t = time.perf_counter()
            net(x).wait_to_read()
            first = time.perf_counter() - t
            finish_tuning(net)      # steady state: the tuning the first call started, ended (xla/tuning.py)
            net(x).wait_to_read()
            nets[key] = (net, x, first)
        net, x, first = nets[key]
        t = time.perf_counter()
        for _ in range(req["n"]):
            y = net(x)
        y.wait_to_read()
        print(json.dumps({"s": (time.perf_counter() - t) / req["n"], "first": first,
                          "sum": float(np.asarray(y.asnumpy(), dtype=np.float64).sum())}), flush=True)


class _Worker:
    def __init__(self, on):
        env = dict(os.environ, **{SWITCH: "1" if on else "0"})
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.channel_last", "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True)
        self.last = {}

    def __call__(self, name, size, batch, n):
        self.proc.stdin.write(json.dumps({"name": name, "size": size, "batch": batch, "n": n}) + "\n")
        self.proc.stdin.flush()
        self.last = json.loads(self.proc.stdout.readline())
        return self.last["s"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--batch", nargs="*", type=int, default=[1, 16])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return _worker()
    models = {m: FULL.get(m, 224) for m in args.models} if args.models else (QUICK if args.quick else FULL)
    workers = {"off": _Worker(False), "on": _Worker(True)}
    print(f"{'model':<18} {'size':>4} {'b':>3} {'off ms':>9} {'on ms':>9} {'on/off':>6} {'1st s off, on':>14} "
          f"{'|sum diff|/|sum|':>16}")
    rows = []
    try:
        for name, size in models.items():
            for b in args.batch:
                n = max(1, (20 if size < 224 else 6) // b)
                times = {k: [] for k in workers}
                sums = {}
                for r in range(3 if args.quick else 5):
                    for k in (list(workers) if r % 2 == 0 else list(workers)[::-1]):
                        times[k].append(workers[k](name, size, b, n) * 1e3)
                        sums[k] = workers[k].last["sum"]
                ms = {k: statistics.median(v) for k, v in times.items()}
                first = {k: w.last["first"] for k, w in workers.items()}
                diff = abs(sums["on"] - sums["off"]) / max(abs(sums["off"]), 1e-30)
                print(f"{name:<18} {size:>4} {b:>3} {ms['off']:>9.2f} {ms['on']:>9.2f} {ms['on'] / ms['off']:>6.2f} "
                      f"{first['off']:>6.1f} {first['on']:>6.1f} {diff:>16.1e}", flush=True)
                rows.append({"model": name, "size": size, "batch": b, "ms": ms, "first_s": first, "sum_rel_diff": diff})
    finally:
        for w in workers.values():
            w.close()
    return rows


if __name__ == "__main__":
    main()
