"""Every op also runs inside a compiled program: each differential case of the op modules is traced again (jax's
abstract evaluation, as ``jax.jit`` does before compiling) with its inputs as traced NDArrays, and must trace
and give the shapes and dtypes it gives eagerly (values eagerly are what the oracle tests check against MXNet;
values under jit are what the hybridized layer tests check).  All cases of a module are traced in ONE program;
a case that fails to trace is reported by name.  Cases that need concrete values are left out by design."""

import importlib

import jax
import numpy as np
import pytest
from ops_harness import _ours, cached

from ast_hybrid import nd

pytestmark = pytest.mark.slow     # every op case of the oracle modules, traced: not in the quick tier

MODULES = ["test_elemwise_oracle", "test_reduce_oracle", "test_shape_oracle", "test_indexing_oracle",
           "test_nn_oracle", "test_linalg_contrib_oracle"]

# Substrings of cases that cannot run on tracers, by design (each reviewed).
CONCRETE_ONLY = {
    "boolean_mask": "its output size depends on the values (eager only, as documented)",
    "asscalar": "a host conversion", "asnumpy": "a host conversion", "repr(": "prints values",
    "str(": "prints values", "bool(": "a host conversion", "nd.add(1, 2)": "Python scalars, no arrays",
    " is ": "object identity", "len(": "a Python int, not an array",
    "nd.histogram(x)": "no range: the bins come from the data's min and max (MXNet hands it to numpy)",
    "sample_ratio=0": "adaptive ROIAlign: the number of samples depends on the regions (eager only, as documented)",
    "sample_ratio=-1": "adaptive ROIAlign: the number of samples depends on the regions (eager only, as documented)",
}


def _eager_cases(mod):
    """The module's single-expression cases that run eagerly here (error cases are the oracle tests' job)."""
    out = {}
    for code in mod.CASES:
        if "\n" in code or any(k in code for k in CONCRETE_ONLY):
            continue
        try:
            out[code] = cached(code, mod.ARR)
        except Exception:
            continue
    return out


@pytest.mark.parametrize("module", MODULES)
def test_cases_run_traced_as_eagerly(module):
    mod = importlib.import_module(module)
    eager = _eager_cases(mod)
    names = sorted(mod.ARR)
    errors = {}

    def program(*xs):
        env = {k: nd.NDArray(x) for k, x in zip(names, xs)}
        outs = {}
        for code in eager:
            try:
                outs[code] = [o._arr if isinstance(o, nd.NDArray) else o
                              for o in _flatten(_ours(code, {}, env=env))]
            except Exception as exc:    # noqa: BLE001 - reported per case below
                errors[code] = f"{type(exc).__name__}: {exc}"
        return outs

    traced = jax.eval_shape(program, *[jax.ShapeDtypeStruct(mod.ARR[k].shape, mod.ARR[k].dtype) for k in names])
    mismatches = dict(errors)
    for code, want in eager.items():
        if code in errors:
            continue
        got = traced[code]
        if [(tuple(g.shape), np.dtype(g.dtype)) for g in got] != [(e.shape, e.dtype) for e in want]:
            mismatches[code] = f"traced {[(g.shape, g.dtype) for g in got]}, eager {[(e.shape, e.dtype) for e in want]}"
    assert len(eager) > 50
    assert not mismatches, "\n".join(f"{c}: {m}" for c, m in mismatches.items())


def _flatten(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flatten(item)]
    return [v]
