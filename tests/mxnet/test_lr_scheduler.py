"""``mxnet.lr_scheduler`` against MXNet 1.9.1: the rate at every update count, warm-up and decay."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

SCHEDULES = [
    "FactorScheduler(step=3, factor=0.5)",
    "FactorScheduler(step=2, factor=0.1, stop_factor_lr=1e-4, base_lr=0.5, warmup_steps=4, warmup_begin_lr=0.1)",
    "MultiFactorScheduler(step=[2, 5, 9], factor=0.3, base_lr=0.2)",
    "MultiFactorScheduler(step=[6, 8], factor=0.5, warmup_steps=5, warmup_mode='constant', warmup_begin_lr=0.001)",
    "PolyScheduler(max_update=12, base_lr=0.3, pwr=2)",
    "PolyScheduler(max_update=12, base_lr=0.3, pwr=0.5, final_lr=0.01, warmup_steps=3)",
    "CosineScheduler(max_update=10, base_lr=1.0)",
    "CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.1, warmup_steps=4, warmup_begin_lr=0.2)",
]
COUNTS = [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 20, 40]


@pytest.mark.parametrize("ctor", SCHEDULES)
def test_schedule_matches_mxnet(oracle, mx, ctor):
    want = oracle.run(f"s = mx.lr_scheduler.{ctor}\nout['lr'] = np.array([s(n) for n in {COUNTS}])")["lr"]
    sched = eval(f"mx.lr_scheduler.{ctor}", {"mx": mx})
    np.testing.assert_allclose([sched(n) for n in COUNTS], want, rtol=1e-12)


@pytest.mark.parametrize("ctor", ["FactorScheduler(step=0)", "FactorScheduler(step=2, factor=2)",
                                  "MultiFactorScheduler(step=[3, 2])", "PolyScheduler(max_update=0)",
                                  "CosineScheduler(max_update=5, base_lr=0.1, warmup_begin_lr=0.2)",
                                  "FactorScheduler(step=2, warmup_mode='cubic')"])
def test_bad_arguments_are_refused_as_mxnet_does(oracle, mx, ctor):
    from ast_hybrid.testing.oracle import OracleError

    with pytest.raises(OracleError) as theirs:
        oracle.run(f"mx.lr_scheduler.{ctor}")
    with pytest.raises(ValueError) as ours:
        eval(f"mx.lr_scheduler.{ctor}", {"mx": mx})
    assert str(ours.value) in str(theirs.value)
