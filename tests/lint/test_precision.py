"""What the held-out gluoncv2 tree taught the linter (issue 14): what is not a tensor, and what is.

Each case is a small model shaped like the real code that showed it (the file it came from is
named); the labelled corpus test checks the real files.
"""

import pytest

from lint_helpers import codes, model

HEAD = "import numpy as np\nimport mxnet as mx\nfrom mxnet.gluon import HybridBlock, nn, rnn\n"


def _block(init: str, forward: str, params: str = "x") -> str:
    """A module with one HybridBlock: ``__init__`` storing ``init``, ``hybrid_forward`` running ``forward``."""
    def indent(text):
        return "\n".join("        " + ln for ln in text.strip("\n").splitlines())
    return (f"{HEAD}class Net(HybridBlock):\n    def __init__(self, **kwargs):\n"
            f"        super().__init__(**kwargs)\n{indent(init)}\n"
            f"    def hybrid_forward(self, F, {params}):\n{indent(forward)}\n")


# -- not tensors ---------------------------------------------------------------------------------
def test_helper_parameter_documented_as_int_or_numpy_is_not_a_tensor():
    # fractalnet_cifar.py: the forward passes its input on to a helper that documents it `int`
    helper = '''
def drop_mask(cols, n):
    """Parameters
    ----------
    cols : int
        Columns.
    n : numpy.ndarray
        Counts.
    """
    k = cols.shape[0] + n.shape[0]
    return np.where(cols >= 0)[0]
'''
    src = HEAD + helper + model("m = drop_mask(y, x)\nreturn F.relu(x)")
    assert codes(src, "mxnet") == []
    # documented as a tensor (or nothing): still one
    src_t = src.replace("cols : int", "cols : NDArray")
    assert codes(src_t, "mxnet") == ["HY008", "HY007"]


def test_nd_array_made_from_host_values_is_concrete():
    # fractalnet_cifar.py: a numpy mask made into an NDArray in the forward
    body = """
mask = mx.nd.array(np.ones((2, 3)), ctx=mx.cpu())
n = mask.shape[0] + mask.expand_dims(0).shape[1]
alive = mask.sum(axis=0).asnumpy()
return x * mask
"""
    found = codes(model(body, header="import numpy as np\nimport mxnet as mx"), "mxnet")
    assert found == ["HY007"]            # making it is the defect, not using it on the host
    # with the input in it, it is a tensor again
    body_x = body.replace("np.ones((2, 3))", "x")
    assert codes(model(body_x, header="import numpy as np\nimport mxnet as mx"), "mxnet") == [
        "HY007", "HY008", "HY008", "HY004"]


def test_storing_a_tensor_into_an_nd_buffer_is_hy002():
    # ntsnet_cub.py: an mx.nd.zeros buffer filled with results of the forward
    body = """
buf = mx.nd.zeros(shape=(2, 3))
buf[0] = F.relu(x)
buf[1] = 0
return buf
"""
    assert codes(model(body, header="import mxnet as mx"), "mxnet") == ["HY007", "HY002"]
    # ast-hybrid makes the buffer as MXNet would; a traced value cannot be stored into it
    assert codes(model(body, header="import mxnet as mx"), "jax") == ["HY002"]


@pytest.mark.parametrize("init", ["self.stft = lambda v: np.abs(v)",
                                  "self.anchors = (np.arange(4) + 2).astype(np.int64)"])
def test_constructor_host_attributes_are_not_child_blocks(init):
    # jasper.py (a lambda over numpy), ntsnet_cub.py (a numpy array's .copy())
    attr = init.split("=")[0].strip()
    forward = f"rows = [np.array({attr}(r) if callable({attr}) else {attr}.copy()) for r in x.asnumpy()]\n" \
              f"z = np.concatenate(({attr}.copy(), {attr}.copy()))\nreturn x"
    found = codes(_block(init, forward), "mxnet")
    assert found == ["HY004"]            # x.asnumpy(), nothing about the attribute


def test_an_attribute_another_method_stores_stays_unknown():
    src = _block("self.anchors = np.arange(4)",
                 "z = np.concatenate((self.anchors.copy(), x))\nreturn x").replace(
        "    def hybrid_forward", "    def reset(self, v):\n        self.anchors = v\n    def hybrid_forward")
    assert codes(src, "mxnet") == ["HY007"]


# -- tensors it missed -----------------------------------------------------------------------------
@pytest.mark.parametrize("init", ["self.rnn = rnn.LSTM(8)", "self.fc = nn.Dense(4)"])
def test_gluon_layer_given_its_data_alone_returns_a_tensor(init):
    # visemenet.py: `x = self.rnn(x)` then `x[:, -1, :]`
    attr = init.split("=")[0].strip()
    assert codes(_block(init, f"y = {attr}(x)\nreturn y[:, -1]"), "mxnet") == ["HY009"]
    # given its states too, a recurrent layer returns (output, states)
    if "rnn" in init:
        assert codes(_block(init, f"y = {attr}(x, s)\nreturn y[0][:, -1]", params="x, s"), "mxnet") == []


def test_fluent_method_of_a_child_output_is_a_tensor():
    # ntsnet_cub.py: `self.backbone_tail(...).reshape(...)[:, :n, :]`
    assert codes(model("f = self.tail(x).reshape((0, -1))\nreturn f[:, :2]"), "mxnet") == ["HY009"]
    # a child's output may be a tuple: `f[0]` may be its first item; but a tuple takes no tuple index
    # (`f[:, :2]` on one raises TypeError), so where that runs f is a tensor
    assert codes(model("f = self.tail(x)\nreturn f[0]"), "mxnet") == []
    assert codes(model("f = self.tail(x)\nreturn f[:, :2]"), "mxnet") == ["HY009"]


@pytest.mark.parametrize("expr", ["x.split(num_outputs=n, axis=1)[-1]", "F.split(x, num_outputs=n)[0]",
                                  "F.topk(x, ret_typ=t)[1]"])
def test_an_output_of_an_operator_is_a_tensor(expr):
    # `x.split(...)[-1]`: an output (or, for one output, a row): a tensor either way
    src = model(f"last = {expr}\nreturn last[:, 0]", params="x, n, t")
    assert codes(src, "mxnet") == ["HY009"]


def test_unpacked_outputs_of_an_operator_are_tensors():
    src = model("a, b = F.split(x, num_outputs=n)\nif a:\n    pass\nreturn b", params="x, n")
    assert codes(src, "mxnet") == ["HY010"]


def test_parts_of_a_sparse_tensor_are_tensors():
    # superpointnet.py: `x.tostype("csr").indptr[1:]`, `.data.zeros_like()`
    body = "c = x.tostype('csr')\nsizes = c.indptr[1:] - c.indptr[:-1]\nz = c.data.zeros_like()\nz[0] = 1\nreturn sizes"
    assert codes(model(body), "mxnet") == ["HY009", "HY009", "HY002"]


def test_loop_over_written_out_rows_takes_each_position_on_its_own():
    # sagemaker-battlesnake-ai's qnetworks.py: (block, block, tensor, int) rows; only the tensor is one
    body = """
attentions = [(self.conv_a, self.emb_a, x, self.d_a),
              (self.conv_b, self.emb_b, y, self.d_b)]
outs = []
for conv, embedding, sequence, d in attentions:
    q = embedding(sequence).reshape((-3, int(d), -1))
    outs.append(F.linalg_gemm2(conv(x), q, alpha=1 / math.sqrt(d)))
return F.concat(*outs, dim=2)
"""
    src = model(body, header="import math")
    assert codes(src, "mxnet") == [] and codes(src, "jax") == []
    # the tensor's position is still a tensor
    assert codes(model(body.replace("int(d)", "int(sequence)"), header="import math"), "mxnet") == ["HY004"]
    # a list grown in place is not known row by row any more
    grown = body.replace("outs = []\n", "attentions.append((self.conv_c, self.emb_c, x, x))\nouts = []\n")
    assert "HY004" in codes(model(grown, header="import math"), "mxnet")
