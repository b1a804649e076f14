"""Autograd's switches, the current context and Gluon's naming are per thread, as MXNet 1.9.1 keeps them.

A thread that starts while another records under ``autograd.record()`` inside ``with mx.cpu(1):`` (a data
loader's worker, a server's request thread) must see recording and training off, the default context, its own
block names, and its ops must not land on the recording thread's tape.  The same program runs in MXNet 1.9.1
and under ``import mxnet`` = ast-hybrid; every answer must be MXNet's.
"""

import pytest

pytestmark = pytest.mark.oracle

PROGRAM = """
import threading
from mxnet import autograd
seen = {}
started, done = threading.Event(), threading.Event()

def other():
    started.wait()
    seen['other_recording'] = autograd.is_recording()
    seen['other_training'] = autograd.is_training()
    seen['other_context'] = str(mx.current_context())
    x = nd.array([1., 2.])
    x.attach_grad()
    y = (x * 2).sum()
    try:
        y.backward()
        seen['other_backward'] = 'ran'
    except Exception:
        seen['other_backward'] = 'not recorded'
    seen['other_blocks'] = [gluon.nn.Dense(2).name, gluon.nn.Dense(2).name]     # a new thread counts from 0
    with mx.cpu(2):
        seen['other_inner_context'] = str(mx.current_context())
    done.set()

worker = threading.Thread(target=other)
worker.start()
x = nd.array([3., 4.])
x.attach_grad()
with mx.cpu(1):
    with autograd.record():
        first = gluon.nn.Dense(2).name      # this thread's counter may have run before (earlier code)
        z = (x * x).sum()
        started.set()
        done.wait()
        seen['main_recording'] = autograd.is_recording()
        seen['main_training'] = autograd.is_training()
        seen['main_context'] = str(mx.current_context())
worker.join()
z.backward()
out['grad'] = x.grad
# the other thread's blocks took nothing from this thread's counter
seen['main_block_step'] = int(gluon.nn.Dense(2).name[5:]) - int(first[5:])
meta.update(seen)
"""


def test_a_second_thread_sees_its_own_state(both):
    ours, theirs = both(PROGRAM)
    assert ours["meta"]["other_recording"] is False and ours["meta"]["main_recording"] is True    # as MXNet


def test_the_state_after_the_scope_is_each_threads_own():
    """Two threads entering and leaving record()/train_mode()/contexts at interleaved times each restore their
    own state (a module list shared by threads restored one thread's state into the other's)."""
    import threading

    from ast_hybrid import autograd, cpu, ndarray

    order, answers = threading.Barrier(2), {}

    def run(name, ctx, recording):
        with ctx, autograd.record(train_mode=recording):
            order.wait()     # both inside
            answers[name, "inside"] = (autograd.is_recording(), autograd.is_training(), str(ndarray.current_context()))
            order.wait()
        answers[name, "after"] = (autograd.is_recording(), autograd.is_training(), str(ndarray.current_context()))

    threads = [threading.Thread(target=run, args=("a", cpu(1), True)),
               threading.Thread(target=run, args=("b", cpu(2), False))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers["a", "inside"] == (True, True, "cpu(1)")
    assert answers["b", "inside"] == (True, False, "cpu(2)")
    assert answers["a", "after"] == answers["b", "after"] == (False, False, "cpu(0)")
