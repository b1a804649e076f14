"""``AST_HYBRID_PROGRAM_LIMIT`` (``ast_hybrid/xla/program_memory.py``): code run op by op on ever new shapes
keeps its memory bounded (issue 30: MXNet's own ``test_ndarray`` grew a process past 4 GB here, where MXNet
stays under 1 GB).  In fresh processes: the same 60 shapes run op by op with the limit at 30 compilations
and with no limit; the bounded process empties JAX's caches, computes the same values, and its memory grows
by far less."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.processes

SCRIPT = r"""
import json, sys
import numpy as np
from ast_hybrid import nd
from ast_hybrid.xla import program_memory

def rss():
    with open('/proc/self/status') as f:
        return next(int(l.split()[1]) for l in f if l.startswith('VmRSS')) * 1024

x = nd.array(np.ones((3, 3), 'float32'))
(x * 2).asnumpy()
start, total = rss(), 0.0
for n in range(1, 61):
    a = nd.array(np.arange(n, dtype='float32'))
    total += float(((a + 1) * a - a).sum().asscalar())
print(json.dumps({"growth": rss() - start, "total": total, "cleared": program_memory.COUNTER.cleared,
                  "after": float((x * 2).sum().asscalar())}))
"""


def _run(limit):
    env = dict(os.environ, AST_HYBRID_PROGRAM_LIMIT=str(limit), AST_HYBRID_COMPILE_CACHE="0")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_programs_compiled_op_by_op_are_let_go():
    bounded, unbounded = _run(30), _run(0)
    assert bounded["cleared"] >= 5 and unbounded["cleared"] == 0
    assert bounded["total"] == unbounded["total"] and bounded["after"] == unbounded["after"] == 18.0
    # each program held is about 1.5 MB here: the 300 compilations of 60 shapes kept grew the process by
    # 450 MB, bounded by 50 MB
    assert unbounded["growth"] > 200 << 20 and bounded["growth"] < unbounded["growth"] / 3, (bounded, unbounded)


def test_the_limit_is_a_number():
    from ast_hybrid.core import settings

    assert settings.get("AST_HYBRID_PROGRAM_LIMIT", {"AST_HYBRID_PROGRAM_LIMIT": " 25"}) == 25
    assert settings.get("AST_HYBRID_PROGRAM_LIMIT", {}) == 1000
    env = dict(os.environ, AST_HYBRID_PROGRAM_LIMIT="many")
    done = subprocess.run([sys.executable, "-m", "ast_hybrid", "config"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert "AST_HYBRID_PROGRAM_LIMIT='many' is not a value it takes: a whole number" in done.stdout + done.stderr
