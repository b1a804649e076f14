"""Training steps: ours vs MXNet 1.9.1, and ``functional(net)`` + optax vs the same step written in JAX.

    python -m bench.train [--quick] [--no-mxnet] [--only NAME ...]    (python -m bench runs main())

One step is what a Gluon user writes, the same source on both sides (``STEP``): ``with autograd.record():
loss = loss_fn(net(x), y)``, ``loss.backward()``, ``trainer.step(batch)``, with ``SoftmaxCrossEntropyLoss``
(not hybridized, as the chapter has it) and SGD with momentum 0.9.  The networks (``NETS``): the chapter's
MLP (512 -> 256 -> 128 -> 2) at batch 256, a LeNet-style CNN on 1 x 28 x 28 at batch 64, issue 32's small CNN
(three 3x3 conv-BatchNorm-ReLU stages of 32/64/128 channels, two 2x2 max-pools, global average pooling, a
Dense(10)) at batch 64 on 3 x 32 x 32, a CIFAR ResNet-20
(GluonCV's ``cifar_resnet20_v1``, written out here) at batch 64 on 3 x 32 x 32, and the model zoo's
``resnet18_v1`` at batch 16 on 3 x 64 x 64.  Ours: ``net.hybridize()``; MXNet: ``hybridize(static_alloc=True,
static_shape=True)`` as a user runs it (``Oracle(as_users_run_it=True)``: its threaded engine, OpenMP on every
core), timed inside its own process in rounds interleaved with ours (``bench/harness.py``).  For the MLP the
``jax.jit`` column is the whole step written by hand in one jitted function (model, loss, SGD with momentum);
for the other networks it is the same network's whole step as ONE XLA program (``one_program_step``:
``functional(net)`` in training mode under one ``jax.jit`` of ``value_and_grad`` + the SGD-momentum update,
running statistics carried): what XLA:CPU gives for that step with no Gluon, tape or dispatch around it,
i.e. the ceiling of any work on our training path.

``functional + optax``: ``ast_hybrid.functional(net)``'s ``apply_fn`` inside one ``jax.jit``'d step with
``jax.value_and_grad`` and ``optax.sgd(momentum=0.9)`` (examples/train_optax.py's pattern), against the same
step with the MLP written by hand in JAX (the ``jax.jit`` column).

Milliseconds per step, medians; compare only ratios from one run (the machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from bench import harness

# GluonCV's cifar_resnet20_v1; its CIFARBasicBlockV1 is the model zoo's BasicBlockV1 (same layers)
RESNET20 = """
BasicBlock = vision.resnet.BasicBlockV1
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Conv2D(16, 3, 1, 1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'))
    in_channels = 16
    for stage, channels in enumerate((16, 32, 64)):
        for i in range(3):
            stride = 2 if stage and not i else 1
            net.add(BasicBlock(channels, stride, channels != in_channels, in_channels))
            in_channels = channels
    net.add(nn.GlobalAvgPool2D(), nn.Dense(10))
"""

# name -> (network source, input shape, classes)
NETS = {
    "MLP b256": ("""
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
""", (256, 512), 2),
    "LeNet b64 28x28": ("""
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Conv2D(6, 5, activation='relu'), nn.MaxPool2D(2, 2), nn.Conv2D(16, 5, activation='relu'),
            nn.MaxPool2D(2, 2), nn.Dense(120, activation='relu'), nn.Dense(84, activation='relu'), nn.Dense(10))
""", (64, 1, 28, 28), 10),
    # issue 32's: a plain Gluon CNN nobody here wrote (conv-BN-ReLU stages of 32/64/128 channels, two max-pools)
    "small CNN b64 32x32, max-pool": ("""
net = nn.HybridSequential()
with net.name_scope():
    for i, c in enumerate((32, 64, 128)):
        net.add(nn.Conv2D(c, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'))
        if i < 2:
            net.add(nn.MaxPool2D(2))
    net.add(nn.GlobalAvgPool2D(), nn.Dense(10))
""", (64, 3, 32, 32), 10),
    "CIFAR ResNet-20 b64 32x32": (RESNET20, (64, 3, 32, 32), 10),
    "resnet18_v1 b16 64x64": ("net = vision.resnet18_v1(classes=10)\n", (16, 3, 64, 64), 10),
}
CALLS = {"MLP b256": 40, "LeNet b64 28x28": 30, "small CNN b64 32x32, max-pool": 8, "CIFAR ResNet-20 b64 32x32": 4,
         "resnet18_v1 b16 64x64": 3}

SETUP = """
net.initialize(mx.init.Xavier())
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9})
x, y = nd.array(inp['x']), nd.array(inp['y'])
batch = x.shape[0]
net(x)
"""

STEP = """
def step():
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch)
    return loss
"""

MX_SETUP = """
from mxnet import autograd
from mxnet.gluon import nn
from mxnet.gluon.model_zoo import vision
""" + "{net}" + SETUP + """net.hybridize(static_alloc=True, static_shape=True)
""" + STEP + """
for _ in range(3): step()
nd.waitall()
mx._bench_train = step
"""

MX_TIME = """
import time
step = mx._bench_train
n = int(inp['n'])
w, t = float(inp['warm']), time.perf_counter()
while True:                        # untimed steps for harness.WARM_S, as ours
    step()
    nd.waitall()
    if time.perf_counter() - t >= w: break
t = time.perf_counter()
for _ in range(n): step()
nd.waitall()
meta['s'] = (time.perf_counter() - t) / n
"""


def data(name):
    shape, classes = NETS[name][1], NETS[name][2]
    rs = np.random.RandomState(0)
    return rs.standard_normal(shape).astype("float32"), rs.randint(0, classes, shape[0]).astype("float32")


def ours_step(name, x, y, hybridize=True):
    """Our side of a scenario: ``step()`` (the namespace it runs in is MXNet's, with our modules)."""
    from ast_hybrid import autograd, gluon, nd
    from ast_hybrid import mxnet as mx
    from ast_hybrid.gluon import nn
    from ast_hybrid.gluon.model_zoo import vision

    env = {"mx": mx, "nd": nd, "gluon": gluon, "nn": nn, "autograd": autograd, "vision": vision, "np": np,
           "inp": {"x": x, "y": y}}
    exec(NETS[name][0] + SETUP + ("net.hybridize()\n" if hybridize else "") + STEP, env)
    return env["step"]


def xent(logits, y):
    """Softmax cross-entropy summed over the batch (the loss of both sides of ``optax_steps``)."""
    import jax
    import jax.numpy as jnp

    return -jnp.take_along_axis(jax.nn.log_softmax(logits), y.astype("int32")[:, None], 1).sum()


def hand_mlp_step(x, y, lr=0.01, momentum=0.9):
    """The MLP's whole SGD-with-momentum step written by hand in JAX, one jitted function (the MXNet update:
    ``mom = momentum * mom - lr * grad / batch``; ``w += mom``)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    dims = (((1,), (1,)), ((), ()))
    rs = np.random.RandomState(1)
    sizes = [(256, 512), (128, 256), (2, 128)]
    params = [(jnp.asarray(rs.uniform(-0.05, 0.05, s).astype("float32")), jnp.zeros(s[0], "float32"))
              for s in sizes]
    moms = jax.tree_util.tree_map(jnp.zeros_like, params)

    def loss_fn(p, x, y):
        h = x
        for i, (w, b) in enumerate(p):
            h = lax.dot_general(h, w, dims) + b
            if i < len(p) - 1:
                h = jax.nn.relu(h)
        return xent(h, y)

    @jax.jit
    def step(p, m, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        m = jax.tree_util.tree_map(lambda m, g: momentum * m - lr * g / x.shape[0], m, g)
        return jax.tree_util.tree_map(lambda p, m: p + m, p, m), m, loss

    state = [params, moms]
    xj, yj = jnp.asarray(x), jnp.asarray(y)

    def run():
        state[0], state[1], loss = step(state[0], state[1], xj, yj)
        return loss
    return run, loss_fn, params


def one_program_step(name, x, y, lr=0.01, momentum=0.9, channel_last=False):
    """``name``'s whole training step (forward in training mode, loss, backward, SGD with momentum as MXNet's
    ``sgd``, running statistics) as one jitted function over ``functional(net)``, traced as written (the step a
    user writes by hand in JAX: ``AST_HYBRID_CHANNEL_LAST=predict`` while it traces); ``channel_last``: as
    ``functional`` runs it by default, its forward through ``xla/channel_last.py`` for differentiation (what
    ``bench.train_ops --channel-last`` profiles)."""
    import jax
    import jax.numpy as jnp

    from ast_hybrid import functional, gluon, nd
    from ast_hybrid import mxnet as mx
    from ast_hybrid.gluon import nn
    from ast_hybrid.core import settings
    from ast_hybrid.gluon.model_zoo import vision
    from ast_hybrid.xla import program as xla_program

    env = {"mx": mx, "nd": nd, "gluon": gluon, "nn": nn, "vision": vision}
    exec(NETS[name][0], env)
    net = env["net"]
    net.initialize(mx.init.Xavier())
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    apply_fn, params = functional(net, nd.array(x))
    trained = {p.name for p in net.collect_params().values() if p.grad_req != "null"}

    def loss_fn(w, aux, xb, yb):
        out, running = apply_fn({**aux, **w}, xb, training=True)
        return xent(out, yb), running

    @jax.jit
    def step(w, aux, mom, xb, yb):
        (loss, running), g = jax.value_and_grad(loss_fn, has_aux=True)(w, aux, xb, yb)
        mom = jax.tree_util.tree_map(lambda m, g: momentum * m - lr * g / xb.shape[0], mom, g)
        w = jax.tree_util.tree_map(lambda p, m: p + m, w, mom)
        return w, {**aux, **{k: v for k, v in running.items() if k in aux}}, mom, loss

    w = {k: v for k, v in params.items() if k in trained}
    state = [w, {k: v for k, v in params.items() if k not in trained}, jax.tree_util.tree_map(jnp.zeros_like, w)]

    layout = "1" if channel_last else "predict"

    def traced(fn):     # run fn with the layout setting read while the step traces (its first call, a lowering)
        before = os.environ.get(xla_program.ENV_SWITCH)
        settings.put(xla_program.ENV_SWITCH, layout)
        try:
            return fn()
        finally:
            if before is None:
                os.environ.pop(xla_program.ENV_SWITCH, None)
            else:
                os.environ[xla_program.ENV_SWITCH] = before

    def step_once():
        state[0], state[1], state[2], loss = step(*state, xj, yj)
        return loss

    def run():
        return step_once() if ran else (ran.append(1), traced(step_once))[1]
    ran = []
    run.compiled = lambda: traced(lambda: step.lower(*state, xj, yj).compile())     # bench/train_ops.py: its HLO
    return run


def optax_steps(x, y):
    """``functional(net)`` + optax and the same step by hand in JAX, each one jitted function."""
    import jax
    import jax.numpy as jnp
    import optax

    from ast_hybrid import functional
    from ast_hybrid.gluon import nn

    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    xj, yj = jnp.asarray(x), jnp.asarray(y).astype("int32")
    apply_fn, params = functional(net, xj[:1])
    _, hand_loss, hand_params = hand_mlp_step(x, y)
    opt = optax.sgd(0.01, momentum=0.9)

    def ours_loss(p, xb, yb):
        return xent(apply_fn(p, xb), yb)

    def make(loss_fn, p):
        @jax.jit
        def step(p, s, xb, yb):
            loss, grads = jax.value_and_grad(loss_fn)(p, xb, yb)
            updates, s = opt.update(grads, s, p)
            return optax.apply_updates(p, updates), s, loss
        state = [p, opt.init(p)]

        def run():
            state[0], state[1], loss = step(state[0], state[1], xj, yj)
            return loss
        return run

    return make(ours_loss, params), make(hand_loss, hand_params)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-mxnet", action="store_true")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    report, rows = harness.Report(), []
    rounds = 3 if args.quick else 7
    with harness.mxnet_oracle(not args.no_mxnet, report) as mx:
        for name in NETS:
            if args.only and name not in args.only:
                continue
            x, y = data(name)
            contenders = {harness.OURS: harness.local(ours_step(name, x, y))}
            one = hand_mlp_step(x, y)[0] if name == "MLP b256" else one_program_step(name, x, y)
            contenders[harness.JIT] = harness.local(one)
            if mx is not None:
                mx.run(MX_SETUP.replace("{net}", NETS[name][0]), x=x, y=y)
                contenders[harness.MXNET] = harness.remote(mx, MX_TIME)
            n = max(1, CALLS[name] // (2 if args.quick else 1))
            t = harness.interleave(contenders, n, rounds=rounds)
            rows.append(report.add("training steps", name, "ms", {k: v * 1e3 for k, v in t.items()}))
        if not args.only or "functional + optax" in args.only:
            x, y = data("MLP b256")
            ours, hand = optax_steps(x, y)
            t = harness.interleave({harness.OURS: harness.local(ours), harness.JIT: harness.local(hand)},
                                   CALLS["MLP b256"], rounds=rounds)
            rows.append(report.add("training steps", "functional + optax, MLP b256", "ms",
                                   {k: v * 1e3 for k, v in t.items()}))
    return rows


if __name__ == "__main__":
    main()
