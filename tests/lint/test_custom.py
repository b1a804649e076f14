"""Custom operators and custom gradients (issue 17): what the linter knows of them.

MXNet runs a ``CustomOp``'s ``forward``/``backward`` on NDArrays, called back from its engine
even inside a hybridized graph, and an ``autograd.Function``'s op by op: ``asnumpy()``,
``x[:] = v``, ``.shape`` are all fine there, so neither is linted as a forward.  ``F.Custom``
is an operator: its outputs are what the prop registered under ``op_type`` lists.
"""

import pytest

from lint_helpers import codes

HEAD = "import mxnet as mx\nfrom mxnet import autograd\nfrom mxnet.gluon import HybridBlock\n"

CUSTOM_OP = HEAD + '''
class Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = x / x.sum(axis=1, keepdims=True)
        if y.shape[0] > 1:
            print(in_data[0])
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        in_grad[0][:] = out_grad[0] * mx.nd.array(y)
        g = in_grad[0]
        g += 1


@mx.operator.register("softmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()


@mx.operator.register("two")
class TwoProp(mx.operator.CustomOpProp):
    def list_outputs(self):
        return ["low", "high"]
'''

FUNCTION = HEAD + '''
class Reverse(autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        print(x.asnumpy(), x.shape)
        if x.sum() > 0:
            x[:] = 0
        return x * 1

    def backward(self, dy):
        x, = self.saved_tensors
        for row in dy:
            row *= -1
        return -dy * x.shape[0]
'''


@pytest.mark.parametrize("target", ["jax", "mxnet"])
@pytest.mark.parametrize("src", [CUSTOM_OP, FUNCTION], ids=["CustomOp", "Function"])
def test_custom_op_and_function_bodies_run_on_ndarrays(src, target):
    assert codes(src, target) == []


def _net(body: str) -> str:
    lines = "\n".join("        " + ln for ln in body.strip().splitlines())
    return CUSTOM_OP + f"\n\nclass Net(HybridBlock):\n    def hybrid_forward(self, F, x):\n{lines}\n"


def test_f_custom_is_an_operator_returning_a_tensor():
    # SoftmaxProp has no list_outputs: MXNet's default, one output
    assert codes(_net("y = F.Custom(x, op_type='softmax')\nreturn y[:, 0]"), "mxnet") == ["HY009"]
    assert codes(_net("a, b = F.Custom(x, op_type='softmax')\nreturn a"), "mxnet") == ["HY011"]
    assert codes(_net("y = mx.nd.Custom(x, op_type='softmax')\nreturn y"), "mxnet") == ["HY007"]


def test_f_custom_outputs_are_the_props_list_outputs():
    assert codes(_net("low, high = F.Custom(x, op_type='two')\nreturn low + high"), "mxnet") == []
    assert codes(_net("y = F.Custom(x, op_type='two')[1]\nreturn y[:, 0]"), "mxnet") == ["HY009"]


def test_f_custom_of_an_op_type_registered_elsewhere_has_one_output():
    # MXNet's default list_outputs; gluonts' `len(F.Custom(..., op_type="digitize"))` is a real HY008
    assert codes(_net("y = F.Custom(x, op_type='elsewhere')\nreturn y[:, 0]"), "mxnet") == ["HY009"]
    assert codes(_net("n = len(F.Custom(x, op_type='elsewhere'))\nreturn x"), "mxnet") == ["HY008"]


def test_f_custom_of_a_prop_computing_its_outputs_may_have_several():
    src = _net("a, b = F.Custom(x, op_type='many')\nreturn a[:, 0]").replace(
        "\n\nclass Net(", "\n\n@mx.operator.register('many')\nclass ManyProp(mx.operator.CustomOpProp):\n"
        "    def list_outputs(self):\n        return ['o%d' % i for i in range(3)]\n\n\nclass Net(")
    assert "class ManyProp" in src
    assert codes(src, "mxnet") == ["HY009"]     # no HY011 on the unpacking
