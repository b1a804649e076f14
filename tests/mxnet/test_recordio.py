"""``mxnet.recordio`` against MXNet 1.9.1: files MXNet writes are read identically here and the files written
here are byte-for-byte MXNet's, which MXNet reads back; ``pack``/``unpack`` give MXNet's bytes."""

from __future__ import annotations

import pickle
import struct

import numpy as np
import pytest

MAGIC = struct.pack("<I", 0xCED7230A)
# odd lengths, empty, the magic at aligned offsets (split into parts by the writer), at unaligned ones (not)
RECORDS = [b"record_0", b"", b"abc", MAGIC, b"xy" + MAGIC + b"zz", MAGIC + b"1234" + MAGIC + MAGIC + b"t",
           b"12" + MAGIC + b"34", bytes(range(256)) * 3 + MAGIC, b"z" * 4097]


def _write_in_mxnet(oracle, rec, idx, keys):
    oracle.run(f"import mxnet.recordio as r\nw = r.MXIndexedRecordIO({str(idx)!r}, {str(rec)!r}, 'w')\n"
               f"for k, b in zip({keys!r}, {RECORDS!r}):\n    w.write_idx(k, b)\nw.close()\n")


@pytest.mark.oracle
def test_files_mxnet_writes_are_read_the_same_and_written_the_same(oracle, mx, tmp_path):
    keys = [5, 3, 9, 0, 1, 2, 7, 8, 4]
    _write_in_mxnet(oracle, tmp_path / "m.rec", tmp_path / "m.idx", keys)
    from mxnet import recordio

    seq = recordio.MXRecordIO(str(tmp_path / "m.rec"), "r")
    assert [seq.read() for _ in RECORDS] == RECORDS and seq.read() is None
    seq.reset()
    assert seq.read() == RECORDS[0]
    seq.close()
    indexed = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert indexed.keys == keys
    assert [indexed.read_idx(k) for k in reversed(keys)] == RECORDS[::-1]
    indexed.close()

    ours = recordio.MXIndexedRecordIO(str(tmp_path / "o.idx"), str(tmp_path / "o.rec"), "w")
    positions = []
    for k, b in zip(keys, RECORDS):
        positions.append(ours.tell())
        ours.write_idx(k, b)
    ours.close()
    assert (tmp_path / "o.rec").read_bytes() == (tmp_path / "m.rec").read_bytes()
    assert (tmp_path / "o.idx").read_text() == (tmp_path / "m.idx").read_text()
    assert positions[:2] == [0, 16] and (tmp_path / "o.rec").stat().st_size % 4 == 0


@pytest.mark.oracle
def test_mxnet_reads_the_files_written_here(oracle, mx, tmp_path):
    from mxnet import recordio

    w = recordio.MXIndexedRecordIO(str(tmp_path / "o.idx"), str(tmp_path / "o.rec"), "w")
    for k, b in enumerate(RECORDS):
        w.write_idx(k, b)
    w.close()
    got = oracle.run(f"import mxnet.recordio as r\nx = r.MXIndexedRecordIO({str(tmp_path / 'o.idx')!r}, "
                     f"{str(tmp_path / 'o.rec')!r}, 'r')\n"
                     "meta['recs'] = [x.read_idx(k).hex() for k in reversed(x.keys)]\n"
                     "s = r.MXRecordIO(" + repr(str(tmp_path / "o.rec")) + ", 'r')\n"
                     "meta['seq'] = [s.read().hex() for _ in x.keys]\nmeta['end'] = s.read() is None\n")["meta"]
    assert got["recs"] == [b.hex() for b in RECORDS[::-1]]
    assert got["seq"] == [b.hex() for b in RECORDS] and got["end"]


@pytest.mark.oracle
@pytest.mark.parametrize("header", ["(0, 3.5, 17, 0)", "(9, [1.0, 2.5, -3.0], 2**40, 1)", "(0, np.arange(6), 1, 2)"])
def test_pack_and_unpack_give_mxnets_bytes(oracle, mx, header):
    got = oracle.run(f"import mxnet.recordio as r\nh = r.IRHeader(*{header})\np = r.pack(h, b'payload')\n"
                     "meta['p'] = p.hex()\nu, s = r.unpack(p)\n"
                     "meta['u'] = [u.flag, np.asarray(u.label).tolist(), u.id, u.id2, s.hex()]\n")["meta"]
    from mxnet import recordio

    packed = recordio.pack(recordio.IRHeader(*eval(header, {"np": np})), b"payload")
    assert packed.hex() == got["p"]
    u, s = recordio.unpack(packed)
    assert [u.flag, np.asarray(u.label).tolist(), u.id, u.id2, s.hex()] == got["u"]


@pytest.mark.oracle
def test_pack_img_is_decoded_by_mxnet_to_the_same_pixels(oracle, mx, tmp_path):
    from mxnet import recordio

    bgr = np.random.RandomState(0).randint(0, 256, (5, 7, 3)).astype(np.uint8)
    packed = recordio.pack_img(recordio.IRHeader(0, 2.0, 3, 0), bgr, quality=3, img_fmt=".png")
    (tmp_path / "img.bin").write_bytes(packed)
    got = oracle.run(f"import mxnet.recordio as r\nh, s = r.unpack(open({str(tmp_path / 'img.bin')!r}, 'rb')"
                     ".read())\nout['rgb'] = mx.image.imdecode(s).asnumpy()\nmeta['label'] = float(h.label)\n")
    np.testing.assert_array_equal(got["rgb"], bgr[:, :, ::-1])       # MXNet's imdecode gives RGB
    header, back = recordio.unpack_img(packed)
    np.testing.assert_array_equal(back, bgr)                         # unpack_img gives OpenCV's BGR
    assert header.label == got["meta"]["label"] == 2.0
    assert recordio.unpack_img(packed, 0)[1].shape == (5, 7)


def test_a_reader_pickles_and_reopens(mx, tmp_path):
    from mxnet import recordio

    w = recordio.MXRecordIO(str(tmp_path / "a.rec"), "w")
    w.write(b"one")
    w.close()
    r = pickle.loads(pickle.dumps(recordio.MXRecordIO(str(tmp_path / "a.rec"), "r")))
    assert r.read() == b"one" and r.read() is None
    with pytest.raises(ValueError, match="Invalid flag x"):
        recordio.MXRecordIO(str(tmp_path / "a.rec"), "x")
    (tmp_path / "bad.rec").write_bytes(b"\0" * 12)
    with pytest.raises(ValueError, match="invalid RecordIO file"):
        recordio.MXRecordIO(str(tmp_path / "bad.rec"), "r").read()


def _png(rgb):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.oracle
def test_image_record_dataset_reads_a_record_file_as_mxnet(both, tmp_path):
    """Each side packs the same PNG images with number and array labels into a record file (the files are
    byte-for-byte equal: test_files_mxnet_writes_...) and reads it with ImageRecordDataset (plain, grey, with a
    transform): the same images and labels (grey within 1: OpenCV's and Pillow's luma rounding)."""
    rng = np.random.RandomState(1)
    images = [rng.randint(0, 256, (4 + i, 6, 3)).astype(np.uint8) for i in range(3)]
    pngs = {f"p{i}": np.frombuffer(_png(im), np.uint8) for i, im in enumerate(images)}
    rec, idx = str(tmp_path / "i.rec"), str(tmp_path / "i.idx")
    both(f"import mxnet.recordio as r\nw = r.MXIndexedRecordIO({idx!r}, {rec!r}, 'w')\n"
         "for i in range(3):\n"
         "    label = float(i) if i != 1 else [1.5, 2.5, -1.0]\n"
         "    w.write_idx(i, r.pack(r.IRHeader(0, label, i, 0), inp['p%d' % i].tobytes()))\n"
         "w.close()\n"
         f"ds = gluon.data.vision.ImageRecordDataset({rec!r})\n"
         f"grey = gluon.data.vision.ImageRecordDataset({rec!r}, flag=0)\n"
         f"tr = gluon.data.vision.ImageRecordDataset({rec!r}, transform=lambda x, y: (x.astype('float32') / 2, y))\n"
         "meta['n'] = len(ds)\n"
         "for i in range(3):\n"
         "    out['im%d' % i], out['lab%d' % i] = ds[i][0], np.asarray(ds[i][1], np.float32)\n"
         "    out['grey%d' % i], out['half%d' % i] = grey[i][0], tr[i][0]\n", rtol=0, atol=1, **pngs)
