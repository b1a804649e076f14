"""What GluonCV's ImageNet training script (scripts/classification/imagenet/train_imagenet.py, run unmodified
under ``ast-hybrid run`` on a small image folder) showed, each kept as a test.

- Its ``RandomResizedCrop`` cuts every image to a size of its own; computed as jax ops, every new size
  compiled its XLA programs again (the crop's slice, the resize's multiplies and casts): 2 samples/s
  against MXNet's 18-36, the epoch's time almost all compiles.  Concrete images are now cropped and
  resized on the host (same arithmetic: ``tests/mxnet/test_vision.py`` still compares them with MXNet
  bit for bit).
- Resuming with ``--resume-states`` from a file MXNet's ``Trainer.save_states`` wrote failed deep in the
  unpickler (``mxnet.ndarray.ndarray is not available``); ``load_states`` now reads it
  (``test_trainer_states_oracle.py`` continues training from it as MXNet does).
"""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest


def test_random_crops_of_any_size_compile_nothing_new(caplog):
    import jax

    from ast_hybrid import nd
    from ast_hybrid.gluon.data.vision import transforms

    chain = transforms.Compose([transforms.RandomResizedCrop(16), transforms.RandomFlipLeftRight(),
                                transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
    rng = np.random.default_rng(0)
    images = [nd.array(rng.integers(0, 256, (40, 48, 3)), dtype="uint8") for _ in range(12)]
    random.seed(3)
    chain(images[0]).wait_to_read()        # the fixed-size part compiles once
    jax.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING):
            outs = [chain(im) for im in images[1:]]
    finally:
        jax.config.update("jax_log_compiles", False)
    compiled = [r.getMessage()[:80] for r in caplog.records if "Compiling" in r.getMessage()]
    assert compiled == []
    assert {o.shape for o in outs} == {(3, 16, 16)}


def test_host_crop_and_resize_give_the_traced_values():
    """The same resize computed on the host and inside a trace (the jax path): uint8 (OpenCV's fixed point)
    equal bits, float32 within one rounding (XLA may fuse a multiply and an add)."""
    import jax

    from ast_hybrid import nd
    from ast_hybrid.gluon.data.vision import _image

    rng = np.random.default_rng(1)
    for dtype in ("uint8", "float32"):
        img = rng.integers(0, 256, (23, 31, 3)).astype(dtype)
        host = _image.resize_hwc(nd.array(img, dtype=dtype), width=12, height=17).asnumpy()
        traced = np.asarray(jax.jit(lambda a: _image.resize_hwc.__wrapped__(a, width=12, height=17))(img))
        assert host.dtype == traced.dtype == np.dtype(dtype)
        if dtype == "uint8":
            np.testing.assert_array_equal(host, traced)
        else:
            np.testing.assert_allclose(host, traced, rtol=2e-7, atol=0)


@pytest.mark.oracle
def test_mxnet_optimizer_states_are_read(oracle, tmp_path):
    from ast_hybrid import autograd, nd
    from ast_hybrid.gluon import Trainer, nn

    states = tmp_path / "mx.states"
    theirs = oracle.run(f"""
from mxnet import autograd, nd
from mxnet.gluon import Trainer, nn
net = nn.Dense(2, in_units=3); net.initialize()
tr = Trainer(net.collect_params(), 'sgd', {{'learning_rate': 0.1, 'momentum': 0.9}})
with autograd.record():
    y = net(nd.ones((1, 3))).sum()
y.backward(); tr.step(1)
tr.save_states({str(states)!r})
out['bias_momentum'] = tr._updaters[0].states[0].asnumpy()
""")
    net = nn.Dense(2, in_units=3)
    net.initialize()
    tr = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    tr.load_states(str(states))
    bias = next(p for p in tr._params if p.name.endswith("bias"))
    np.testing.assert_array_equal(np.asarray(tr._states[bias][0]), theirs["bias_momentum"])
    with autograd.record():
        y = net(nd.ones((1, 3))).sum()
    y.backward()
    tr.step(1)
    own = tmp_path / "own.states"          # our own file still round-trips
    tr.save_states(str(own))
    tr.load_states(str(own))
    assert tr._t == 2


def test_validation_transforms_of_images_of_any_size_compile_nothing_new(compiles):
    """The script's validation chain (``Resize(keep_ratio=True)``, ``CenterCrop``, ``ToTensor``,
    ``Normalize``) over images of many sizes: the resize's result, computed on the host, was put on the device
    with ``jnp.asarray``, which in JAX 0.10 compiles a program (``stage``) per shape and dtype: one compile per
    image size (``ops._core.from_host`` now)."""
    from ast_hybrid import nd
    from ast_hybrid.gluon.data.vision import transforms

    chain = transforms.Compose([transforms.Resize(20, keep_ratio=True), transforms.CenterCrop(16),
                                transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
    rng = np.random.default_rng(2)
    sizes = [(30 + i, 41 + 2 * i) for i in range(8)]
    images = [nd.array(rng.integers(0, 256, (h, w, 3)), dtype="uint8") for h, w in sizes]
    chain(images[0]).wait_to_read()
    compiles.on = True
    outs = [chain(im) for im in images[1:]]
    for o in outs:
        o.wait_to_read()
    assert list(compiles) == []
    assert {o.shape for o in outs} == {(3, 16, 16)}
