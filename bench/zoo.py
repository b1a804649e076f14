"""ResNet-18 v1 (MXNet's model zoo structure): ours hybridized vs MXNet 1.9.1 static_alloc, batch 1 and 16.

    python bench/resnet.py [--calls N] [--no-mxnet]

Medians of 5 repeats, ms per call, one run (the machine is noisy: compare ratios only).  MXNet runs as a user
runs it: its threaded engine, OpenMP on every core (the tests' oracle uses one thread).
Our convolutions run in NCHW as written: wrapping each convolution in NCHW<->NHWC transposes measured
the same (XLA already relayouts per convolution); the win of NHWC (a hand-written ResNet-18 in NHWC
measured 1.9x MXNet's time at batch 1 against 2.8x in NCHW) needs the whole program in NHWC.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import numpy as np

from ast_hybrid.gluon.model_zoo import vision

MX_CODE = """
import time
from mxnet.gluon.model_zoo import vision
net = vision.resnet18_v1()
net.initialize()
net.hybridize(static_alloc=True, static_shape=True)
x = nd.array(inp['x'])
for _ in range(3): net(x)
nd.waitall()
reps = []
for _ in range(5):
    t = time.perf_counter()
    for _ in range(int(inp['n'])): y = net(x)
    nd.waitall()
    reps.append((time.perf_counter() - t) / int(inp['n']) * 1e3)
meta['ms'] = sorted(reps)[2]
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--no-mxnet", action="store_true")
    args = ap.parse_args(argv)
    mx = None
    if not args.no_mxnet:
        from ast_hybrid.testing.oracle import Oracle, OracleUnavailable

        try:
            mx = Oracle(as_users_run_it=True)
        except OracleUnavailable as exc:
            print(f"MXNet oracle unavailable, MXNet column not measured: {exc}")
    print(f"{'batch':>5} {'ours ms':>8} {'mxnet ms':>9} {'ours/mxnet':>10}")
    for b in (1, 16):
        n = args.calls if b == 1 else max(2, args.calls // 4)
        x = jax.numpy.asarray(np.random.default_rng(0).standard_normal((b, 3, 224, 224)).astype("float32"))
        net = vision.resnet18_v1()
        net.initialize()
        net.hybridize()
        for _ in range(3):
            jax.block_until_ready(net(x))
        reps = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                y = net(x)
            jax.block_until_ready(y)
            reps.append((time.perf_counter() - t) / n * 1e3)
        ours = statistics.median(reps)
        theirs = mx.run(MX_CODE, x=np.asarray(x), n=np.array(n))["meta"]["ms"] if mx else float("nan")
        print(f"{b:>5} {ours:>8.1f} {theirs:>9.1f} {ours / theirs:>10.2f}")
    if mx:
        mx.close()


if __name__ == "__main__":
    main()
