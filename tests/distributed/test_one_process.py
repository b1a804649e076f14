"""One process, 8 simulated devices (issue 16): Gluon with ``kvstore='device'`` trains as one device does.

XLA_FLAGS must be set before jax starts, so ``scripts/eight_devices.py`` runs in a subprocess and reports in
JSON; this process (one device) loads the checkpoints it saved.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("eight")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    done = subprocess.run([sys.executable, str(SCRIPTS / "eight_devices.py"), str(outdir)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]), outdir


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_losses_on_eight_devices_are_one_devices(report, kind):
    r = report[0][kind]
    assert len(r["multi"]) == len(r["single"]) == 20
    np.testing.assert_allclose(r["multi"], r["single"], rtol=1e-5, atol=1e-5)
    assert r["single"][-1] < r["single"][0]          # it learns (the comparison is not of constants)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_the_batch_is_split_and_the_parameters_replicated(report, kind):
    layout = report[0][kind]["layout"]
    for name in ("output", "loss"):                  # 16 rows over 8 devices: 2 each
        assert layout[name] == {"spec": "P('data',)", "devices": 8, "shard_rows": [2]}, name
    for name in ("weight", "grad"):                  # whole on every device
        assert layout[name]["spec"] == "P()" and layout[name]["devices"] == 8, name
    assert layout["n_ctx"] == 8 and layout["list_data"] == [f"cpu({i})" for i in range(8)]


def test_mxnets_loop_over_split_and_load_slices_sums_the_gradients(report):
    r = report[0]["mlp"]
    np.testing.assert_allclose(r["split"], r["single"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_a_checkpoint_from_eight_devices_loads_on_one(report, kind):
    r, outdir = report
    spec = importlib.util.spec_from_file_location("eight_devices", SCRIPTS / "eight_devices.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from ast_hybrid import nd

    net = module.NETS[kind][0]()
    net.load_parameters(str(outdir / f"{kind}.params"))
    out = net(nd.array(np.array(r[kind]["test_x"], dtype="float32"))).asnumpy()
    np.testing.assert_allclose(out, r[kind]["test_output"], rtol=1e-5, atol=1e-6)


def test_load_parameters_with_several_contexts_replicates(report):
    r = report[0]
    assert r["reloaded"]["layout"]["spec"] == "P()" and r["reloaded"]["layout"]["devices"] == 8
    assert r["reloaded"]["n_ctx"] == 8
    np.testing.assert_allclose(r["reloaded"]["output"], r["cnn"]["test_output"], rtol=1e-5, atol=1e-6)


def test_a_batch_that_does_not_divide(report):
    r = report[0]
    assert r["even_split_error"].startswith("data with shape (10, 3) cannot be evenly split into 8 slices")
    assert "even_split=False" in r["even_split_error"]
    assert r["uneven_rows"] == [2, 2, 1, 1, 1, 1, 1, 1]          # MXNet's: the first size % n one longer
    assert r["uneven_contexts"] == [f"cpu({i})" for i in range(8)]
    assert len(r["uneven_warnings"]) == 1 and "batch of 12 does not split evenly over 8" in r["uneven_warnings"][0]
    assert r["uneven_output_diff"] < 1e-5                        # computed whole, as one device does
