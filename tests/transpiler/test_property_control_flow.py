"""Property: converted+jitted random control-flow programs equal plain Python.

Programs come from ``progen`` (source text written to a real module file, so
``inspect.getsource`` works).  Tiers: ``test_jit_matches_plain_python``
(profile ``fast``, 200 programs; ``AST_HYBRID_PROPERTY=ci`` raises it) and the
``slow``-marked ``..._ci_tier`` (profile ``ci``: 400 more programs, run by the
full suite and CI; ``-m 'not slow'`` or ``-m quick`` leaves it out).  Each
program is converted on its own (``ast_hybrid.convert``, what ``ast_hybrid.jit``
wraps in ``jax.jit``) and a group of ``GROUP`` converted programs is traced and
compiled as one ``jax.jit`` program (``[g(*args) for g, args in ...]``), run on
``INPUTS_PER_PROGRAM`` inputs each: one XLA compile per group instead of one per
program (a compile here is ~0.12 s whatever its size, most of a lone program's
cost: 0.19 s a program alone, 0.10 s in groups of 10).  Each program's output is
compared with Python's on its own, the failure message naming its source.
The CI tier took 1,500 programs and 7 of the suite's 40 minutes until the suite
was sized to run in 20; the programs that found bugs stay as named tests
(``test_found_by_progen.py``), and the two tiers draw different programs
(hypothesis derives each test's seed from its name).

The generator itself is checked against plain Python in every run.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import progen
from ast_hybrid.testing.memory_maps import release_compiled_programs

pytestmark = pytest.mark.slow     # generated programs, each converted and compiled

GROUP = 10                        # programs compiled together (see the docstring)
settings.register_profile("fast", max_examples=200, deadline=None, derandomize=True,
                          database=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", max_examples=400, deadline=None, derandomize=True,
                          database=None, suppress_health_check=list(HealthCheck))
settings.register_profile("fast_groups", max_examples=200 // GROUP, deadline=None, derandomize=True,
                          database=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci_groups", max_examples=400 // GROUP, deadline=None, derandomize=True,
                          database=None, suppress_health_check=list(HealthCheck))
PROFILE = os.environ.get("AST_HYBRID_PROPERTY", "fast")
INPUTS_PER_PROGRAM = 4

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@settings(settings.get_profile(PROFILE))
@given(seeds)
def test_generated_programs_are_well_defined_python(seed):
    r = random.Random(seed)
    src = progen.generate(r)
    compile(src, "<progen>", "exec")
    f = progen.load(src)
    for _ in range(INPUTS_PER_PROGRAM):
        x, y, n = progen.inputs(r)
        out = f(x, y, n)
        assert np.asarray(out).dtype == np.float32, src
        assert np.isfinite(out), src


def _check_against_python(seed, make=None):
    import jax.numpy as jnp

    if make is None:
        import ast_hybrid

        make = ast_hybrid.jit
    r = random.Random(seed)
    src = progen.generate(r)
    f = progen.load(src)
    g = make(f)
    release_compiled_programs()     # thousands of programs: stay under the kernel's mapping limit
    for _ in range(INPUTS_PER_PROGRAM):
        x, y, n = progen.inputs(r)
        want = f(x, y, n)
        got = g(jnp.asarray(x), jnp.asarray(y), jnp.asarray(n, dtype=jnp.int32))
        got = np.asarray(got)
        assert got.dtype == np.float32, src
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=src)


@settings(settings.get_profile(PROFILE))
@given(seeds)
def test_harness_eager_jax_matches_numpy(seed):
    """The harness itself: the unconverted function run eagerly on concrete jax
    arrays (Python control flow works on concrete values) agrees with numpy, so
    a mismatch in the jit property is the transpiler's, not the inputs'."""
    _check_against_python(seed, make=lambda f: f)


def _check_group_jitted(group_seed):
    """``GROUP`` programs converted one by one, compiled as one ``jax.jit`` program, each compared with Python
    (the group's seed draws its programs' seeds: hypothesis's own draws repeat small values)."""
    import jax
    import jax.numpy as jnp

    import ast_hybrid

    draw = random.Random(group_seed)
    rs = [random.Random(draw.getrandbits(32)) for _ in range(GROUP)]
    srcs = [progen.generate(r) for r in rs]
    fs = [progen.load(src) for src in srcs]
    converted = []
    for f, src in zip(fs, srcs):
        try:
            converted.append(ast_hybrid.convert(f))
        except Exception as err:
            raise AssertionError(f"conversion failed: {err}\n{src}") from err
    together = jax.jit(lambda args: [g(*a) for g, a in zip(converted, args)])
    release_compiled_programs()     # thousands of programs: stay under the kernel's mapping limit
    for _ in range(INPUTS_PER_PROGRAM):
        inputs = [progen.inputs(r) for r in rs]
        gots = together([(jnp.asarray(x), jnp.asarray(y), jnp.asarray(n, dtype=jnp.int32)) for x, y, n in inputs])
        for f, src, (x, y, n), got in zip(fs, srcs, inputs, gots):
            want = f(x, y, n)
            got = np.asarray(got)
            assert got.dtype == np.float32, src
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=src)


@settings(settings.get_profile(PROFILE + "_groups"))
@given(seeds)
def test_jit_matches_plain_python(group_seed):
    _check_group_jitted(group_seed)


@pytest.mark.slow
@settings(settings.get_profile("ci_groups"))
@given(seeds)
def test_jit_matches_plain_python_ci_tier(group_seed):
    """The CI tier: 400 more programs (deselect locally with ``-m 'not slow'``)."""
    _check_group_jitted(group_seed)


def test_a_lone_program_through_ast_hybrid_jit():
    """The tiers compile programs in groups; ``ast_hybrid.jit`` itself, on programs of the generator."""
    for seed in range(5):
        _check_against_python(seed)


UNDEFINED_IN_ONE_BRANCH = '''
def f(x):
    if x.sum() > 0:
        z = x * 2.0
    return z
'''


@settings(max_examples=20, deadline=None, database=None)
@given(st.sampled_from(["x.sum() > 0", "x[0] < 1.0", "not (x.sum() > 0)"]),
       st.sampled_from(["z = x * 2.0", "z = x + 1.0"]))
def test_variable_defined_in_one_traced_branch_raises_hy030(cond, assign):
    import jax.numpy as jnp

    import ast_hybrid
    from ast_hybrid.common.diagnostics import ConversionError

    src = f"def f(x):\n    if {cond}:\n        {assign}\n    return z\n"
    f = progen.load(src)
    with pytest.raises(ConversionError) as info:
        ast_hybrid.jit(f)(jnp.ones(3, jnp.float32))
    assert any(d.code == "HY030" for d in info.value.diagnostics), str(info.value)
