"""``import mxnet`` is the compatibility package: MXNet 1.9.1's module paths, ast-hybrid's own objects, and
an error naming the MXNet API for what is missing."""

from __future__ import annotations

import importlib

import pytest


def test_mxnet_modules_are_ast_hybrids_own_objects(mx):
    import ast_hybrid
    import ast_hybrid.gluon.rnn.rnn_layer
    from ast_hybrid.ops import random as ah_random

    import mxnet.gluon.nn
    import mxnet.ndarray
    from mxnet import autograd, gluon, nd
    from mxnet.gluon import nn, rnn

    assert nd is ast_hybrid.nd and mxnet.ndarray is ast_hybrid.nd and mx.nd == nd    # GluonNLP: F == nd
    assert autograd is ast_hybrid.autograd and mx.random is ah_random and mx.rnd is ah_random
    assert nn is ast_hybrid.gluon.nn and mxnet.gluon.nn is nn and rnn is ast_hybrid.gluon.rnn
    assert gluon.HybridBlock is ast_hybrid.gluon.HybridBlock and gluon.Trainer is ast_hybrid.gluon.Trainer
    assert gluon.loss is ast_hybrid.gluon.loss and gluon.contrib.nn is ast_hybrid.gluon.contrib.nn
    assert importlib.import_module("mxnet.gluon.contrib.cnn.conv_layers") is ast_hybrid.gluon.contrib.cnn.conv_layers
    assert importlib.import_module("mxnet.gluon.contrib.cnn").ModulatedDeformableConvolution is \
        ast_hybrid.gluon.contrib.cnn.ModulatedDeformableConvolution           # GluonCV's CenterNet dcnv2 import
    assert importlib.import_module("mxnet.gluon.rnn.rnn_layer") is ast_hybrid.gluon.rnn.rnn_layer
    assert importlib.import_module("mxnet.gluon.block").HybridBlock is gluon.HybridBlock
    assert importlib.import_module("mxnet.gluon.model_zoo.vision") is ast_hybrid.gluon.model_zoo.vision
    assert mx.init is mx.initializer and mx.init.Xavier is ast_hybrid.init.Xavier
    assert mx.sym is mx.symbol and mx.kv is mx.kvstore and mx.__version__ == "1.9.1"
    assert mx.cpu() == ast_hybrid.cpu() and mx.context.Context is ast_hybrid.Context
    assert ast_hybrid.nd.__spec__.name == "ast_hybrid.nd"          # served, not renamed
    assert not isinstance(nd.zeros((1,)), mx.sym.Symbol) and not mx.util.is_np_array()


def test_base_names_mxnet_code_imports(mx):
    from mxnet.base import _as_list, data_dir, integer_types, numeric_types, string_types

    import numpy as np
    assert isinstance(np.float32(1), numeric_types) and isinstance(np.int64(1), integer_types)
    assert isinstance("a", string_types) and _as_list(3) == [3] and _as_list([3]) == [3]
    assert _as_list((3,)) == [(3,)] and data_dir().endswith("mxnet")
    assert issubclass(mx.MXNetError, Exception) and mx.base.MXNetError is mx.MXNetError


@pytest.mark.parametrize("statement,api", [
    ("import mxnet.rtc", "mxnet.rtc"),
    ("from mxnet import rtc", "mxnet.rtc"),
    ("mx.gluon.data.vision.transforms.RandomRotation((0, 9))", "mxnet.gluon.data.vision.transforms.RandomRotation"),
    ("mx.np.polyfit", "mxnet.numpy.polyfit"),
    ("mx.optimizer.LARS(learning_rate=0.1)", "mxnet.optimizer.LARS"),
    ("mx.mod.PythonLossModule", "mxnet.module.PythonLossModule"),
    ("mx.nd.IdentityAttachKLSparseReg", "mxnet.nd.IdentityAttachKLSparseReg"),
    ("mx.operator.NumpyOp", "mxnet.operator.NumpyOp"),
    ("mx.mod.SequentialModule()", "mxnet.module.SequentialModule"),
    ("mx.gluon.contrib.estimator", "mxnet.gluon.contrib.estimator"),
    ("mx.contrib.amp.init()", "mxnet.contrib.amp.init"),
    ("mx.kv.KVStoreServer", "mxnet.kv.KVStoreServer"),
    ("mx.npx.multibox_prior", "mxnet.numpy_extension.multibox_prior"),
    ("mx.gluon.model_zoo.model_store.get_model_file('resnet18_v1', root=str(tmp))", "get_model_file('resnet18_v1')"),
    ("mx.gluon.utils.download('https://example.com/w.params', path=str(tmp))", "mxnet.gluon.utils.download"),
])
def test_what_mxnet_has_and_we_do_not_names_the_mxnet_api(mx, tmp_path, statement, api):
    with pytest.raises(Exception) as info:
        exec(statement, {"mx": mx, "tmp": tmp_path})
    assert api in str(info.value) and "not available in ast-hybrid" in str(info.value) \
        or "does not download" in str(info.value)
    assert type(info.value) is not AttributeError           # never Python's bare error


def test_a_name_mxnet_never_had_is_pythons_own_error(mx):
    with pytest.raises(AttributeError) as info:
        mx.nd.no_such_operator
    assert type(info.value) is AttributeError and not hasattr(mx.gluon, "no_such_thing")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mxnet.no_such_module")
    assert not hasattr(mx.nd, "multi_lars")                  # hasattr/getattr(default) keep working
    assert getattr(mx.nd, "register", None) is None          # ast_hybrid.nd's missing submodule too
    assert mx.nd.numpy is mx.np                              # (mx.nd.numpy: served since mx.np is here)


def test_custom_operators_and_functions_are_ast_hybrids(mx):
    """``mx.operator`` and ``mx.autograd.Function`` are ast-hybrid's own (``tests/ops/test_custom_oracle.py``)."""
    from ast_hybrid import autograd, operator

    assert mx.autograd.Function is autograd.Function
    assert (mx.operator.CustomOp, mx.operator.CustomOpProp) == (operator.CustomOp, operator.CustomOpProp)

    @mx.operator.register("ah_twice")
    class TwiceProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Twice()

    class Twice(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * 2)

    assert mx.nd.Custom(mx.nd.ones((2,)), op_type="ah_twice").asnumpy().tolist() == [2.0, 2.0]


def test_uninstall_removes_the_finder_and_the_modules(mx):
    import sys

    from ast_hybrid import mxnet as compat

    import mxnet.gluon.nn  # noqa: F401
    compat.uninstall()
    assert not compat.installed() and not [k for k in sys.modules if k.split(".")[0] == "mxnet"]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mxnet")


@pytest.mark.oracle
def test_the_api_lists_are_mxnets_own(oracle):
    """``ast_hybrid/mxnet/_api.py`` holds what MXNet 1.9.1 itself has (regenerate with mxnet_api_probe.py)."""
    from pathlib import Path

    from ast_hybrid.mxnet import _api

    probe = (Path(__file__).parent / "mxnet_api_probe.py").read_text()
    got = oracle.run(probe.replace('if __name__ == "__main__":', "if False:") +
                     "\nmodules, names = probe()\nmeta['modules'] = list(modules)\n"
                     "meta['names'] = {k: list(v) for k, v in names.items()}")["meta"]
    assert tuple(got["modules"]) == _api.MODULES
    assert {k: tuple(v) for k, v in got["names"].items()} == _api.NAMES
