"""Names GluonCV 0.10.5 / GluonNLP 0.10.0 import from MXNet besides the models (issue 12): the download URL
helpers, the model store's checksum table, ``base.NDArrayHandle`` and ``contrib.amp``, against MXNet 1.9.1."""

from __future__ import annotations

import hashlib
import traceback

import pytest


def _raised_at_this_line(info) -> bool:
    """Whether the traceback passes through the line of this file that made the call (the caller's line)."""
    return any(frame.filename == __file__ for frame in traceback.extract_tb(info.tb))


@pytest.mark.oracle
@pytest.mark.parametrize("repo", [None, "https://mirror.example/x/", "https://mirror.example/x"])
def test_repo_urls_match_mxnet(oracle, mx, monkeypatch, repo):
    code = ("import os\nos.environ.pop('MXNET_GLUON_REPO', None)\n"
            + (f"os.environ['MXNET_GLUON_REPO'] = {repo!r}\n" if repo else "")
            + "from mxnet.gluon.utils import _get_repo_url, _get_repo_file_url\n"
            "meta['base'] = _get_repo_url()\nmeta['file'] = _get_repo_file_url('gluon/dataset/squad', 'a.zip')\n")
    want = oracle.run(code)["meta"]
    monkeypatch.delenv("MXNET_GLUON_REPO", raising=False)
    if repo:
        monkeypatch.setenv("MXNET_GLUON_REPO", repo)
    from mxnet.gluon.utils import _get_repo_file_url, _get_repo_url

    assert {"base": _get_repo_url(), "file": _get_repo_file_url("gluon/dataset/squad", "a.zip")} == want


@pytest.mark.oracle
def test_model_sha1_table_and_short_hash_are_mxnets(oracle, mx):
    want = oracle.run("from mxnet.gluon.model_zoo import model_store as s\nmeta['t'] = s._model_sha1\n"
                      "meta['h'] = s.short_hash('resnet50_v2')")["meta"]
    store = mx.gluon.model_zoo.model_store
    assert store._model_sha1 == want["t"] and store.short_hash("resnet50_v2") == want["h"]
    with pytest.raises(ValueError, match="Pretrained model for nope is not available"):
        store.short_hash("nope")


def test_get_model_file_takes_mxnets_file_name_with_the_right_sha1(mx, tmp_path):
    store = mx.gluon.model_zoo.model_store
    data = b"weights"
    store._model_sha1["ah_test_net"] = hashlib.sha1(data).hexdigest()     # as GluonNLP adds its models
    try:
        path = tmp_path / f"ah_test_net-{store.short_hash('ah_test_net')}.params"
        path.write_bytes(data)
        assert store.get_model_file("ah_test_net", root=str(tmp_path)) == str(path)
        path.write_bytes(b"damaged")                                      # MXNet would download it again
        with pytest.raises(FileNotFoundError, match="does not download"):
            store.get_model_file("ah_test_net", root=str(tmp_path))
    finally:
        del store._model_sha1["ah_test_net"]


@pytest.mark.oracle
def test_ndarray_handle_is_mxnets_ctypes_type(oracle, mx):
    want = oracle.run("import ctypes\nmeta['t'] = mx.base.NDArrayHandle is ctypes.c_void_p")["meta"]
    import ctypes

    from mxnet.base import NDArrayHandle

    assert want["t"] and NDArrayHandle is ctypes.c_void_p


@pytest.mark.oracle
def test_amp_imports_as_in_mxnet_and_its_calls_name_the_api(oracle, mx):
    want = oracle.run("from mxnet.contrib.amp import amp\nfrom mxnet.contrib import amp as pkg\n"
                      "meta['init'] = amp._amp_initialized\nmeta['same'] = pkg.init is amp.init\n"
                      "meta['names'] = sorted(n for n in amp.__all__)")["meta"]
    from mxnet.contrib import amp as pkg
    from mxnet.contrib.amp import amp

    assert amp._amp_initialized is want["init"] is False and (pkg.init is amp.init) == want["same"]
    assert sorted(amp.__all__) == want["names"] and callable(amp.convert_bucketing_module)
    for call in (lambda: pkg.init(), lambda: amp.init_trainer(None), lambda: pkg.scale_loss(None, None)):
        with pytest.raises(NotImplementedError) as info:
            call()
        assert "mxnet.contrib.amp." in str(info.value) and "not available in ast-hybrid" in str(info.value)
        assert _raised_at_this_line(info)
