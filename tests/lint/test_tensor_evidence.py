"""Tensor evidence wins over list evidence (issue 34): a forward's parameter used as only a tensor can be
(``x.shape``, ``x.sum()``, ``F.norm(x)``, ``x - 1``) and also indexed, unpacked or measured is a tensor, and its
``x[0]``, ``a, b = x``, ``len(x)`` are the silently wrong model MXNet's Symbol gives (``sym[0]`` is its first
output, the whole tensor; ``len(sym)`` its number of outputs, 1).  An item used as a tensor alone, or beside
what a list does too (``+``, ``*``, a comparison), stays quiet: that is how lists of tensors are used.

The shapes come from the labelled trees: GluonCV's StyleGAN Generator (``style.shape`` and ``style[0]``, three
misses of the fifth fresh batch, found by this rule), attention blocks, RNN cells' ``states``."""

import pytest

from lint_helpers import codes, model


STYLEGAN = '''
from mxnet import nd
from mxnet.gluon import HybridBlock, nn


class Generator(HybridBlock):
    def hybrid_forward(self, F, style, noise, step=0, alpha=-1, mixing_range=(-1, -1)):
        out = noise[0]
        if style.shape[0] < 2:
            inject_index = [len(self.progression) + 1]
        crossover = 0
        for i, conv in enumerate(self.progression):
            if crossover < len(inject_index) and i > inject_index[crossover]:
                crossover = min(crossover + 1, len(style))
            style_step = style[crossover]
            out = conv(out, style_step, noise[i])
        return out
'''


@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_stylegan_generator_style_is_one_tensor(target):
    found = codes(STYLEGAN, target)
    # style[crossover]: HY011 on both targets (a note on jax: converted); len(style) and style.shape on mxnet
    assert found.count("HY011") == 1
    if target == "mxnet":
        assert found.count("HY008") == 2       # style.shape, len(style)
    # noise: only indexed and its items passed on: a list of noises, nothing said of it
    assert all("noise" not in m for m in _messages(STYLEGAN, target))


def _messages(text, target):
    from lint_helpers import check
    return [d.message for d in check(text, target)]


@pytest.mark.parametrize("body, line", [
    ("scale = x.shape[-1]\nfirst = x[0]\nreturn F.broadcast_mul(first, y) * scale", 2),      # .shape
    ("s = x.sum()\nreturn F.relu(x[0]) + s", 2),                                                # a tensor method
    ("norm = F.norm(x)\nreturn x[0] * norm", 2),                                                # an F operator
    ("z = x - 1\nreturn F.relu(x[0]) + z", 2),         # arithmetic only a tensor does
    ("z = x * 0.5\nreturn F.relu(x[0]) + z", 2),
    ("z = -x\nreturn F.dot(x[1], y) + z", 2),
])
@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_indexing_a_parameter_used_as_a_tensor_is_hy011(body, line, target):
    found = [c for c in codes(model(body), target) if c != "HY008"]
    assert found == ["HY011"]


@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_unpacking_and_len_of_a_tensor_are_reported(target):
    body = "a, b = x\nz = x.reshape((0, -1))\nreturn F.dot(a, b) + z"
    assert codes(model(body), target) == ["HY011"]
    body = "n = len(x)\nnorm = F.norm(x)\nreturn x[0] * norm + n"
    assert codes(model(body), target) == (["HY008", "HY011"] if target == "mxnet" else ["HY011"])


@pytest.mark.parametrize("body", [
    "return F.relu(x[0]) + y",                                     # list evidence alone: quiet
    "a, b = x\nreturn F.dot(a, b)",
    "h = x[0]\nreturn F.relu(h) + len(x)",
    "s = x + y\nreturn F.relu(x[0])",                               # `+`: lists concatenate too
    "s = x * 2\nreturn F.relu(x[0]), s",                            # `*` by an int: lists repeat
    "x.append(y)\nreturn F.relu(x[0]) + x.sum()",                   # a list method: a list, whatever else
    "z = F.concat(*x, dim=1)\nreturn F.relu(x[0]) + z",
    "z = F.np.stack(x)\nreturn F.np.mean(z, axis=0) + x[0]",        # numpy's stack takes a list
    "z = F.np.concatenate(x, axis=-1)\nreturn z + x[0]",
])
@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_lists_of_tensors_stay_quiet(body, target):
    assert codes(model(body), target) == []


def test_rnn_states_concatenated_and_indexed_stay_quiet():
    # mxnet/gluon/rnn: `states = states + [h]`-style lists, then `states[0]`
    body = "states = begin_state + [x]\nh = F.relu(begin_state[0])\nreturn h, begin_state"
    assert codes(model(body, params="x, begin_state"), "mxnet") == []
    body = "new = begin_state + extra\nreturn F.relu(begin_state[0]), new"
    assert codes(model(body, params="x, begin_state, extra"), "mxnet") == []


def test_a_name_read_while_its_own_kind_is_being_computed_is_not_kept_as_no_tensor():
    # `mu`'s kind asks for x's evidence, which reads `x - mu` while mu is still being computed: that answer
    # ("not a tensor") is provisional, and mu is a tensor wherever it is used (kinds.Unit._memoized)
    body = "mu = x.mean()\nif mu > 0:\n    return x\nreturn x - mu"
    assert codes(model(body), "jax") == ["HY010"]
    assert codes(model(body), "mxnet") == ["HY010", "HY017"]
