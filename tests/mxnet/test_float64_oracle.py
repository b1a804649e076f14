"""Under ``ast-hybrid run`` a script asking for float64 or int64 gets them, as MXNet 1.9.1 gives them
(``core/npmode.py``'s ``mxnet_dtypes``: jax's x64 mode on unless ``JAX_ENABLE_X64`` is set), and everything it
does not ask for stays MXNet's float32/int32: arrays made with ``dtype='float64'``, a network cast to
float64, ``mx.np.array`` of a float64 numpy array, integer reductions, an NDArray's default dtypes.  Printed
to 14 digits or more, so a float32 computation could not pass."""

import os

import pytest

from ast_hybrid.testing.oracle import run_both

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

SCRIPT = r'''
import numpy as np
import mxnet as mx
from mxnet import gluon, nd

x = nd.array(np.arange(6).reshape(2, 3) / 7, dtype='float64')
print('nd float64', x.dtype, round(float((x * x).sum().asscalar()), 14), repr(float(nd.exp(x).asnumpy()[1, 2])))
net = gluon.nn.Dense(2, in_units=3)
net.initialize(mx.init.Constant(1 / 3))
net.cast('float64')
y = net(x)
print('cast net', y.dtype, repr(float(y.asnumpy()[1, 1])), net.weight.data().dtype)
print('defaults', nd.array([1, 2, 3]).dtype, nd.arange(3).dtype, nd.zeros(2).dtype,
      nd.array(np.ones(2)).dtype, nd.argmax(nd.array([[1, 3, 2]]), axis=1).dtype)
print('int32', nd.array([1, 2], dtype='int32').sum().dtype, nd.array([1, 2], dtype='int64').dtype)

from mxnet import autograd
w = nd.array([0.1, 0.2], dtype='float64')
w.attach_grad()
with autograd.record():
    loss = (w * w * 3).sum()
loss.backward()
print('grad float64', w.grad.dtype, repr(float(w.grad.asnumpy()[1])))

from mxnet import np as mnp, npx
npx.set_np()
a = mnp.array(np.ones(3) / 3)
print('np float64', a.dtype, repr(float((a * 3).sum())), mnp.ones(2).dtype, mnp.array([1.5, 2]).dtype)
i = mnp.array([1, 2, 3], dtype='int32')
print('np int', i.sum().dtype, mnp.arange(3).dtype, (i * 2).dtype)
f = mnp.ones(2)          # a numpy scalar is a number to MXNet: it does not widen a float32 array
print('np scalars', (f * np.float64(0.5)).dtype, (np.float64(2) + f).dtype, mnp.clip(f, np.float64(0), 1).dtype)
npx.reset_np()
'''


def test_float64_where_asked_float32_elsewhere_as_mxnet(tmp_path):
    ours, theirs = run_both(SCRIPT, tmp_path)
    assert len(theirs) == 8
    for mine, expected in zip(ours, theirs):
        assert mine == expected
    assert len(ours) == len(theirs)


def test_jax_enable_x64_set_by_the_user_wins(tmp_path, monkeypatch):
    """``JAX_ENABLE_X64=0`` keeps the 32-bit dtypes (jax's own rule, as before)."""
    import subprocess
    import sys

    script = tmp_path / "s.py"
    script.write_text("import mxnet as mx\nprint(mx.nd.array([1.5], dtype='float64').dtype)\n")
    env = dict(os.environ, JAX_ENABLE_X64="0")
    done = subprocess.run([sys.executable, "-m", "ast_hybrid.run", str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "<class 'numpy.float32'>"
