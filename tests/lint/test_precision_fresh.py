"""What the fresh trees sockeye 2.3.17 and gluonfr 1.0.2 taught the linter (issue 14, "Done when").

Both were linted and every finding labelled before the linter was changed for them
(``data/labels_heldout.tsv``).  One false alarm (sockeye's ``data, *factors = F.split(...)``:
the starred name is a list of outputs, not one) and one miss (gluonfr's ``self.it += 1`` in
SphereLoss: a counter updated only while tracing once hybridized; run on MXNet 1.9.1, see
the label's reason) came from them.  Each case is a small model shaped like the real code.
"""

import pytest

from lint_helpers import codes, model


@pytest.mark.parametrize("count", ["n", "3"])
def test_starred_name_of_unpacked_outputs_is_a_list_of_tensors(count):
    # sockeye/encoder.py: `data, *data_factors = F.split(...)`, then `zip(data_factors, configs)`
    body = (f"x, *rest = F.split(x, num_outputs={count}, axis=2)\n"
            "for i, (f, c) in enumerate(zip(rest, self.cfgs), 1):\n    x = x + f\n"
            "for f in rest:\n    x = x + f\nreturn x + len(rest)")
    assert codes(model(body, params="x, n"), "mxnet") == []
    # its items are still tensors, and the first name one output
    assert codes(model("x, *rest = F.split(x, num_outputs=n)\nreturn rest[0][:, 1] + x[:, 1]",
                       params="x, n"), "mxnet") == ["HY009", "HY009"]


def test_starred_name_of_a_plain_tuple_is_a_list():
    assert codes(model("a, *rest = x, y, x\nfor r in rest:\n    a = a + r\nreturn a"), "mxnet") == []


@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_attribute_updated_on_every_call_is_hy012(target):
    # gluonfr/loss.py SphereLoss: `self.it += 1; self.lamb = max(..., 1500 / (1 + 0.1 * self.it))`
    body = "self.it += 1\nself.lamb = max(5.0, 1500.0 / (1 + 0.1 * self.it))\nreturn x / (1 + self.lamb)"
    assert codes(model(body), target) == ["HY012"]
    # the same constant set on every call, or a scratch value set then read: not state
    assert codes(model("self.k = 3\nself.s = x * 2\nreturn self.s + self.k"), target) == []


@pytest.mark.parametrize("use", ["name = 't%d_' % self.c", "name = f't{self.c}_'", "name = 'x'"])
def test_counter_the_forward_only_names_things_with_is_not_hy012(use):
    # mxnet/gluon/rnn/rnn_cell.py: `self._counter += 1`, read back only in op names ('t%d_' % self._counter)
    assert codes(model(f"self.c += 1\n{use}\nreturn F.relu(x, name=name)"), "mxnet") == []
