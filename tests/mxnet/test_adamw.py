"""``nd.contrib.adamw_update`` and its mixed-precision/multi-tensor forms (GluonNLP's BERTAdam) against MXNet
1.9.1: three steps, every array they update in place (weight through ``out=``, the gradient, mean, var,
float32 master weights) compared after each."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

R = np.random.RandomState(7)
INPUTS = {"w": R.normal(size=(4, 5)).astype(np.float32), "w2": R.normal(size=(6,)).astype(np.float32),
          "g": R.normal(size=(3, 4, 5)).astype(np.float32), "g2": R.normal(size=(3, 6)).astype(np.float32)}

_SINGLE = """
w, m, v = nd.array(inp['w']), nd.zeros((4, 5)), nd.zeros((4, 5))
for step in range(3):
    g = nd.array(inp['g'][step])
    r = nd.contrib.adamw_update(w, g, m, v, {scale}, lr={lr}, eta=0.5, wd=0.01, clip_gradient={clip}, out=w)
    meta['same%d' % step] = r is w
    out['w%d' % step], out['g%d' % step] = w.asnumpy(), g.asnumpy()
    out['m%d' % step], out['v%d' % step] = m.asnumpy(), v.asnumpy()
fresh = nd.contrib.adamw_update(w, g, m, v, rescale_grad=1.0, lr=0.1, eta=1.0, beta1=0.8, beta2=0.99, epsilon=1e-6)
out['fresh'], out['w_after'] = fresh.asnumpy(), w.asnumpy()
"""


@pytest.mark.parametrize("scale,lr,clip", [("rescale_grad=1.0", 0.01, -1), ("rescale_grad=2.0", 1, 1.5),
                                           ("nd.array([0.5])", 0.1, 0.3), ("0.125", 1e-3, -1)])
def test_adamw_update_matches_mxnet(both, scale, lr, clip):
    both(_SINGLE.format(scale=scale, lr=lr, clip=clip), rtol=0, **INPUTS)


@pytest.mark.parametrize("scale", ["0.0", "float('nan')", "float('inf')", "nd.array([0.0])"])
def test_a_zero_or_non_finite_rescale_skips_the_update_as_mxnet(both, scale):
    both("w, g, m, v = nd.array(inp['w']), nd.array(inp['g'][0]), nd.ones((4, 5)), nd.ones((4, 5))\n"
         f"r = nd.contrib.adamw_update(w, g, m, v, {scale}, lr=0.1, eta=1.0, out=w)\n"
         "meta['same'] = r is w\nout['w'], out['g'], out['m'], out['v'] = w, g, m, v\n", rtol=0, **INPUTS)


def test_mp_adamw_update_matches_mxnet(both):
    both("w32 = nd.array(inp['w'])\nw = w32.astype('float16')\nm, v = nd.zeros((4, 5)), nd.zeros((4, 5))\n"
         "for step in range(3):\n"
         "    g = nd.array(inp['g'][step]).astype('float16')\n"
         "    nd.contrib.mp_adamw_update(w, g, m, v, w32, rescale_grad=0.5, lr=1, eta=0.01, wd=0.1,\n"
         "                               clip_gradient=0.8, out=w)\n"
         "    out['w%d' % step], out['w32_%d' % step], out['g%d' % step] = w, w32, g\n"
         "    out['m%d' % step], out['v%d' % step] = m, v\n", rtol=0, **INPUTS)


@pytest.mark.parametrize("mp", [False, True])
def test_multi_adamw_updates_match_mxnet(both, mp):
    call = ("nd.contrib.multi_mp_adamw_update(ws, gs, ms, vs, w32s, " if mp
            else "nd.contrib.multi_adamw_update(ws, gs, ms, vs, ")
    both("w32s = [nd.array(inp['w']), nd.array(inp['w2'])]\n"
         f"ws = [w.astype('float16') for w in w32s] if {mp} else [w.copy() for w in w32s]\n"
         "ms = [nd.zeros(w.shape) for w in w32s]\nvs = [nd.zeros(w.shape) for w in w32s]\n"
         "for step in range(3):\n"
         "    gs = [nd.array(inp['g'][step]).astype(ws[0].dtype), nd.array(inp['g2'][step]).astype(ws[0].dtype)]\n"
         f"    {call}rescale_grad=nd.array([2.0]), lrs=[1.0, 1.0],\n"
         "        wds=[0.01, 0.0], etas=[0.01, 0.02], clip_gradient=1.0, beta1=0.85, out=ws, size=2)\n"
         "    for i in range(2):\n"
         "        out['w%d_%d' % (step, i)], out['m%d_%d' % (step, i)] = ws[i], ms[i]\n"
         "        out['v%d_%d' % (step, i)], out['g%d_%d' % (step, i)] = vs[i], gs[i]\n"
         + ("        out['w32_%d_%d' % (step, i)] = w32s[i]\n" if mp else ""), rtol=0, **INPUTS)
