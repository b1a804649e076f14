"""The conformance report's offline stand-in for GluonCV's pretrained downloads (``_models.serve_base_weights``)
with video networks: GluonCV's I3D UCF101/HMDB51/custom and SlowFast custom constructors copy the weights of a
Kinetics400 *3D* network (``get_model(..., pretrained=True)``), which the stand-in must build and run at the
whole N,C,T,H,W input; a 2D base (I3D's inflated ResNet-50) still runs at N,C,H,W."""

from __future__ import annotations

import types

import numpy as np
import pytest

from ast_hybrid.conformance import _models, run_model


def _fake_gluoncv(calls):
    class Net:
        def __init__(self, name):
            self.name = name

        def initialize(self, init):
            pass

        def __call__(self, x):
            calls.append((self.name, x.shape))

        def save_parameters(self, path):
            open(path, "w").close()

    store = types.SimpleNamespace()
    zoo = types.SimpleNamespace(model_store=store, get_model=lambda name, pretrained: Net(name))
    mx = types.SimpleNamespace(init=types.SimpleNamespace(Xavier=lambda: None),
                               nd=types.SimpleNamespace(zeros=np.zeros))
    return types.SimpleNamespace(model_zoo=zoo), mx


def test_served_3d_network_runs_at_the_whole_video_input(tmp_path):
    calls, used = [], []
    gluoncv, mx = _fake_gluoncv(calls)
    _models.serve_base_weights(gluoncv, mx, str(tmp_path), (1, 3, 8, 64, 64), used, create=True)
    get = gluoncv.model_zoo.model_store.get_model_file
    path3d = get("i3d_resnet50_v1_kinetics400")
    path2d = get("resnet50_v1b")
    get("i3d_resnet50_v1_kinetics400")                      # a second request reuses the file
    assert calls == [("i3d_resnet50_v1_kinetics400", (1, 3, 8, 64, 64)), ("resnet50_v1b", (1, 3, 64, 64))]
    assert path3d.endswith("base-i3d_resnet50_v1_kinetics400-8x64x64.params") and path2d.endswith("-64x64.params")
    assert used == ["i3d_resnet50_v1_kinetics400", "resnet50_v1b", "i3d_resnet50_v1_kinetics400"]
    _models.serve_base_weights(gluoncv, mx, str(tmp_path), (1, 3, 4, 32, 32), [], create=False)
    with pytest.raises(FileNotFoundError, match="saved no base network"):    # ours never builds one itself
        gluoncv.model_zoo.model_store.get_model_file("i3d_resnet50_v1_kinetics400")


@pytest.mark.oracle
def test_i3d_hmdb51_copying_a_kinetics_network_matches_mxnet():
    """Before: MXNet itself could not build it (the served Kinetics400 I3D was run at 1x3x64x64: "Input data
    should be 5D")."""
    row = run_model("i3d_resnet50_v1_hmdb51", "action3d", timeout=300, timed=False)
    assert row["status"] == "match", row["cause"]
    assert "i3d_resnet50_v1_kinetics400" in row["base_served"] and len(row["shape"]) == 5
    assert row["error"] < 1e-4
