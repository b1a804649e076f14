"""``mx``: ``import mxnet`` resolving to ``ast_hybrid.mxnet`` for the test, as ``ast-hybrid run`` makes it."""

import sys

import pytest

collect_ignore = ["scripts"]       # MXNet scripts, run by the tests under `ast-hybrid run`, not imported


@pytest.fixture
def mx():
    from ast_hybrid import mxnet as compat

    was_installed = compat.installed()
    saved = {k: v for k, v in sys.modules.items() if k == "mxnet" or k.startswith("mxnet.")}
    compat.uninstall()
    compat.install()
    try:
        import mxnet
        yield mxnet
    finally:
        compat.uninstall()
        sys.modules.update(saved)
        if was_installed:
            compat.install()



def _same(ours, theirs, rtol, atol, x64):
    import jax
    import numpy as np

    assert sorted(ours) == sorted(theirs)
    for k in ours:
        if k == "meta":
            assert ours[k] == theirs[k]
            continue
        assert ours[k].shape == theirs[k].shape, (k, ours[k].shape, theirs[k].shape)
        want = theirs[k].dtype if x64 else jax.dtypes.canonicalize_dtype(theirs[k].dtype)
        assert ours[k].dtype == want, (k, ours[k].dtype, theirs[k].dtype)
        np.testing.assert_allclose(ours[k], theirs[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.fixture
def both(oracle, mx):
    """``both(code, rtol=1e-6, atol=0, x64=True, **inputs)``: the same code run by MXNet 1.9.1 and by ``import mxnet``
    on ast-hybrid, each with ``mx``, ``nd``, ``gluon``, ``np``, ``inp`` (the inputs) and ``out``/``meta`` to
    fill; asserts every ``out`` array equal (dtype, shape, values within the tolerance) and ``meta`` exactly
    equal, and returns ``(ours, theirs)`` as ``oracle.run`` gives them.  ``x64=False``: where MXNet makes a
    64-bit array, ours is jax's canonical dtype (32-bit unless ``jax_enable_x64``; docs/gluon.md, on purpose)."""
    import numpy as np

    def run(code, rtol=1e-6, atol=0.0, x64=True, **inputs):
        code += "\nfor _k in list(out):\n    out[_k] = out[_k].asnumpy() if hasattr(out[_k], 'asnumpy') else out[_k]\n"
        # nodes named as in a fresh process on both sides (fresh name counters): the nodes earlier tests named
        # in either process (concat9...) do not count
        theirs = oracle.run(f"with mx.name.NameManager():\n    exec({code!r}, globals())", **inputs)
        out, meta = {}, {}
        with mx.name.NameManager():
            exec(compile(code, "<ours>", "exec"), {"mx": mx, "nd": mx.nd, "gluon": mx.gluon, "np": np,
                                                   "inp": dict(inputs), "out": out, "meta": meta})
        ours = {k: np.asarray(v) for k, v in out.items()}
        if meta:
            ours["meta"] = meta
        _same(ours, theirs, rtol, atol, x64)
        return ours, theirs

    return run


@pytest.fixture(scope="module")
def folder():
    """The folder holding GluonCV 0.10.5 and GluonNLP 0.10.0 (``oracle.ensure_gluon_pkgs``: installed now if
    missing); the test skips, loudly, if it cannot be had."""
    from ast_hybrid.testing import oracle

    try:
        return oracle.ensure_gluon_pkgs()
    except oracle.OracleUnavailable as exc:
        pytest.skip(f"GLUON PACKAGES UNAVAILABLE, NOT run: {exc}")
