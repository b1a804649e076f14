"""A steady-state Gluon training step compiles nothing, and its compiled backward gives the eager one's
gradients (issue 11, item 3: ``tape_program.compiled_tape``, ``block._hybrid_node``, ``Trainer.update``)."""

from __future__ import annotations

import numpy as np
import pytest


def _setup(hybridize):
    from ast_hybrid import autograd, gluon, nd
    from ast_hybrid.gluon import nn

    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.BatchNorm(), nn.Dense(3))
    net.initialize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rs = np.random.RandomState(0)
    x, y = nd.array(rs.standard_normal((8, 5))), nd.array(rs.randint(0, 3, 8))
    net(x)
    if hybridize:
        net.hybridize()

    def grads():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        return {k: p.grad().asnumpy() for k, p in net._collect_params_with_prefix().items() if p.grad_req != "null"}
    return net, grads


@pytest.mark.parametrize("hybridize", [False, True])
def test_the_compiled_backward_gives_the_eager_gradients(hybridize):
    from ast_hybrid.core import tape_program

    net, grads = _setup(hybridize)
    tape_program._TAPE_PROGRAMS.clear()     # a cache the earlier tests filled (cleared whole past 64 programs)
    programs = len(tape_program._TAPE_PROGRAMS)
    first = grads()            # the tape met for the first time: eager jax.vjp
    second = grads()           # the same structure again: one compiled program
    assert len(tape_program._TAPE_PROGRAMS) == programs + 1
    for k in first:
        np.testing.assert_allclose(second[k], first[k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("hybridize", [False, True])
def test_a_steady_state_training_step_compiles_nothing(hybridize, compiles):
    from ast_hybrid import gluon
    from ast_hybrid.core import tiers

    net, grads = _setup(hybridize)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    counts = []
    compiles.on = True
    for i in range(6):
        if i == 3:
            tiers.finish()      # the optimised programs compiled in the background (core/tiers.py)
        compiles.clear()
        grads()
        trainer.step(8)
        counts.append(len(compiles))
    assert counts[0] > 0, "the listener sees compiles (the first step's)"
    assert counts[3:] == [0, 0, 0], counts


def test_a_builtin_loss_runs_compiled_and_a_users_subclass_op_by_op():
    """A built-in loss the user did not hybridize runs as one program (one tape node, not one per op), with
    the op-by-op values and gradients; a subclass keeps MXNet's imperative call (its hybrid_forward may do
    anything MXNet allows imperatively)."""
    from ast_hybrid import autograd, gluon, nd

    class Mine(gluon.loss.SoftmaxCrossEntropyLoss):
        pass

    rs = np.random.RandomState(1)
    pred, label = nd.array(rs.standard_normal((6, 4))), nd.array(rs.randint(0, 4, 6))
    results = {}
    for name, loss_fn in (("builtin", gluon.loss.SoftmaxCrossEntropyLoss()), ("subclass", Mine())):
        p = pred.copy()
        p.attach_grad()
        with autograd.record():
            loss = loss_fn(p, label)
        loss.backward()
        results[name] = loss.asnumpy(), p.grad.asnumpy(), loss_fn._compiled is not None
    assert results["builtin"][2] and not results["subclass"][2]
    for got, want in zip(results["builtin"][:2], results["subclass"][:2]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_a_step_refreshes_each_compiled_program_once(monkeypatch):
    """``Trainer.update`` tells each hybridized block once per step that its parameters changed, not once per
    parameter: a block's refresh walks all its parameters, so once per parameter made a step quadratic in
    them (resnet18_v1: 62 refreshes of 100 parameters each per step, ~10 ms)."""
    from ast_hybrid import autograd, gluon, nd
    from ast_hybrid.gluon import nn, programs

    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.array(np.random.RandomState(0).standard_normal((4, 5)))
    calls = []
    real = programs.Compiled.refresh
    monkeypatch.setattr(programs.Compiled, "refresh", lambda self: calls.append(self) or real(self))
    for _ in range(3):
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(4)
    assert len(calls) == 3, f"{len(calls)} refreshes in 3 steps of one block with 6 parameters"
    assert net(x).shape == (4, 3)


def test_a_tape_with_a_list_argument_compiles_once():
    """An op given a list of tracked arrays (an RNN from scratch: ``np.concatenate(outputs)``) keys its node
    (its list as a tuple in the key): the tape's backward compiles once, then runs compiled (its key was
    unhashable, so each step's backward replayed op by op under jax.vjp: d2l's RNNs 2-3x MXNet's time)."""
    from ast_hybrid import autograd
    from ast_hybrid.core import tape_program
    from ast_hybrid.mxnet import np as mnp

    w = mnp.ones((3, 3)) * 0.5
    w.attach_grad()
    x = mnp.ones((2, 3))
    tape_program._TAPE_PROGRAMS.clear()
    grads = []
    for _ in range(3):
        with autograd.record():
            h, outs = x, []
            for _ in range(4):
                h = mnp.tanh(mnp.dot(h, w))
                outs.append(h)
            loss = mnp.concatenate(outs, axis=0).sum()
        loss.backward()
        grads.append(w.grad.asnumpy())
    assert len(tape_program._TAPE_PROGRAMS) == 1
    np.testing.assert_allclose(grads[2], grads[0], rtol=1e-6)


def test_numpy_scalars_in_an_ops_arguments_are_static():
    """A shape given as NumPy integers (``tuple(np.random.randint(...))``, as MXNet's own tests and many
    scripts make them) is static in the compiled backward, as a Python int is (it was traced, and the op's
    ``int()`` of it failed with jax's ConcretizationTypeError from the third backward on); a NumPy scalar
    and a Python scalar of the same value do not share a program."""
    from ast_hybrid import autograd, nd
    from ast_hybrid.core import tape_program

    x = nd.ones((2, 1))
    x.attach_grad()
    tape_program._TAPE_PROGRAMS.clear()
    for shape, scale in [((np.int64(2), np.int64(3)), np.float32(2)), ((2, 3), 2.0)]:
        for _ in range(3):
            with autograd.record():
                y = nd.broadcast_to(x, shape=shape) * scale
            y.backward()
            np.testing.assert_allclose(x.grad.asnumpy(), [[6.0], [6.0]])
    assert len(tape_program._TAPE_PROGRAMS) == 2


@pytest.mark.parametrize("hybridize", [False, True])
def test_a_training_step_leaves_no_cyclic_garbage(hybridize):
    """A step's tape, its nodes and the arrays they hold are freed when the step's arrays go, without Python's
    cyclic collector: a node's key built by a closure calling itself, and BatchNorm's backward action holding
    the node's own outputs, were cycles that kept every node of a step until a gen-2 collection (GluonCV's
    ImageNet script op by op: 71,000 objects, 300 ms pauses, activations held longer)."""
    import gc

    from ast_hybrid import gluon

    net, grads = _setup(hybridize)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    for _ in range(3):
        grads()
        trainer.step(8)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        grads()
        trainer.step(8)
        gc.collect()
        garbage = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        del gc.garbage[:]
    assert garbage == []
