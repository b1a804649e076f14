"""The fresh GitHub batches, labelled in ``data/labels_github.tsv`` before any linter change for them.

Fifth fresh batch: apache/mxnet 1.9.1's ``example/``, gluon-nlp v0.10.x's ``scripts/``, gluon-cv v0.10.0's
``scripts/``.  Sixth: six repositories of Gluon model code (MXNetSeg, Single-Path-One-Shot-NAS-MXNet,
MXNet-Detector, mxnet-centernet, handwritten-text-recognition-for-apache-mxnet, Quantization.MXNet).
Seventh (issue 34): gluon-ocr, gluon-detector, Gluon-Box, gluon-faster-rcnn (and sknlp-mxnet, no finding).
Eighth (issue 34, linted after the seventh's fixes): CapsuleNet-Gluon, continuous_view_synthesis_gluon, Mxnet_Tutorial,
deeplabv3p_gluon, Gluon-FashionAI-Attributes, 3d-prostate-segmentation-mxnet, UGATIT-mxnet, sfd.gluoncv, yolov3-mxnet.
Ninth (issue 34, linted after the eighth's fixes): crnn.gluon, yolov5_mxnet, mxnet-object-detection, reconet-gluon,
match_gluon, EfficientNet-Gluon, detector_mxnet, ssd_gluon, Capsnet.Gluon, HourGlass-mxnet.
Tenth (issue 34, linted after the ninth's fixes): open-alcnet, open-acm, yolov4-gluoncv, deeplabv3-mxnet_gluon, tmnt,
transformer-ts-forecasting, Structured-Self-Attentive-Sentence-Embedding, CycleGAN-mxnet, srgan-mxnet, gluon-tacotron2,
accel-brain-code, sphereface_mxnet_gluon, sagemaker-battlesnake-ai, LoOp (and mx-detection, open-aff: no finding).
Eleventh (issue 34, linted after the tenth's fixes): gluon_mixnets, MXFusion, PointCNN.MX, RecoTour,
CycleGAN-gluon-mxnet, DPED_Gluon (and nine more with no finding and no miss).
Twelfth (issue 34, linted after the eleventh's HY017): MXNet 1.9.1's own unit tests, ``tests/python/``.
Thirteenth (issue 34, linted after the twelfth's fixes): SiameseRPN-gluon-mxnet, Train_CRAFT_mxnet,
Center_Loss_in_MXNet, beyond-part-models-gluon, progressive_gan_mxnet, DnCNN_mxnet, GaAN, STAR-GCN, coach,
vdcnn-gluonnlp, XKT, CangJie, xrec (and eight more with no finding and no miss).
Fourteenth (issue 34, linted after the thirteenth's fixes): gluon_PyramidBox, gluon_SSD, MXNet-Gluon-SyncBN,
SFnet_gluoncv, gluon_GMLoss, nerf_gluon, MXNet-LEAF, mxnet-tensorflow-pytorch-paddle, mxnet-transducer, AAAI_2019_EXAM,
EXAM_MXNet_Classifier, ILTransR (and twelve more with no finding and no miss).
Fifteenth (issue 34, linted after the fourteenth's fixes): CondConv.MXNet, DSOD-gluon-mxnet, deeplabv3plus-gluon-mxnet,
MXNet-Unet, CIFAR10_mxnet, gluon-e2e-asr (and nine more with no finding and no miss).
Sixteenth (issue 34, linted after the fifteenth's fixes): COSI137_Information_Extraction, Gluon-classifiers,
gluon_model, turicreate 5.8, einops 0.6.1 (and five more with no finding and no miss).
Seventeenth (issue 34, linted after the sixteenth's fixes): eighteen repositories, d-SNE to MPUtils (and eleven more
with no finding and no miss).
Eighteenth (issue 34, linted after the seventeenth's fixes): fmqa, learn_mxnet (and five more with no finding and no
miss).
CI cannot fetch GitHub, so nothing here lints them; these tests keep the file well formed and its
header's numbers equal to what its rows say."""

import csv
from pathlib import Path

GITHUB = Path(__file__).parent / "data" / "labels_github.tsv"
HELD_OUT = Path(__file__).parent / "data" / "labels_heldout.tsv"
#: tree -> the repository its rows come from, per batch
FIFTH = {"mxnet-example": "apache/mxnet", "gluonnlp-scripts": "dmlc/gluon-nlp", "gluoncv-scripts": "dmlc/gluon-cv"}
SIXTH = {"mxnetseg": "BebDong/MXNetSeg", "spos-nas": "CanyonWind/Single-Path-One-Shot-NAS-MXNet",
         "mxnet-detector": "DeepFocuser/MXNet-Detector", "mxnet-centernet": "Guanghan/mxnet-centernet",
         "htr-mxnet": "awslabs/handwritten-text-recognition-for-apache-mxnet",
         "quantization-mxnet": "hey-yahei/Quantization.MXNet"}
SEVENTH = {"gluon-ocr": "Davids929/gluon-ocr", "gluon-detector": "wshuail/gluon-detector",
           "gluon-box": "KunyFox/Gluon-Box", "gluon-faster-rcnn": "WalterMa/gluon-faster-rcnn"}
EIGHTH = {"capsnet": "tonysy/CapsuleNet-Gluon", "cvs": "eitan3/continuous_view_synthesis_gluon",
          "mxnet-tutorial": "JONGGON/Mxnet_Tutorial", "deeplabv3p": "duducheng/deeplabv3p_gluon",
          "fashionai": "lexuszhi1990/Gluon-FashionAI-Attributes",
          "prostate3d": "minhto2802/3d-prostate-segmentation-mxnet", "ugatit": "wkcn/UGATIT-mxnet",
          "sfd": "yangfly/sfd.gluoncv", "yolov3-mxnet": "Fermes/yolov3-mxnet"}
NINTH = {"crnngluon": "WenmuZhou/crnn.gluon", "yolov5mx": "CortexFoundation/yolov5_mxnet",
         "sparksdet": "Sparks-zs/mxnet-object-detection", "reconet": "papercatnku/reconet-gluon",
         "matchgluon": "fierceX/match_gluon", "effnet": "sufeidechabei/EfficientNet-Gluon",
         "hzdet": "hezhujun/detector_mxnet", "ssdgluon": "BingzheWu/ssd_gluon", "capsnetgl": "GarrickLin/Capsnet.Gluon",
         "hourglass": "Rainweic/HourGlass-mxnet"}
TENTH = {"openalcnet": "YimianDai/open-alcnet", "openacm": "YimianDai/open-acm", "yolov4": "Carryma11/yolov4-gluoncv",
         "deeplabv3": "MTCloudVision/deeplabv3-mxnet_gluon", "tmnt": "mitre/tmnt",
         "tsf": "Wallart/transformer-ts-forecasting", "ssase": "vanewu/Structured-Self-Attentive-Sentence-Embedding",
         "cyclegan": "tc-qaq/CycleGAN-mxnet", "srgan": "nuppt/srgan-mxnet", "taco": "Wallart/gluon-tacotron2",
         "accelbrain": "accel-brain/accel-brain-code", "sphereface": "Johnson-yue/sphereface_mxnet_gluon",
         "battlesnake": "awslabs/sagemaker-battlesnake-ai", "loop": "puneesh00/LoOp"}
ELEVENTH = {"mixnets": "justinshaohi/gluon_mixnets", "mxfusion": "amzn/MXFusion", "pointcnn": "chinakook/PointCNN.MX",
            "recotour": "jrzaurin/RecoTour", "cyclegan-leocvml": "leocvml/CycleGAN-gluon-mxnet",
            "dped": "pribadihcr/DPED_Gluon"}
TWELFTH = {"mxnet-tests": "apache/mxnet"}
THIRTEENTH = {"siamrpn-leocvml": "leocvml/SiameseRPN-gluon-mxnet", "craft-senfan": "senFanGitHub/Train_CRAFT_mxnet",
              "centerloss-wangx404": "wangx404/Center_Loss_in_MXNet", "pcb-rpp": "Tyhye/beyond-part-models-gluon",
              "pgan-crazyleg": "crazyleg/progressive_gan_mxnet", "dncnn-zr111": "ZR111/DnCNN_mxnet",
              "gaan-graph": "jennyzhang0215/GaAN", "stargcn-rec": "jennyzhang0215/STAR-GCN",
              "coach-rl": "IntelLabs/coach",
              "vdcnn-text": "opringle/vdcnn-gluonnlp", "xkt-kt": "tswsxk/XKT", "cangjie-ctc": "tswsxk/CangJie",
              "xrec-mf": "tswsxk/xrec"}
FOURTEENTH = {"pyramidbox-gl": "JJXiangJiaoJun/gluon_PyramidBox", "ssd-mowayao": "mowayao/gluon_SSD",
              "syncbn-stacy": "StacyYang/MXNet-Gluon-SyncBN", "sfnet-aktcob": "Aktcob/SFnet_gluoncv",
              "gmloss-yyj": "yuyijie1995/gluon_GMLoss", "nerf-gl": "Tubbz-alt/nerf_gluon",
              "leaf-fl": "FelixWho/MXNet-LEAF",
              "mxtfpt-h2014": "hadoop2014/mxnet-tensorflow-pytorch-paddle", "rnnt-mx": "HawkAaron/mxnet-transducer",
              "exam-aaai19": "NonvolatileMemory/AAAI_2019_EXAM", "exam-jp": "jeremypoulain/EXAM_MXNet_Classifier",
              "iltransr": "GuzhongChen/ILTransR"}
FIFTEENTH = {"condconv": "hey-yahei/CondConv.MXNet", "dsod-leocvml": "leocvml/DSOD-gluon-mxnet",
             "deeplabv3p-leocvml": "leocvml/deeplabv3plus-gluon-mxnet", "unet-zhouge": "zhougekaibenchi/MXNet-Unet",
             "cifar10-yl": "yinglang/CIFAR10_mxnet", "e2easr-gl": "Hex-Lee/gluon-e2e-asr"}
SIXTEENTH = {"cosi137-ie": "xwanyue0221/COSI137_Information_Extraction",
             "gluon-classifiers-drv": "drubiovallejo/Gluon-classifiers", "dcn-kaihao": "KaihaoBai/gluon_model",
             "turicreate": "apple/turicreate", "einops-gl": "arogozhnikov/einops"}
SEVENTEENTH = {"dsne-gl": "ShownX/d-SNE", "e2far-gl": "ShownX/mxnet-E2FAR",
               "rfn-gl": "TobiasSkovgaardJepsen/relational-fusion-networks", "gcn-tsj": "TobiasSkovgaardJepsen/gcn",
               "adaptis-gl": "saic-vul/adaptis", "crazyara-gl": "QueensGambit/CrazyAra",
               "cmpsenet-gl": "scut-aitcm/CompetitiveSENet", "gluonreid-sqlai": "xiaolai-sqlai/gluon-reid",
               "psenet-saicoco": "saicoco/Gluon-PSENet", "rangeloss-lj30": "LeeJuly30/RangeLoss-For-Gluno",
               "lgmloss-lj30": "LeeJuly30/L-GM-Loss-For-Gluon", "yolo-mashimaro": "MashiMaroLjc/YOLO",
               "maskflownet": "microsoft/MaskFlownet", "flownext": "ldf921/flownext",
               "clstpl": "whyguu/classification-template", "pix2pix-uf": "ufownl/pix2pix_gan",
               "faceid-bl": "BobLiu20/FaceRecognition_MXNet", "mputils": "yinglang/MPUtils"}
EIGHTEENTH = {"fmqa-gl": "tsudalab/fmqa", "matafight-learn": "Matafight/learn_mxnet"}
EARLIER = ("gluoncv2", "sockeye", "gluonfr", "autogluon", "deeprenewal", "xfer", "cnstd")
RULES = {f"HY{n:03d}" for n in range(1, 21)}


def _rows(path):
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def test_rows_are_well_formed():
    rows = _rows(GITHUB)
    assert rows
    repos = {**FIFTH, **SIXTH, **SEVENTH, **EIGHTH, **NINTH, **TENTH, **ELEVENTH, **TWELFTH, **THIRTEENTH, **FOURTEENTH,
             **FIFTEENTH, **SIXTEENTH, **SEVENTEENTH, **EIGHTEENTH}
    for r in rows:
        assert None not in r and all(v is not None for v in r.values()), r
        assert r["tree"] in repos
        assert r["source"].split("@")[0] == repos[r["tree"]]
        assert int(r["line"]) > 0 and int(r["col"]) > 0
        # `none`: a real defect no rule covered when it was found (the tenth batch's "no rule" misses)
        assert r["code"] in RULES or (r["code"] == "none" and r["before"] == "missed")
        assert set(r["targets"].split(",")) <= {"jax", "mxnet"}
        assert r["label"] in ("true", "false") and r["before"] in ("found", "missed", "later", "rule")
        assert r["reason"].strip()
        assert r["before"] == "found" or r["label"] == "true"
        assert r["file"].endswith(".py")
    # each tree comes from one source, every tree has rows
    assert len({(r["tree"], r["source"]) for r in rows}) == len({r["tree"] for r in rows}) == len(repos)


def _counts(rows):
    found = [r for r in rows if r["before"] == "found"]
    true = sum(r["label"] == "true" for r in found)
    return found, true, [r for r in rows if r["before"] == "missed"]


def test_fifth_batch_header_counts_are_the_rows():
    rows = [r for r in _rows(GITHUB) if r["tree"] in FIFTH]
    header = GITHUB.read_text()
    found, true, missed = _counts(rows)
    assert f"{len(found)} findings, {true} true, {len(found) - true} false" in header
    assert f"precision {100 * true / len(found):.1f}% before any change" in header
    for tree in FIFTH:
        t = [r for r in found if r["tree"] == tree]
        assert f"{tree} {sum(r['label'] == 'true' for r in t)}/{len(t)}" in header
    assert f"Missed (read in every hybrid_forward): {len(missed)}," in header
    # after the fixes: every true finding still found, 5 of the misses found, one false one left
    assert f"{true + 5 + 1} findings, {true + 5} true: the {true} true ones, and of the {len(missed)} misses: " \
        f"5 found after, {len(missed) - 5} still missed" in header
    # after issue 34's tensor-evidence rule: every miss, and the later ones the reading had missed too
    later = [r for r in rows if r["before"] == "later"]
    n = true + len(missed) + len(later)
    text = " ".join(ln.lstrip("# ") for ln in header.splitlines() if ln.startswith("#"))
    assert (f"{n + 1} findings, {n} true: the {true} true ones, all {len(missed)} misses, the {len(later)} "
            "later ones, and the one false one left") in text


def _batch_header(name: str, trees: dict):
    """The batch's rows' counts as its header states them: ``(found, true, missed, header)``."""
    rows = [r for r in _rows(GITHUB) if r["tree"] in trees]
    header = " ".join(ln.lstrip("# ") for ln in GITHUB.read_text().splitlines() if ln.startswith("#"))
    found, true, missed = _counts(rows)
    assert (f"{name} batch: {len(found)} findings, {true} true, {len(found) - true} false: "
            f"precision {100 * true / len(found):.1f}% before any change") in header
    for tree in trees:
        t = [r for r in found if r["tree"] == tree]
        assert f"{tree} {sum(r['label'] == 'true' for r in t)}/{len(t)}" in header
    assert f"{name} batch missed (read in every hybrid_forward): {len(missed)}," in header
    return found, true, missed, header


def test_sixth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Sixth", SIXTH)
    # after its fixes: every true finding still found, and every miss
    n = true + len(missed)
    assert f"{n} findings, {n} true: the {true} true ones and all {len(missed)} misses" in header


def test_seventh_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Seventh", SEVENTH)
    # after its fixes: every true finding still found, and all misses but the helper passed as a value
    n = true + len(missed) - 1
    assert f"{n} findings, {n} true: the {true} true ones and {len(missed) - 1} of the {len(missed)} misses" in header


def test_eighth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Eighth", EIGHTH)
    assert not [r for r in found if r["tree"] == "yolov3-mxnet"]
    assert sum(r["tree"] == "cvs" for r in missed) == 32 and sum(r["tree"] == "yolov3-mxnet" for r in missed) == 2


def test_ninth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Ninth", NINTH)
    # after its fixes: every true finding, and one of the two misses
    n = true + 1
    assert f"{n} findings, {n} true: the {true} true ones and 1 of the {len(missed)} misses" in header


def test_tenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Tenth", TENTH)
    # after its fixes: every true finding, and the 4 positional reshapes of gluon-tacotron2 (HY016)
    assert [r for r in missed if r["code"] == "HY016" and r["tree"] == "taco"] and \
        f"{true + 4} findings, {true + 4} true: the {true} true ones and 4 of the {len(missed)} misses" in header
    assert f"No rule (`none`), {sum(r['code'] == 'none' for r in missed)}:" in header


def test_eleventh_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Eleventh", ELEVENTH)
    assert true == len(found)
    assert f"with no\n# rule (`none`), {sum(r['code'] == 'none' for r in missed)}:" in GITHUB.read_text()


def test_twelfth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Twelfth", TWELFTH)
    # after its fixes: every true finding still found, 5 false left
    assert f"{true + 5} findings, {true} true: the {true} true ones; the 5 false left" in header


def test_thirteenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Thirteenth", THIRTEENTH)
    assert f"with no rule (`none`), {sum(r['code'] == 'none' for r in missed)}:" in header
    # after its fixes: every true finding, craft's three imported nd operators, one false left
    assert sum(r["tree"] == "craft-senfan" for r in missed) == 3
    assert f"{true + 3 + 1} findings, {true + 3} true: the {true} true ones and 3 of the {len(missed)} misses" in header


def test_fourteenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Fourteenth", FOURTEENTH)
    assert f"with no rule (`none`), {sum(r['code'] == 'none' for r in missed)}:" in header
    assert sum(r["code"] == "HY017" for r in missed) == 17
    # after its fixes: every true finding, the unknown operator's unpacking gone, 4 false left
    assert f"{len(found) - 1} findings, {true} true: the {true} true ones; the 4" in header


def test_fifteenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Fifteenth", FIFTEENTH)
    assert true == len(found)
    # the last three batches, each linted after the one before's fixes
    trees = {**THIRTEENTH, **FOURTEENTH, **FIFTEENTH}
    assert _last_three(trees) in header
    # after its fixes: every true finding, and condconv's two positional reshapes
    assert f"{true + 2} findings, {true + 2} true: the {true} true ones and 2 of the {len(missed)} misses" in header


def test_sixteenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Sixteenth", SIXTEENTH)
    assert f"with no rule (`none`), {sum(r['code'] == 'none' for r in missed)}:" in header
    # after its fixes: every true finding, no false one, and three misses (two `.T`, `mx.np.einsum`)
    assert f"{true + 3} findings, {true + 3} true: the {true} true ones and 3 of the {len(missed)} misses" in header
    trees = {**FOURTEENTH, **FIFTEENTH, **SIXTEENTH}
    assert _last_three(trees) in header


def test_seventeenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Seventeenth", SEVENTEENTH)
    assert f"with no rule (`none`), {sum(r['code'] == 'none' for r in missed)}:" in header
    assert sum(r["code"] == "HY017" for r in missed) == 20
    # after its fixes: every true finding, 2 false left
    assert f"{true + 2} findings, {true} true: the {true} true ones; the 2 false left" in header
    trees = {**FIFTEENTH, **SIXTEENTH, **SEVENTEENTH}
    assert _last_three(trees) in header


def test_eighteenth_batch_header_counts_are_the_rows():
    found, true, missed, header = _batch_header("Eighteenth", EIGHTEENTH)
    assert true == len(found) and all(r["code"] == "HY017" for r in missed)
    trees = {**SIXTEENTH, **SEVENTEENTH, **EIGHTEENTH}
    assert _last_three(trees) in header


def _last_three(trees):
    """``(good of found, percent)`` over the last three batches' found rows, as their headers state it."""
    last = [r for r in _rows(GITHUB) if r["tree"] in trees and r["before"] == "found"]
    good = sum(r["label"] == "true" for r in last)
    return f"({good} of {len(last)}, {100 * good / len(last):.1f}%)"


def _fresh_before(trees):
    earlier = [r for r in _rows(HELD_OUT) if r["tree"] in EARLIER and r["before"] == "found"]
    rows = earlier + [r for r in _rows(GITHUB) if r["before"] == "found" and r["tree"] in trees]
    true = sum(r["label"] == "true" for r in rows)
    return f"{len(rows)} findings, {true} true ({100 * true / len(rows):.1f}%)"


def test_fresh_before_over_all_batches():
    text = GITHUB.read_text()
    assert f"all five batches: {_fresh_before(FIFTH)}" in text
    assert f"all six batches: {_fresh_before({**FIFTH, **SIXTH})}" in text
    assert f"all seven batches: {_fresh_before({**FIFTH, **SIXTH, **SEVENTH})}" in text
    assert f"all eight batches: {_fresh_before({**FIFTH, **SIXTH, **SEVENTH, **EIGHTH})}" in text
    assert f"all nine batches: {_fresh_before({**FIFTH, **SIXTH, **SEVENTH, **EIGHTH, **NINTH})}" in text
    assert f"all ten batches: {_fresh_before({**FIFTH, **SIXTH, **SEVENTH, **EIGHTH, **NINTH, **TENTH})}" in text
    every = {**FIFTH, **SIXTH, **SEVENTH, **EIGHTH, **NINTH, **TENTH, **ELEVENTH}
    assert f"all eleven batches: {_fresh_before(every)}" in text
    assert f"all twelve batches: {_fresh_before({**every, **TWELFTH})}" in text
    assert f"all thirteen batches: {_fresh_before({**every, **TWELFTH, **THIRTEENTH})}" in text
    assert f"all fourteen batches: {_fresh_before({**every, **TWELFTH, **THIRTEENTH, **FOURTEENTH})}" in text
    latest = {**every, **TWELFTH, **THIRTEENTH, **FOURTEENTH, **FIFTEENTH}
    joined = " ".join(ln.lstrip("# ") for ln in text.splitlines())
    assert f"all fifteen batches: {_fresh_before(latest)}" in joined
    assert f"all sixteen batches: {_fresh_before({**latest, **SIXTEENTH})}" in joined
    assert f"all seventeen batches: {_fresh_before({**latest, **SIXTEENTH, **SEVENTEENTH})}" in joined
    assert f"all eighteen batches: {_fresh_before({**latest, **SIXTEENTH, **SEVENTEENTH, **EIGHTEENTH})}" in joined
