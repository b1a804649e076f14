"""GluonCV 0.10.5's data pipeline, unmodified, through ``import mxnet`` = ast-hybrid, against MXNet 1.9.1 running
the same GluonCV files: its transform presets (``mx.image.imresize(interp=9)``, ``mx.nd.image.to_tensor`` /
``normalize``), its image helpers, ``RecordFileDetection`` (a subclass of ``ImageRecordDataset``) and
``RandomTransformDataLoader`` (a subclass of ``DataLoader``, ``num_workers=0``)."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytestmark = pytest.mark.oracle

R = np.random.RandomState(9)
INPUTS = {"img": R.randint(0, 256, (40, 56, 3)).astype(np.uint8),
          "bbox": np.array([[3, 4, 30, 33, 1], [10, 2, 50, 38, 0]], np.float32)}


@pytest.fixture
def gcv(both, folder, mx):
    """``both`` with GluonCV importable on each side (ours through the compatibility package)."""
    from ast_hybrid.conformance._import import import_package

    import_package("gluoncv", folder)

    def run(code, **kw):
        return both(f"import sys\nif {str(folder)!r} not in sys.path:\n    sys.path.append({str(folder)!r})\n"
                    "import gluoncv\nfrom gluoncv.data.transforms import presets, image as timage\n" + code, **kw)

    return run


@pytest.mark.parametrize("call", [
    "presets.ssd.SSDDefaultValTransform(64, 48)(x, inp['bbox'])",       # enlarges: bicubic
    "presets.ssd.SSDDefaultValTransform(20, 16)(x, inp['bbox'])",       # shrinks: area
    "presets.ssd.SSDDefaultValTransform(28, 20)(x, inp['bbox'])",       # shrinks by 2: area's fast path
    "presets.yolo.YOLO3DefaultValTransform(30, 60)(x, inp['bbox'])",    # one side each way: bilinear
    "presets.rcnn.FasterRCNNDefaultValTransform(short=24, max_size=64)(x, inp['bbox'])",
    "[timage.resize_short_within(x, 30, 50), timage.resize_long(x, 20), timage.imresize(x, 9, 7)]",
    "presets.ssd.transform_test(x, short=32)[:2]",
    "presets.imagenet.transform_eval(x, resize_short=36, crop_size=32)",
])
def test_gluoncv_transforms_give_mxnets_arrays(gcv, call):
    gcv(f"x = nd.array(inp['img'], dtype='uint8')\nres = {call}\n"
        "res = list(res) if isinstance(res, (list, tuple)) else [res]\n"
        "for i, r in enumerate(res):\n    out['r%d' % i] = r\n", rtol=1e-5, atol=1e-5, **INPUTS)


def test_record_file_detection_and_random_transform_loader(gcv, tmp_path):
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(INPUTS["img"]).save(buf, format="PNG")
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    gcv("import mxnet.recordio as r\nw = r.MXIndexedRecordIO(" + repr(idx) + ", " + repr(rec) + ", 'w')\n"
        "for i in range(3):\n"
        "    label = [2, 5, i, 0.1, 0.2, 0.5 + 0.1 * i, 0.9]\n"     # header 2, width 5: id, xmin, ymin, xmax, ymax
        "    w.write_idx(i, r.pack(r.IRHeader(0, label, i, 0), inp['png'].tobytes()))\n"
        "w.close()\n"
        "ds = gluoncv.data.RecordFileDetection(" + repr(rec) + ")\nmeta['n'] = len(ds)\n"
        "for i in range(3):\n    out['img%d' % i], out['lab%d' % i] = ds[i][0], ds[i][1]\n"
        "t = [presets.ssd.SSDDefaultValTransform(24, 24)]\n"
        "np.random.seed(0)\n"
        "bf = gluoncv.data.batchify\n"
        "loader = gluoncv.data.RandomTransformDataLoader(t, ds, batch_size=2, last_batch='keep',\n"
        "    batchify_fn=bf.Tuple(bf.Stack(), bf.Pad(pad_val=-1)))\n"
        "for i, (a, b) in enumerate(loader):\n    out['a%d' % i], out['b%d' % i] = a, b\n",
        rtol=1e-5, atol=1e-5, png=np.frombuffer(buf.getvalue(), np.uint8))


@pytest.mark.parametrize("transform", ["presets.ssd.SSDDefaultTrainTransform(48, 40)",
                                       "presets.yolo.YOLO3DefaultTrainTransform(40, 48)"])
def test_gluoncv_train_transforms_draw_and_compute_as_mxnet(gcv, transform):
    """The SSD and YOLOv3 training augmentation (colour distortion, random expand, constrained crop, resizing with
    a random one of the 5 interpolations, flip, normalisation) over 8 draws from the same seeds: the same images
    and boxes (every draw is numpy's or Python's, seeded alike on both sides)."""
    gcv(f"import random\nrandom.seed(5)\nnp.random.seed(5)\nt = {transform}\n"
        "for i in range(8):\n"
        "    img, box = t(nd.array(inp['img'], dtype='uint8'), inp['bbox'])\n"
        "    out['img%d' % i], out['box%d' % i] = img, box\n", rtol=1e-4, atol=1e-4, **INPUTS)
