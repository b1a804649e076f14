"""``mxnet.gluon.utils`` against MXNet 1.9.1: the same calls, the same arrays."""

from __future__ import annotations

import numpy as np
import pytest

X = np.random.RandomState(3).uniform(-2, 2, (7, 4, 3)).astype("float32")


@pytest.mark.oracle
@pytest.mark.parametrize("call", ["split_data(x, 3, batch_axis=0, even_split=False)",
                                  "split_data(x, 2, batch_axis=1)", "split_data(x, 3, batch_axis=2)",
                                  "split_and_load(x, [mx.cpu(0)])", "split_data(x, 9, even_split=False)",
                                  "split_and_load(inp['x'], [mx.cpu(0), mx.cpu(0)], even_split=False)"])
def test_split_matches_mxnet(oracle, mx, call):
    want = oracle.run(f"from mxnet.gluon.utils import *\nx = nd.array(inp['x'])\nres = {call}\n"
                      "for i, r in enumerate(res): out[str(i)] = r.asnumpy()", x=X)
    from mxnet import nd
    from mxnet.gluon.utils import split_and_load, split_data  # noqa: F401

    res = eval(call, {"mx": mx, "x": nd.array(X), "inp": {"x": X}, "split_data": split_data,
                      "split_and_load": split_and_load})
    assert len(res) == len(want)
    for i, r in enumerate(res):
        np.testing.assert_array_equal(r.asnumpy(), want[str(i)])


def test_uneven_split_is_refused_as_mxnet_does(mx):
    from mxnet import nd
    from mxnet.gluon.utils import split_data

    with pytest.raises(ValueError, match="cannot be evenly split into 3 slices along axis 0"):
        split_data(nd.array(X), 3)


@pytest.mark.oracle
@pytest.mark.parametrize("call", ["split_data(x, 5, batch_axis=2, even_split=False)",
                                  "split_data(x, 4, batch_axis=2, even_split=False)"])
def test_more_slices_than_entries_off_axis_0_fails_in_both_ours_saying_why(oracle, mx, call):
    """(Along axis 0, MXNet gives empty slices at the end: test_split_matches_mxnet.)"""
    from ast_hybrid.testing.oracle import OracleError

    with pytest.raises(OracleError):          # MXNet: its slice_axis fails on an empty range
        oracle.run(f"from mxnet.gluon.utils import *\nx = nd.array(inp['x'])\nres = {call}", x=X)
    from mxnet import nd
    from mxnet.gluon.utils import split_data  # noqa: F401

    with pytest.raises(ValueError, match=r"cannot be split into \d slices along axis \d: it has only \d there"):
        eval(call, {"x": nd.array(X), "split_data": split_data})


@pytest.mark.oracle
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_global_norm_matches_mxnet(oracle, mx, max_norm):
    a, b = X[:2], X[3:, 1]
    want = oracle.run(f"arrs = [nd.array(inp['a']), nd.array(inp['b'])]\n"
                      f"meta['n'] = float(gluon.utils.clip_global_norm(arrs, {max_norm}))\n"
                      "out['a'], out['b'] = arrs[0].asnumpy(), arrs[1].asnumpy()", a=a, b=b)
    from mxnet import gluon, nd

    arrs = [nd.array(a), nd.array(b)]
    total = gluon.utils.clip_global_norm(arrs, max_norm)
    assert np.ndim(total) == 0 and total == pytest.approx(want["meta"]["n"], rel=1e-6)
    np.testing.assert_allclose(arrs[0].asnumpy(), want["a"], rtol=1e-6)
    np.testing.assert_allclose(arrs[1].asnumpy(), want["b"], rtol=1e-6)


def test_file_helpers(mx, tmp_path):
    import hashlib

    from mxnet.gluon.utils import _indent, check_sha1, download, replace_file

    f = tmp_path / "w.params"
    f.write_bytes(b"weights")
    digest = hashlib.sha1(b"weights").hexdigest()
    assert check_sha1(str(f), digest) and not check_sha1(str(f), "0" * 40)
    # a file already where MXNet would put it is returned, as MXNet's download does
    assert download("https://example.com/x/w.params", path=str(tmp_path), sha1_hash=digest) == str(f)
    replace_file(str(f), str(tmp_path / "v.params"))
    assert (tmp_path / "v.params").read_bytes() == b"weights" and not f.exists()
    assert _indent("a\nb\nc", 2) == "a\n  b\n  c" and _indent("a", 4) == "a"
