"""Plain ``nn.Block`` models hybridized (``gluon/whole.py``, issue 31) against the same models op by op.

    python -m bench.block_hybridize [--calls N]

MXNet runs a ``Block``'s ``forward`` op by op whatever ``hybridize()`` is asked; ast-hybrid converts it and
runs the block as one program.  Models: the d2l chapter's MLP as a plain ``nn.Sequential`` (a Block), d2l's
``FancyMLP`` (Python ``while``/``if`` on tensor values, a constant parameter) and a gated stack (a loop over
children, ``if`` on each output), at batch 1 and 64; one training step (record, backward, ``Trainer.step``)
of the gated stack.  Per model: the op-by-op call, the hybridized call, its first call (trace and compile),
microseconds, medians of interleaved rounds (``bench/harness.py``); the ratio op by op / hybridized.
"""

from __future__ import annotations

import argparse

import numpy as np

from ast_hybrid import autograd, nd
from ast_hybrid.gluon import Block, Trainer, nn
from bench import harness


class FancyMLP(Block):
    """d2l's FancyMLP as its MXNet np edition writes it, ``X /= 2`` written ``X = X / 2`` (in place, it runs op
    by op: gluon/whole.py)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rand_weight = self.params.get_constant("rand_weight", nd.random.uniform(shape=(20, 20)))
        self.dense = nn.Dense(20, activation="relu")

    def forward(self, X):
        X = nd.relu(nd.dot(self.dense(X), self.rand_weight.data()) + 1)
        X = self.dense(X)
        while nd.abs(X).sum() > 1:
            X = X / 2
        return X.sum()


class Gated(Block):
    def __init__(self, width=64, depth=4, **kwargs):
        super().__init__(**kwargs)
        self.layers = nn.Sequential()
        for _ in range(depth):
            self.layers.add(nn.Dense(width, activation="tanh"))
        self.out = nn.Dense(10)

    def forward(self, x):
        for layer in self.layers:
            y = layer(x)
            x = y + x if y.mean() > 0 else y
        return self.out(x)


def _mlp():
    net = nn.Sequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    return net


MODELS = {"d2l MLP (nn.Sequential)": (_mlp, 512), "FancyMLP": (FancyMLP, 20), "gated stack": (Gated, 64)}


def _pair(make, width, batch):
    x = nd.array(np.random.RandomState(0).randn(batch, width).astype("float32"))
    nets = []
    for _ in range(2):
        net = make()
        net.initialize()
        net(x)          # the deferred shapes, op by op
        nets.append(net)
    return nets, x


def scenario(report, calls=None):
    for name, (make, width) in MODELS.items():
        for batch in (1, 64):
            (plain, hybrid), x = _pair(make, width, batch)
            hybrid.hybridize()
            first = harness.once(hybrid, x)
            t = harness.interleave({"op by op": harness.local(plain, x), "hybridized": harness.local(hybrid, x)},
                                   calls or 50, rounds=5)
            row = report.add("plain Block hybridized", f"{name} b{batch}", "us",
                             {"op by op": t["op by op"] * 1e6, "hybridized": t["hybridized"] * 1e6,
                              "hybridized first call": first * 1e6})
            row.ratios["op by op / hybridized"] = t["op by op"] / t["hybridized"]
    (plain, hybrid), x = _pair(Gated, 64, 64)
    hybrid.hybridize()
    steps = {}
    for label, net in (("op by op", plain), ("hybridized", hybrid)):
        trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

        def step(net=net, trainer=trainer):
            with autograd.record():
                loss = (net(x) ** 2).mean()
            loss.backward()
            trainer.step(64)
            return loss
        steps[label] = harness.local(step)
    t = harness.interleave(steps, calls or 30, rounds=5)
    row = report.add("plain Block hybridized", "gated stack b64, a training step", "us",
                     {k: v * 1e6 for k, v in t.items()})
    row.ratios["op by op / hybridized"] = t["op by op"] / t["hybridized"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int)
    args = ap.parse_args(argv)
    report = harness.Report()
    scenario(report, args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
