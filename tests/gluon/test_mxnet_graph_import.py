"""``SymbolBlock.imports`` of MXNet's own ``-symbol.json`` + ``.params`` (what ``export()`` wrote under MXNet
1.9.1), and ``mx.sym.load``: the graph replayed on ast-hybrid's ops gives MXNet's output, op by op and
hybridized, for every family of MXNet's vision model zoo (random BatchNorm statistics, so the running statistics
and the ``aux:`` names matter); an operator ast-hybrid lacks is an error naming it and its node."""

import json

import numpy as np
import pytest

from ast_hybrid import nd
from ast_hybrid.gluon import SymbolBlock

pytestmark = pytest.mark.oracle

MODELS = {"resnet18_v1": 32, "resnet18_v2": 32, "mobilenet0.25": 32, "mobilenetv2_0.25": 32, "squeezenet1.1": 224,
          "densenet121": 224, "alexnet": 63, "vgg11_bn": 32, "inceptionv3": 299}

EXPORT = """
from mxnet.gluon.model_zoo import vision
mx.random.seed(0)
net = vision.get_model({name!r}, classes=10)
net.initialize(mx.init.Xavier())
net.hybridize()
net(nd.array(inp['x']))
stats = [p for k, p in net.collect_params().items() if k.endswith(('running_mean', 'running_var'))]
for p in stats:                                   # running statistics that matter (aux: names in the file)
    p.set_data(nd.random.uniform(0.5, 1.5, shape=p.shape))
out['y'] = net(nd.array(inp['x'])).asnumpy()
net.export({path!r})
"""


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mxnets_export_runs_here(oracle, tmp_path, name):
    size = MODELS[name]
    x = np.random.RandomState(1).uniform(-1, 1, (1, 3, size, size)).astype("float32")
    ref = oracle.run(EXPORT.format(name=name, path=str(tmp_path / name)), x=x)["y"]
    block = SymbolBlock.imports(str(tmp_path / f"{name}-symbol.json"), ["data"], str(tmp_path / f"{name}-0000.params"))
    scale = np.abs(ref).max()
    np.testing.assert_allclose(block(nd.array(x)).asnumpy(), ref, rtol=0, atol=1e-4 * scale)
    block.hybridize()
    np.testing.assert_allclose(block(nd.array(x)).asnumpy(), ref, rtol=0, atol=1e-4 * scale)


def test_sym_load_and_an_op_we_lack(tmp_path):
    from ast_hybrid.mxnet import symbol
    from ast_hybrid.mxnet._missing import NotSupported

    graph = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                       {"op": "null", "name": "fc_weight", "attrs": {"__shape__": "(3, 4)"}, "inputs": []},
                       {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "3", "no_bias": "True"},
                        "inputs": [[0, 0, 0], [1, 0, 0]]},
                       {"op": "_plus_scalar", "name": "add", "attrs": {"scalar": "1.5"}, "inputs": [[2, 0, 0]]}],
             "arg_nodes": [0, 1], "heads": [[3, 0, 0]]}
    (tmp_path / "g-symbol.json").write_text(json.dumps(graph))
    s = symbol.load(str(tmp_path / "g-symbol.json"))
    assert s.list_arguments() == ["data", "fc_weight"] and s.name == "add"
    got = s.eval(data=np.ones((2, 4), np.float32), fc_weight=np.full((3, 4), 0.5, np.float32))[0].asnumpy()
    assert got.tolist() == [[3.5] * 3] * 2
    graph["nodes"][3]["op"] = "_sg_mkldnn_fully_connected"
    (tmp_path / "q-symbol.json").write_text(json.dumps(graph))
    with pytest.raises(NotSupported, match="_sg_mkldnn_fully_connected.*'add'"):
        SymbolBlock.imports(str(tmp_path / "q-symbol.json"), ["data"])


IMPORT = """
net = gluon.SymbolBlock.imports({graph!r}, ['data'], {params!r})
out['y'] = net(nd.array(inp['x'])).asnumpy()
net.hybridize()
out['h'] = net(nd.array(inp['x'])).asnumpy()
"""


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenetv2_0.25", "densenet121"])
def test_our_graph_json_runs_in_mxnet(oracle, tmp_path, name):
    """The other way: ``net(sym.var('data')).save(...)`` on ast-hybrid writes a graph MXNet 1.9.1 loads with
    ``SymbolBlock.imports`` and runs to our output (our parameters saved with ``nd.save``)."""
    from ast_hybrid import sym
    from ast_hybrid.gluon.model_zoo import vision

    size = MODELS[name]
    x = np.random.RandomState(2).uniform(-1, 1, (1, 3, size, size)).astype("float32")
    net = vision.get_model(name, classes=10)
    net.initialize()
    net.hybridize()
    ours = net(nd.array(x)).asnumpy()
    graph = net(sym.var("data"))
    graph.save(str(tmp_path / "g-symbol.json"))
    nd.save(str(tmp_path / "g.params"), {p.name: p.data() for p in net.collect_params().values()})
    ref = oracle.run(IMPORT.format(graph=str(tmp_path / "g-symbol.json"), params=str(tmp_path / "g.params")), x=x)
    scale = np.abs(ours).max()
    for key in ("y", "h"):
        np.testing.assert_allclose(ref[key], ours, rtol=0, atol=1e-4 * scale)
    assert json.loads(graph.tojson())["heads"] == [[len(json.loads(graph.tojson())["nodes"]) - 1, 0, 0]]


@pytest.mark.parametrize("name", ["resnet18_v2", "mobilenetv2_0.25"])
def test_our_export_files_run_in_mxnet(oracle, tmp_path, name):
    """``HybridBlock.export`` writes MXNet's files: MXNet 1.9.1's ``SymbolBlock.imports`` runs them to our
    output (``aux:`` running statistics included)."""
    from ast_hybrid.gluon.model_zoo import vision

    size = MODELS[name]
    x = np.random.RandomState(3).uniform(-1, 1, (2, 3, size, size)).astype("float32")
    net = vision.get_model(name, classes=10)
    net.initialize()
    net.hybridize()
    net(nd.array(x))
    for k, p in net.collect_params().items():
        if k.endswith(("running_mean", "running_var")):
            p.set_data(nd.random.uniform(0.5, 1.5, shape=p.shape))
    ours = net(nd.array(x)).asnumpy()
    net.export(str(tmp_path / name), epoch=2)
    ref = oracle.run(IMPORT.format(graph=str(tmp_path / f"{name}-symbol.json"),
                                   params=str(tmp_path / f"{name}-0002.params")), x=x)
    for key in ("y", "h"):
        np.testing.assert_allclose(ref[key], ours, rtol=0, atol=1e-4 * np.abs(ours).max())


OPERATORS = """
x = mx.sym.var('data')
outs = [x > 0.3, x >= 0.3, x < -0.2, x <= -0.2, x == 0.5, x != 0.5, x ** 2, 2 ** x, x % 0.7, 0.7 % (x + 2),
        mx.sym.maximum(x, 0.1), mx.sym.minimum(x, 0.1), x > x * 0.5, x == x, mx.sym.hypot(x, 0.5),
        mx.sym.broadcast_logical_and(x > 0, x < 0.5), mx.sym.broadcast_logical_or(x > 0.4, x < -0.4)]
graph = mx.sym.Group(outs)
graph.save({path!r})
ops = sorted({{n['op'] for n in __import__('json').loads(graph.tojson())['nodes']}})
meta['ops'] = ops
for i, y in enumerate(graph.eval(data=nd.array(inp['x']))):
    out['y%d' % i] = y.asnumpy()
"""


def test_mxnet_scalar_and_comparison_operators_load(oracle, tmp_path):
    """A Symbol's operators (``x > 0.3``, ``2 ** x``, ``x % 0.7``, ...) are recorded in MXNet's graph JSON as
    internal operators (``_greater_scalar``, ``_rpower_scalar``, ``_mod_scalar``, ...): GluonCV's int8 SSDs
    have them.  Each loaded and evaluated here equals MXNet's."""
    from ast_hybrid.mxnet import symbol

    x = np.random.RandomState(4).uniform(-1, 1, (3, 7)).astype("float32")
    path = str(tmp_path / "ops-symbol.json")
    ref = oracle.run(OPERATORS.format(path=path), x=x)
    assert {"_greater_scalar", "_rpower_scalar", "_rmod_scalar", "_maximum_scalar"} <= set(ref["meta"]["ops"])
    got = symbol.load(path).eval(data=nd.array(x))
    assert len(got) == len([k for k in ref if k.startswith("y")])
    for i, y in enumerate(got):
        np.testing.assert_allclose(y.asnumpy(), ref[f"y{i}"], rtol=1e-6, atol=1e-6, err_msg=str(i))
        assert y.dtype == ref[f"y{i}"].dtype, i
