"""oneDNN's convolutions (``ast_hybrid/xla/onednn.py``) against XLA:CPU's, one convolution at a time.

    python -m bench.onednn_conv [--quick]

The convolutions of the training benchmarks (``bench/train.py``: LeNet b64, the small CNN b64, CIFAR ResNet-20
b64, resnet18_v1 b16 at 64x64) and a depthwise and a grouped one, each timed alone, channel-last (``N, H, W, C``
activations, ``H, W, I, O`` kernels, as a training program holds them), ms per call, medians of interleaved
rounds: forward, input gradient and weight gradient apart.

- **ours**: the oneDNN primitive through XLA's FFI, under ``jax.jit``;
- **jax.jit**: ``lax.conv_general_dilated`` under ``jax.jit`` (XLA:CPU's convolution), and for the gradients
  its own transposes (``jax.vjp``), as a program differentiated as traced computes them.

Needs the kernels built (``pip install -e '.[onednn]'`` and a C++ compiler); says so and stops otherwise.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from bench import harness
from ast_hybrid.xla import onednn

DN = ("NHWC", "HWIO", "NHWC")

# (label, input N H W C, kernel KH KW, filters, stride, padding, groups)
CASES = [
    ("LeNet 1->6 5x5 @28 b64", (64, 28, 28, 1), (5, 5), 6, 1, 0, 1),
    ("LeNet 6->16 5x5 @12 b64", (64, 12, 12, 6), (5, 5), 16, 1, 0, 1),
    ("small CNN 3->32 @32 b64", (64, 32, 32, 3), (3, 3), 32, 1, 1, 1),
    ("small CNN 32->64 @16 b64", (64, 16, 16, 32), (3, 3), 64, 1, 1, 1),
    ("small CNN 64->128 @8 b64", (64, 8, 8, 64), (3, 3), 128, 1, 1, 1),
    ("ResNet-20 16 @32 b64", (64, 32, 32, 16), (3, 3), 16, 1, 1, 1),
    ("ResNet-20 16->32 /2 @32 b64", (64, 32, 32, 16), (3, 3), 32, 2, 1, 1),
    ("ResNet-20 64 @8 b64", (64, 8, 8, 64), (3, 3), 64, 1, 1, 1),
    ("resnet18 7x7/2 3->64 @64 b16", (16, 64, 64, 3), (7, 7), 64, 2, 3, 1),
    ("resnet18 64 @16 b16", (16, 16, 16, 64), (3, 3), 64, 1, 1, 1),
    ("resnet18 512 @2 b16", (16, 2, 2, 512), (3, 3), 512, 1, 1, 1),
    ("depthwise 3x3 64 @16 b16", (16, 16, 16, 64), (3, 3), 64, 1, 1, 64),
    ("grouped 3x3/2 4 groups @16 b16", (16, 16, 16, 64), (3, 3), 64, 2, 1, 4),
]


def _functions(xs, k, o, stride, pad, groups):
    geo = onednn.Geometry(xs[1:3], k, (stride, stride), (1, 1), (pad, pad), (pad, pad), groups)
    rng = np.random.RandomState(0)
    x = jnp.asarray(rng.randn(*xs).astype("f4"))
    w = jnp.asarray(rng.randn(*k, xs[3] // groups, o).astype("f4") * 0.1)

    def xla(a, b):
        return lax.conv_general_dilated(a, b, (stride, stride), [(pad, pad)] * 2, dimension_numbers=DN,
                                        feature_group_count=groups)
    y = xla(x, w)
    dy = jnp.asarray(rng.randn(*y.shape).astype("f4"))
    ours = {"forward": (jax.jit(lambda a, b: onednn.conv(a, b, geo)), (x, w)),
            "input gradient": (jax.jit(lambda d, b: onednn.conv_data(d, b, geo)), (dy, w)),
            "weight gradient": (jax.jit(lambda a, d: onednn.conv_weights(a, d, geo)), (x, dy))}
    theirs = {"forward": (jax.jit(xla), (x, w)),
              "input gradient": (jax.jit(lambda d, b: jax.vjp(lambda a: xla(a, b), x)[1](d)[0]), (dy, w)),
              "weight gradient": (jax.jit(lambda a, d: jax.vjp(lambda b: xla(a, b), w)[1](d)[0]), (x, dy))}
    return ours, theirs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    report = harness.Report()
    lib = onednn.library()
    if not isinstance(lib, onednn._Library):
        report.cannot("oneDNN's convolutions", lib.reason)
        return []
    print(f"oneDNN {lib.version}")
    rows = []
    for label, xs, k, o, stride, pad, groups in CASES[:4] if args.quick else CASES:
        ours, theirs = _functions(xs, k, o, stride, pad, groups)
        for part in ours:
            f, a = ours[part]
            g, b = theirs[part]
            n = 20 if args.quick else 50
            t = harness.interleave({harness.OURS: harness.local(f, *a), harness.JIT: harness.local(g, *b)}, n,
                                   rounds=3 if args.quick else 5)
            rows.append(report.add("convolutions, oneDNN vs XLA:CPU", f"{label}, {part}", "ms",
                                   {name: v * 1e3 for name, v in t.items()}))
    return rows


if __name__ == "__main__":
    main()
