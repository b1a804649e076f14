"""``python -m ast_hybrid.conformance`` (issue 12 item 5): the report machinery end to end against MXNet 1.9.1 on
cheap models (a CIFAR ResNet, mobilenet0.25 at 32x32, GluonNLP's small LSTM language model, the int8 MobileNet and
ResNet-50 GluonCV ships as MXNet oneDNN graphs), a damaged case
named by its first cause, and the table/JSON format.

The packages import whole through the compatibility package (no stand-ins since 653144f).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ast_hybrid.conformance import _models, _report, _sides, main, run_model, table, totals


@pytest.mark.oracle
@pytest.mark.parametrize("name,family", [("cifar_resnet20_v1", "classification"),
                                         ("mobilenet0.25", "classification"),
                                         ("standard_lstm_lm_200", "nlp"),
                                         ("mobilenet1.0_int8", "classification"),    # MXNet's oneDNN int8 graphs
                                         ("resnet50_v1_int8", "classification")])
def test_cheap_models_match_mxnet(name, family):
    timed = name == "cifar_resnet20_v1"            # the report's timed calls, on one row (the others: values)
    row = run_model(name, family, timeout=300, timed=timed)
    assert row["status"] == "match", row["cause"]
    assert row["built"] and row["plain"] and row["hybrid"] and row["error"] < 1e-4
    assert (row["ratio"] > 0) if timed else row["ratio"] is None
    if family != "nlp":
        assert row["shape"] == [1, 3, 32, 32]          # the smallest input of the family's table


@pytest.mark.oracle
def test_damaged_cases_have_a_named_first_cause():
    def shift_outputs(work):
        with np.load(work / "outputs.npz") as f:
            arrays = {k: f[k] + 1e-2 * np.abs(f[k]).max() for k in f.files}
        np.savez(work / "outputs.npz", **arrays)

    row = run_model("cifar_resnet20_v1", "classification", timeout=300, between=shift_outputs, timed=False)
    assert row["status"] == "fail" and row["built"] and not row["plain"] and not row["hybrid"]
    assert row["cause"].startswith("plain output differs: 1.0") and 9e-3 < row["error"] < 1.1e-2
    # a row that differs is checked against MXNet's own float kernels: here they agree, so it stays a failure
    assert row["kernel_spread"] < 1e-5, row

    row = run_model("cifar_resnet20_v1", "classification", timeout=300, timed=False,
                    between=lambda work: (work / "net.params").write_bytes(b"not a parameter file"))
    assert row["status"] == "fail" and not row["built"]
    assert "[at ast_hybrid/" in row["cause"] and "load" in row["cause"], row["cause"]

    row = run_model("no_such_model", "classification", timeout=300, timed=False)
    assert row["status"] == "mxnet" and row["cause"].startswith("MXNet itself: ValueError:")
    assert "[at gluoncv/model_zoo/model_zoo.py:" in row["cause"]


def test_first_cause_names_the_innermost_frame_of_ours_or_the_package():
    scope = {}
    source = "def inner():\n    raise KeyError('w  missing\\n here')\n"
    exec(compile(source, "/x/ast_hybrid/ops/fake.py", "exec"), scope)
    exec(compile("def outer(f):\n    f()\n", "/y/site/gluoncv/model.py", "exec"), scope)
    with pytest.raises(KeyError) as info:
        scope["outer"](scope["inner"])
    assert _sides.first_cause(info.value) == "KeyError: 'w missing\\n here' [at ast_hybrid/ops/fake.py:2 in inner]"


def test_families_inputs_and_detector_references():
    """Names to families (quantized and custom variants keep their family), video inputs, detectors' keywords
    and how much a detector's reference decides."""
    family = _models.family_of
    assert [family(n) for n in ("ssd_300_vgg16_atrous_custom", "ssd_512_mobilenet1.0_voc_int8",
                                "custom_faster_rcnn_fpn", "doublehead_rcnn_resnet50_v1b_voc")] == ["detection"] * 4
    assert [family(n) for n in ("vgg16_ucf101_int8", "resnet50_v1b_custom", "i3d_resnet50_v1_custom",
                                "slowfast_4x16_resnet50_custom")] == ["action", "action", "action3d", "action3d"]
    assert family("hrnet_w48_s") == "segmentation" and family("hrnet_w48_c") == "classification"
    assert _models.sizes("slowfast_8x8_resnet101_kinetics400", "action3d")[0] == (1, 3, 40, 32, 32)
    assert _models.sizes("c3d_kinetics400", "action3d")[2] == (1, 3, 16, 112, 112)   # its classifier's only size
    assert all(len(s) == 5 for s in _models.SIZES["action3d"])
    assert _models.init_of("ssd_512_vgg16_atrous_voc") == "Xavier()" and _models.init_of("resnet18_v1") == _models.INIT
    assert _models.init_of("ssd_512_mobilenet1.0_voc") == _models.INIT     # FeatureExpander: Xavier() ties scores
    ids = np.zeros((1, 4, 1), "float32")
    scores = np.array([0.9, 0.5, 0.5, -1], "float32").reshape(1, 4, 1)
    assert _models.detections([ids, scores, np.zeros((1, 4, 4))]) == (3, 2)     # 3 kept, a tie


def test_small_init_only_where_mxnet_is_ill_conditioned_and_siamrpn_takes_two_crops():
    """The deep nets measured ill-conditioned under INIT get a smaller magnitude; their shallower siblings, whose
    rows match, keep INIT.  SiamRPN is given a template and a search crop (GluonCV's tracker sizes)."""
    small = ("se_resnet152_v2", "resnest101", "residualattentionnet452", "cifar_residualattentionnet92")
    assert all("magnitude=1)" in _models.init_of(n) or "magnitude=0.25)" in _models.init_of(n) for n in small)
    for name in ("se_resnet50_v1", "resnest200", "residualattentionnet56", "cifar_residualattentionnet56"):
        assert _models.init_of(name) == _models.INIT, name
    shape = _models.sizes("siamrpn_alexnet_v2_otb15", "other")[0]
    arrays = _models.inputs("siamrpn_alexnet_v2_otb15", shape)
    assert {k: v.shape for k, v in arrays.items()} == {"x": (1, 3, 127, 127), "search": (1, 3, 287, 287)}
    assert _models.mxnet_env("siamrpn_alexnet_v2_otb15") == {"MXNET_MKLDNN_ENABLED": "0"}
    assert _models.mxnet_env("resnet18_v1") == {}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["se_resnet101_v2", "cifar_residualattentionnet92", "siamrpn_alexnet_v2_otb15"])
def test_formerly_ill_conditioned_and_two_input_models_match_mxnet(name):
    """Under INIT MXNet's own output moved 3.6e-4 / 1.1e-3 of its scale for a 1e-6 input change (SiamRPN did
    not run: one input given); now MXNet is well-conditioned (< 1e-5) and ours matches it."""
    row = run_model(name, _models.family_of(name), timeout=300, timed=False)
    assert row["status"] == "match", row["cause"]
    assert row["sensitivity"] < 1e-5 and row["error"] < 1e-4


def test_table_totals_and_json(tmp_path, capsys):
    rows = [dict(model="a", family="classification", status="match", built=True, plain=True, hybrid=True,
                 error=2.5e-7, ratio=1.5, cause="", shape=[1, 3, 32, 32]),
            dict(model="b", family="nlp", status="fail", built=True, plain=False, hybrid=False, error=0.5,
                 ratio=None, cause="plain output differs | x", shape=None)]
    text = table(rows + [dict(rows[0], model="s", stand_ins=["requests"])], ["c", "d"])
    assert "| a | classification | 3x32x32 | y | y | y | 2.5e-07 | 1.50 |  |" in text
    assert "| s (s) | classification |" in text             # a row run with stand-ins is marked
    assert "| b | nlp |  | y | n | n | 5.0e-01 |  | plain output differs \\| x |" in text
    assert text.endswith("Not run (2): c, d")
    count = totals(rows + [dict(rows[1], model="e", status="ill-conditioned")], 5)
    assert [count[k] for k in ("match", "fail", "ill-conditioned", "built", "not_run")] == [1, 1, 1, 3, 2]
    assert main(["--jobs", "0"]) == 2 and "--jobs >= 1" in capsys.readouterr().err


@pytest.mark.oracle
def test_resume_keeps_rows_and_lists_the_rest_as_not_run(tmp_path, monkeypatch, capsys):
    path, md = tmp_path / "rows.json", tmp_path / "table.md"
    kept = dict(model="cifar_resnet20_v1", family="classification", status="match", built=True, plain=True,
                hybrid=True, error=1e-7, ratio=1.0, cause="", shape=[1, 3, 32, 32])
    path.write_text(json.dumps({"rows": [kept]}))
    monkeypatch.setattr(_report, "run_model", lambda *a, **k: pytest.fail("--limit 0 runs nothing"))
    assert main(["--resume", "--only", "cifar_resnet*", "--limit", "0", "--json", str(path),
                 "--markdown", str(md)]) == 0
    out = capsys.readouterr().out
    assert json.loads(path.read_text())["rows"] == [kept] and md.read_text() in out + "\n"
    assert "1 run: 1 build, 1 match" in out and "| cifar_resnet20_v1 |" in out
    assert "Not run (" in out and "cifar_resnet56_v1" in out and "cifar_resnet20_v1," not in out
    listed = int(re.match(r"(\d+) constructors listed", out).group(1))          # every model of the zoo + NLP
    assert listed > 300 and f"Not run ({listed - 1}):" in out      # --only chooses what runs, not what is shown
    # --redo runs a selected model again although it has a row; the others' rows stay
    other = dict(kept, model="mobilenet0.25")
    path.write_text(json.dumps({"rows": [kept, other]}))
    monkeypatch.setattr(_report, "run_model", lambda n, f, *a, **k: dict(kept, error=5e-7) if n == kept["model"]
                        else pytest.fail("only the selected model runs"))
    assert main(["--resume", "--redo", "--only", "cifar_resnet20_v1", "--json", str(path), "--markdown", str(md)]) == 0
    assert json.loads(path.read_text())["rows"] == [dict(kept, error=5e-7), other]


def test_near_tied_detections_may_come_in_either_order_and_nothing_else_is_hidden():
    """``_models.align_near_ties``: two rows whose reference scores are one float32 step apart, swapped in ours,
    compare equal after alignment; the same swap of rows whose scores differ clearly still counts."""
    ids = np.array([[3.0, 1.0, 2.0, 0.0]], np.float32)
    scores = np.array([[0.9, 0.4974667, 0.49746665, 0.2]], np.float32)
    boxes = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    ref = [ids, scores, boxes]
    swap = [1, 0, 2, 3]
    near = [a[:, [0, 2, 1, 3]] for a in ref]                  # the near-tied pair swapped
    assert _sides._error(near, ref) > 0.1 and _sides._error(_models.align_near_ties(near, ref), ref) == 0.0
    far = [a[:, swap] for a in ref]                           # 0.9 and 0.497 swapped: a real difference
    assert _sides._error(_models.align_near_ties(far, ref), ref) > 0.1


def test_near_tie_alignment_leaves_runs_of_identical_reference_rows_and_pairs_large_runs():
    """A run of identical reference rows (box_nms's -1 rows) compares the same in any order, so it is left as
    it is: a real row of ours among them still counts.  A run of 2000 near-tied rows, reversed in ours, is
    paired back (one vectorised distance per reference row)."""
    ref = [np.full((1, 4, 1), -1, np.float32), np.full((1, 4, 1), -1, np.float32), np.full((1, 4, 4), -1, np.float32)]
    ref[0][0, 0], ref[1][0, 0], ref[2][0, 0] = 2, 0.8, 5
    got = [a.copy() for a in ref]
    got[0][0, 2], got[1][0, 2], got[2][0, 2] = 7, -1, 9          # ours has a box where MXNet has none
    assert _sides._error(_models.align_near_ties(got, ref), ref) == _sides._error(got, ref) > 0.1
    n = 2000
    scores = (0.5 + 1e-9 * np.arange(n)[::-1]).astype(np.float32).reshape(1, n, 1)
    ref = [np.zeros((1, n, 1), np.float32), scores, np.arange(4 * n, dtype=np.float32).reshape(1, n, 4)]
    got = [a[:, ::-1].copy() for a in ref]
    assert _sides._error(got, ref) > 0.5 and _sides._error(_models.align_near_ties(got, ref), ref) == 0.0
