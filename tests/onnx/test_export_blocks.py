"""The ONNX export from the user's side: ``HybridBlock.export(path, format='onnx')`` on model-zoo networks
(ONNX Runtime gives the block's output), and ``ast-hybrid export`` on the files ``export()`` writes."""

import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.cli import main
from ast_hybrid.gluon import nn
from ast_hybrid.gluon.model_zoo import vision

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra: pip install -e '.[test]'")


def run(path, feed):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feed)


@pytest.mark.parametrize("name, size", [("resnet18_v1", 32), ("resnet34_v2", 32), ("mobilenet0.25", 32),
                                        ("mobilenetv2_0.25", 32), ("squeezenet1.0", 224), ("densenet121", 224),
                                        ("vgg11_bn", 32), ("alexnet", 63)])
def test_block_export_onnx(tmp_path, name, size):
    net = vision.get_model(name, classes=10)
    net.initialize()
    net.hybridize()
    x = np.random.RandomState(0).uniform(-1, 1, (2 if size < 224 else 1, 3, size, size)).astype("float32")
    net(nd.array(x))
    for k, p in net.collect_params().items():       # statistics that change the numbers
        if k.endswith(("running_mean", "running_var")):
            p.set_data(nd.random.uniform(0.5, 1.5, shape=p.shape))
    want = net(nd.array(x)).asnumpy()
    path = net.export(str(tmp_path / name), format="onnx")
    assert path == str(tmp_path / name) + ".onnx"
    got, = run(path, {"data": x})
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_two_inputs_two_outputs(tmp_path):
    class Two(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.fc = nn.Dense(4)

        def hybrid_forward(self, F, a, b):
            h = self.fc(a) + F.sum(b, axis=1, keepdims=True)
            return F.softmax(h), F.relu(h)

    net = Two()
    net.initialize()
    net.hybridize()
    a, b = np.ones((3, 5), np.float32), np.arange(6, dtype=np.float32).reshape(3, 2)
    want = [o.asnumpy() for o in net(nd.array(a), nd.array(b))]
    path = net.export(str(tmp_path / "two"), format="onnx")
    got = run(path, {"data0": a, "data1": b})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_cli_export(tmp_path, capsys):
    net = vision.get_model("mobilenetv2_0.25", classes=10)
    net.initialize()
    net.hybridize()
    net(nd.ones((1, 3, 32, 32)))
    net.export(str(tmp_path / "m"))
    args = [str(tmp_path / "m-symbol.json"), str(tmp_path / "m-0000.params"), "--input-shape", "4,3,32,32"]
    assert main(["export", *args, "--check"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'm.onnx'}" in out and "worst difference" in out
    assert main(["export", *args, "--dynamic", "-o", str(tmp_path / "d.onnx")]) == 0
    x = np.random.RandomState(0).rand(3, 3, 32, 32).astype("float32")     # another batch size
    np.testing.assert_allclose(run(str(tmp_path / "d.onnx"), {"data": x})[0], net(nd.array(x)).asnumpy(), rtol=0,
                               atol=1e-5)
    assert main(["export", str(tmp_path / "nothing-symbol.json"), args[1], "--input-shape", "1,3,32,32"]) == 2
    assert "nothing-symbol.json: no such file" in capsys.readouterr().err
    assert main(["export", *args[:2], "--input-shape", "1,3,32,32", "--input-shape", "1,2"]) == 2
    assert "2 input shape(s) for the graph's 1 input(s) ['data']" in capsys.readouterr().err
