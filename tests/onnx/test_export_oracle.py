"""``mx.onnx.export_model`` against MXNet 1.9.1's own, on MXNet's files: MXNet builds a model-zoo network (random
BatchNorm statistics), ``export()``s its ``-symbol.json`` and ``.params`` and writes its ONNX file with its
``mx.onnx.export_model``; ours reads the same two files and writes ours.  ONNX Runtime runs both: ours gives
MXNet's own output, and the output of MXNet's file, for every family of the vision model zoo; MXNet's ONNX file
imported here (``mx.contrib.onnx.import_model``) gives it too."""

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra: pip install -e '.[test]'")

MODELS = {"resnet18_v1": 32, "resnet18_v2": 32, "resnet50_v2": 32, "mobilenet0.25": 32, "mobilenetv2_0.25": 32,
          "squeezenet1.0": 224, "squeezenet1.1": 224, "densenet121": 224, "alexnet": 63, "vgg11_bn": 32,
          "inceptionv3": 299}

EXPORT = """
import importlib, sys
if {folder!r} not in sys.path:
    sys.path.insert(0, {folder!r})
    # mxnet.onnx's converters were imported with mxnet, before onnx was importable: register them again
    from mxnet.onnx.mx2onnx._op_translations import _op_translations_opset12, _op_translations_opset13
    importlib.reload(_op_translations_opset12)
    importlib.reload(_op_translations_opset13)
from mxnet.gluon.model_zoo import vision
mx.random.seed(0)
net = vision.get_model({name!r}, classes=10)
net.initialize(mx.init.Xavier())
net.hybridize()
net(nd.array(inp['x']))
for k, p in net.collect_params().items():   # running statistics that matter
    if k.endswith(('running_mean', 'running_var')):
        p.set_data(nd.random.uniform(0.5, 1.5, shape=p.shape))
out['y'] = net(nd.array(inp['x'])).asnumpy()
net.export({path!r})
mx.onnx.export_model({path!r} + '-symbol.json', {path!r} + '-0000.params', [inp['x'].shape], [np.float32],
                     {path!r} + '-mxnet.onnx')
"""


def run(path, x):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0]


@pytest.fixture(scope="module")
def onnx_folder():
    from ast_hybrid.testing.oracle import OracleUnavailable, ensure_onnx_pkgs

    try:
        return str(ensure_onnx_pkgs())
    except OracleUnavailable as exc:
        pytest.skip(f"MXNET ORACLE UNAVAILABLE (its onnx package), differential test NOT run: {exc}")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_our_export_of_mxnets_files(oracle, onnx_folder, tmp_path, name):
    from ast_hybrid import mxnet as mx

    size = MODELS[name]
    x = np.random.RandomState(1).uniform(-1, 1, (1, 3, size, size)).astype("float32")
    path = str(tmp_path / name)
    want = oracle.run(EXPORT.format(name=name, path=path, folder=onnx_folder), x=x)["y"]
    ours = mx.onnx.export_model(path + "-symbol.json", path + "-0000.params", [x.shape], np.float32,
                                path + "-ours.onnx")
    scale = np.abs(want).max()
    got = run(ours, x)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * scale)
    np.testing.assert_allclose(got, run(path + "-mxnet.onnx", x), rtol=0, atol=1e-4 * scale)
    # and the other way: MXNet's ONNX file imported (mx.contrib.onnx.import_model) and run here
    again, args, aux = mx.contrib.onnx.import_model(path + "-mxnet.onnx")
    np.testing.assert_allclose(again.eval(data=x, **args, **aux)[0].asnumpy(), want, rtol=0, atol=1e-4 * scale)
