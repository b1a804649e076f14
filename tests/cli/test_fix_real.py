"""``--fix`` with the real checker (:mod:`ast_hybrid.linter`), whatever rules it has.

Properties that must hold for every rule set: fixing twice changes nothing the
second time, the fixed file still parses, and after ``--fix`` no safe fix is
left to apply (after ``--unsafe-fixes`` no fix at all).
"""

import ast

import pytest

from ast_hybrid.linter.config import Settings
from ast_hybrid.linter.apply import fix_text
from ast_hybrid.linter.api import lint_source
from ast_hybrid.common.source import SourceFile

MODEL = '''\
import mxnet as mx
from mxnet import nd
from mxnet.gluon import HybridBlock, nn


class Net(HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4)

    def hybrid_forward(self, F, x, y):
        x += y
        y *= 2
        z = x
        z -= 1
        x[:] = 0
        F.relu(x, out=y)
        s = x.asnumpy()
        x.wait_to_read()
        print(x)
        w = nd.ones((2, 2))
        n = x.shape[0]
        if x.sum() > 0:
            x = x * 2
        for row in x:
            pass
        self.cache = x
        return self.dense(x) + z + w + n
'''


@pytest.mark.parametrize("target", ["jax", "mxnet"])
@pytest.mark.parametrize("unsafe", [False, True])
def test_fix_is_idempotent_and_complete(target, unsafe):
    settings = Settings(target=target)

    def run(text):
        return lint_source(SourceFile.from_text(text, "model.py"), settings)

    first = fix_text(MODEL, "model.py", run, unsafe=unsafe)
    ast.parse(first.text)
    second = fix_text(first.text, "model.py", run, unsafe=unsafe)
    assert second.fixed == 0 and second.text == first.text
    left = [d for d in first.remaining if d.fix is not None and (unsafe or d.fix.applicability == "safe")]
    assert left == []
    assert all(d.code != "HY999" for d in first.remaining)
