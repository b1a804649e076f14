"""Two tiers of compile (``core.tiers``): a program answers from a quick compile, XLA's optimised one takes
over once compiled in the background; a network's recorded backward compiles at its first backward as one
program (``core.tape_program``), not op by op (issue 31: GluonCV's ImageNet script op by op)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def test_quick_first_then_the_optimised_program():
    from ast_hybrid.core import tiers

    calls = []

    def fn(xs, scale):
        calls.append(1)         # traced once: both tiers come from one lowering
        return [jnp.tanh(x) * scale + jnp.sum(x) for x in xs]

    program = tiers.Tiered(fn)
    xs = [jnp.arange(12.0).reshape(3, 4) / 7, jnp.ones((5,))]
    first = program(xs, 0.5)
    (entry,) = program._table.values()
    assert entry.lowered is not None and not program.optimised          # the quick program runs
    for _ in range(tiers.AFTER):
        program(xs, 0.5)
    program.finish()
    assert program.optimised
    last = program(xs, 0.5)
    assert len(calls) == 1
    for a, b in zip(first, last):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-7, atol=1e-7)
    program([jnp.ones((2, 2)), jnp.ones((5,))], 1.0)     # a new signature: compiled (quick) again
    assert len(calls) == 2 and not program.optimised


def test_one_tier_unless_two_are_asked_for(monkeypatch):
    from ast_hybrid.core import tiers

    assert not isinstance(tiers.compiled(lambda x: x * 2), tiers.Tiered)     # a plain jax.jit by default
    monkeypatch.setenv("AST_HYBRID_TIERS", "two")
    assert isinstance(tiers.compiled(lambda x: x * 2), tiers.Tiered)


def _mobilenet_step():
    from ast_hybrid import autograd, nd
    from ast_hybrid.gluon import Trainer
    from ast_hybrid.gluon.loss import SoftmaxCrossEntropyLoss
    from ast_hybrid.gluon.model_zoo import vision

    net = vision.get_model("mobilenetv2_0.25", classes=4)
    # weights of their own: drawn from the process's stream, they depended on the tests run before in the same
    # worker, and one draw in three runs flipped enough ReLU6 masks to put the two tiers 4% of a leaf apart
    nd.random.seed(0)
    net.initialize()
    rs = np.random.RandomState(0)
    x, y = nd.array(rs.standard_normal((8, 3, 32, 32))), nd.array(rs.randint(0, 4, 8))
    loss_fn = SoftmaxCrossEntropyLoss()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4})

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
        return {k: p.grad().asnumpy() for k, p in net._collect_params_with_prefix().items() if p.grad_req != "null"}
    return net, step


def test_a_long_tape_compiles_at_its_first_backward_and_tiers_up(monkeypatch, compiles):
    from ast_hybrid.core import tape_program, tiers

    monkeypatch.setenv("AST_HYBRID_TIERS", "two")
    # the two tiers are two compilations of XLA's program; oneDNN's convolutions (xla/onednn.py) change the
    # parameters the third step starts from, and on those the quick and the optimised program flip enough ReLU6
    # masks to be 10% of a leaf apart with XLA's kernels alone too (measured, session 54): compared here on the
    # trajectory of XLA's kernels
    monkeypatch.setenv("AST_HYBRID_ONEDNN", "off")
    net, step = _mobilenet_step()
    tape_program._TAPE_PROGRAMS.clear()
    compiles.on = True
    first = step()
    compiles.on = False
    (program,) = tape_program._TAPE_PROGRAMS.values()      # one program for the tape, at its first backward
    assert not program.optimised
    # op by op, the first backward compiled two or more programs per op and shape (~220 here); now: the
    # forward's programs (one per op and shape), the tape's and the update's
    assert len(compiles) < 160, len(compiles)
    for _ in range(tiers.AFTER):
        step()
    tiers.finish()
    seen = []
    real = tiers.Tiered.__call__

    def spy(self, *args):
        if self is program:
            seen.append(args)
        return real(self, *args)

    monkeypatch.setattr(tiers.Tiered, "__call__", spy)
    last = step()
    assert program.optimised and set(last) == set(first)
    # the quick program's gradients against the optimised one's, same arguments: a network's gradients are
    # ill-conditioned in float32 (a rounding flips a ReLU6 mask): 6e-5 of their scale here, bounded loosely;
    # the well-conditioned case is the next test's
    (args,) = seen
    _close(program, args, 1e-3)


def _close(program, args, rtol):
    from ast_hybrid.core import tiers

    quick = program._jit.lower(*args).compile(tiers.QUICK_OPTIONS)
    (entry,) = program._table.values()
    pairs = [(np.asarray(u), np.asarray(v))
             for u, v in zip(jax.tree_util.tree_leaves(quick(*args)), jax.tree_util.tree_leaves(entry.exe(*args)))]
    # a gradient whose true value is 0 (a BatchNorm's beta feeding the next BatchNorm) is rounding noise in
    # both: each leaf within rtol of its own scale or of the largest gradient's
    top = max(np.abs(v).max() for _, v in pairs)
    for u, v in pairs:
        assert np.abs(u - v).max() <= rtol * max(np.abs(v).max(), top * 1e-2), np.abs(u - v).max()


def test_the_tiers_agree_to_float32_rounding_on_a_smooth_tape(monkeypatch):
    from ast_hybrid import autograd, nd
    from ast_hybrid.core import tape_program, tiers

    monkeypatch.setenv("AST_HYBRID_TIERS", "two")
    tape_program._TAPE_PROGRAMS.clear()
    rs = np.random.RandomState(1)
    ws = [nd.array(rs.standard_normal((16, 16)) / 4) for _ in range(12)]
    for w in ws:
        w.attach_grad()
    x = nd.array(rs.standard_normal((8, 16)))

    def backward():
        with autograd.record():
            h = x
            for w in ws:
                h = nd.tanh(nd.dot(h, w)) + h * 0.5
            loss = (h * h).sum()
        loss.backward()

    for _ in range(tiers.AFTER + 1):
        backward()
    (program,) = tape_program._TAPE_PROGRAMS.values()
    program.finish()
    seen = []
    real = tiers.Tiered.__call__

    def spy(self, *args):
        seen.append(args)
        return real(self, *args)

    monkeypatch.setattr(tiers.Tiered, "__call__", spy)
    backward()
    assert program.optimised and len(seen) == 1
    _close(program, seen[0], 2e-6)


def test_by_default_a_long_tape_is_one_jitted_program_from_its_first_backward():
    from ast_hybrid import autograd, nd
    from ast_hybrid.core import tape_program, tiers

    tape_program._TAPE_PROGRAMS.clear()
    rs = np.random.RandomState(2)
    w0, x0 = rs.standard_normal((8, 8)).astype("f4") / 3, rs.standard_normal((4, 8)).astype("f4")
    w = nd.array(w0)
    w.attach_grad()
    with autograd.record():
        h = nd.array(x0)
        for _ in range(tape_program.AT_ONCE):
            h = nd.tanh(nd.dot(h, w))
        loss = h.sum()
    loss.backward()
    (program,) = tape_program._TAPE_PROGRAMS.values()
    assert not isinstance(program, tiers.Tiered) and program._cache_size() == 1

    def chain(a):
        h = jnp.asarray(x0)
        for _ in range(tape_program.AT_ONCE):
            h = jnp.tanh(h @ a)
        return h.sum()

    np.testing.assert_allclose(w.grad.asnumpy(), np.asarray(jax.grad(chain)(jnp.asarray(w0))), rtol=1e-5,
                               atol=1e-6)


def test_a_short_tape_still_runs_op_by_op_the_first_time():
    from ast_hybrid import autograd, nd
    from ast_hybrid.core import tape_program

    tape_program._TAPE_PROGRAMS.clear()
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x + 1).sum()
    y.backward()
    assert len(tape_program._TAPE_PROGRAMS) == 0
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0, 6.0])
