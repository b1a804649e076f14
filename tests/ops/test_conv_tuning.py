"""xla/conv_tuning.py: convolutions the rule leaves to XLA are timed both ways once per machine, kept on disk,
and computed as the measurement says; the program computes the same values either way."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from ast_hybrid.xla import channel_last as CL
from ast_hybrid.xla import conv_tuning as T
from ast_hybrid.xla import program


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AST_HYBRID_COMPILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AST_HYBRID_COMPILE_CACHE", raising=False)
    monkeypatch.delenv(T.ENV, raising=False)
    monkeypatch.delenv("AST_HYBRID_CONV_LOWERING", raising=False)


def _program(leaves, x):
    (w, g) = leaves
    y = lax.conv_general_dilated(x, w, (1, 1), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"))
    y = jax.nn.relu(y)
    z = lax.conv_general_dilated(y, g, (1, 1), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                 feature_group_count=8)       # grouped: never im2col
    return z.sum(axis=(2, 3))


def _args():
    r = np.random.RandomState(0)
    leaves = (jnp.asarray(r.randn(8, 4, 3, 3).astype("f4")), jnp.asarray(r.randn(8, 1, 3, 3).astype("f4")))
    return leaves, jnp.asarray(r.randn(2, 4, 11, 11).astype("f4"))


def _convs():
    leaves, x = _args()
    return list(CL.convolutions(jax.make_jaxpr(_program)(leaves, x).jaxpr))


def _counting(monkeypatch, pick):
    calls = []

    def timing(e):
        calls.append(T.signature(e))
        return {"pick": pick, "xla_s": 1.0, "im2col_s": 0.5 if pick == "im2col" else 2.0}
        yield       # a plan (xla/tuning.py) with no step
    monkeypatch.setattr(T, "timing", timing)
    return calls


def test_only_ungrouped_float_convolutions_have_a_signature():
    plain, grouped = _convs()
    assert json.loads(T.signature(plain))[:2] == [[2, 4, 11, 11], [8, 4, 3, 3]]
    assert T.signature(grouped) is None


def test_each_shape_is_measured_once_and_kept_on_disk(monkeypatch):
    calls = _counting(monkeypatch, "im2col")
    convs = _convs()
    assert T.im2col_picks(convs) == {T.signature(convs[0])}
    assert T.im2col_picks(convs) == {T.signature(convs[0])}       # a new Table: read back from the file
    assert calls == [T.signature(convs[0])]
    assert T.Table.path().is_file()


def test_the_program_computes_what_the_measurement_picked(monkeypatch):
    leaves, x = _args()
    want = np.asarray(jax.jit(_program)(leaves, x))
    for pick, convolutions in (("xla", 2), ("im2col", 1)):      # the grouped one stays XLA's
        monkeypatch.setenv("AST_HYBRID_COMPILE_CACHE_DIR", str(T.Table.path().parent / pick))
        _counting(monkeypatch, pick)
        lowered = program.Program(_program).lower(leaves, x)
        assert lowered.as_text().count("convolution(") == convolutions
        np.testing.assert_allclose(np.asarray(lowered.compile()(leaves, x)), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("env", [{T.ENV: "0"}, {"AST_HYBRID_CONV_LOWERING": "xla"}])
def test_off_or_with_a_lowering_forced_nothing_is_measured(monkeypatch, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    calls = _counting(monkeypatch, "im2col")
    leaves, x = _args()
    assert "convolution(" in program.Program(_program).lower(leaves, x).as_text()
    assert calls == []


def test_with_the_compile_cache_off_nothing_is_written(monkeypatch):
    monkeypatch.setenv("AST_HYBRID_COMPILE_CACHE", "0")
    calls = _counting(monkeypatch, "xla")
    convs = _convs()
    T.im2col_picks(convs)
    T.im2col_picks(convs)
    assert len(calls) == 2 and not T.Table.path().exists()


@pytest.mark.parametrize("content", ["not json", "[1, 2]", {"sig": "nonsense"}, 3])
def test_a_damaged_table_is_measured_again_and_rewritten(monkeypatch, content):
    path = T.Table.path()
    path.parent.mkdir(parents=True)
    path.write_text(content if isinstance(content, str) else json.dumps({T._fingerprint(): content}))
    calls = _counting(monkeypatch, "xla")
    convs = _convs()
    assert T.im2col_picks(convs) == set() and len(calls) == 1
    assert T.Table().answers[T.signature(convs[0])]["pick"] == "xla"


def test_other_machines_answers_are_kept(monkeypatch):
    path = T.Table.path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"another machine": {"sig": {"pick": "im2col"}}}))
    _counting(monkeypatch, "xla")
    T.im2col_picks(_convs())
    data = json.loads(path.read_text())
    assert data["another machine"] == {"sig": {"pick": "im2col"}} and T._fingerprint() in data


def test_a_real_measurement_runs_even_inside_a_trace():
    plain = _convs()[0]
    got = []
    jax.make_jaxpr(lambda a: (got.append(T._measure(plain)), a)[1])(1.0)
    (answer,) = got
    assert answer["pick"] in ("xla", "im2col") and answer["xla_s"] > 0 and answer["im2col_s"] > 0
    assert (answer["pick"] == "im2col") == (answer["im2col_s"] <= T.MARGIN * answer["xla_s"])


def test_a_large_convolution_stays_xlas_after_one_run(monkeypatch):
    monkeypatch.setattr(T, "LONG", 0.0)         # every convolution counts as large
    answer = T._measure(_convs()[0])
    assert answer["pick"] == "xla" and answer["im2col_s"] is None and answer["xla_s"] > 0


def test_a_convolution_that_cannot_be_timed_stays_xlas(monkeypatch):
    def broken(e, lowering, rules=None):     # its program's compile fails (a job: thrown into the plan)
        raise RuntimeError("no")
    monkeypatch.setattr(T, "program", broken)
    convs = _convs()
    assert T.im2col_picks(convs) == set()
    assert T.Table().answers[T.signature(convs[0])]["pick"] == "xla"


_SHAPES = {
    "1-D": ((2, 4, 20), (8, 4, 3), dict(window_strides=(1,), padding=[(1, 1)], dimension_numbers=("NCH", "OIH", "NCH"))),
    "3-D": ((1, 4, 6, 6, 6), (8, 4, 3, 3, 3),
            dict(window_strides=(1, 1, 1), padding=[(1, 1)] * 3, dimension_numbers=("NCDHW", "OIDHW", "NCDHW"))),
    "strided": ((1, 4, 9, 9), (8, 4, 3, 3), dict(window_strides=(2, 2), padding=[(0, 1)] * 2,
                                                  dimension_numbers=("NCHW", "OIHW", "NCHW"))),
    "dilated": ((1, 4, 9, 9), (8, 4, 3, 3), dict(window_strides=(1, 1), padding=[(2, 2)] * 2, rhs_dilation=(2, 2),
                                                  dimension_numbers=("NCHW", "OIHW", "NCHW"))),
}


@pytest.mark.parametrize("case", sorted(_SHAPES))
def test_every_convolution_im2col_takes_is_timed_and_computed_either_way(case):
    xs, ws, kw = _SHAPES[case]
    r = np.random.RandomState(1)
    x, w = jnp.asarray(r.randn(*xs).astype("f4")), jnp.asarray(r.randn(*ws).astype("f4"))

    def f(x, w):
        return lax.conv_general_dilated(x, w, **kw)
    closed = jax.make_jaxpr(f)(x, w)
    (e,) = CL.convolutions(closed.jaxpr)
    assert T._measure(e)["pick"] in ("xla", "im2col")
    perm = (*range(2, len(ws)), 1, 0)
    for im2col in (set(), {T.signature(e)}):
        got = jax.jit(lambda x, w: CL.channel_last(closed, [x, w], {1: perm}, 1, im2col=im2col))(x, w.transpose(perm))
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(f(x, w)), rtol=1e-5, atol=1e-4)
