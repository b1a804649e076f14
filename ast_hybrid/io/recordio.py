"""``mxnet.recordio``: MXNet's RecordIO files, read and written in Python, byte for byte as MXNet 1.9.1's
(dmlc-core's) writer lays them out (``tests/mxnet/test_recordio.py`` reads MXNet's files and MXNet reads ours).

The format: each record is a little-endian ``uint32`` magic ``0xced7230a``, a ``uint32`` whose top 3 bits are a
continuation flag and low 29 bits a length, the bytes, and zero padding to 4 bytes.  A record whose bytes hold
the magic at a 4-byte-aligned offset is cut there into parts (flag 1 first, 2 middle, 3 last; 0 for a whole
record), the magic itself not stored; the reader puts it back between the parts.  An index file
(``MXIndexedRecordIO``) has one ``key\\tbyte offset`` line per record.

``pack``/``unpack`` add/strip MXNet's image-record header (``IRHeader``: ``struct 'IfQQ'``, then ``flag``
float32 labels when ``flag > 0``).  ``pack_img``/``unpack_img`` encode/decode the image with Pillow where MXNet
uses OpenCV (``img`` in OpenCV's BGR order, as MXNet's); without Pillow they raise ``ImportError`` saying so.
"""

from __future__ import annotations

import numbers
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np


__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LENGTH_BITS = 29


def _lrec(cflag, length):
    return struct.pack("<II", _MAGIC, (cflag << _LENGTH_BITS) | length)


def _encode(buf: bytes) -> bytes:
    """``buf`` as one record on disk (parts where it holds the magic at an aligned offset, then padding)."""
    if len(buf) >= 1 << _LENGTH_BITS:
        raise ValueError(f"RecordIO: a record of {len(buf)} bytes is too large (the format allows < 2**29)")
    pieces, start = [], 0
    for i in range(0, len(buf) - len(buf) % 4, 4):
        if buf[i:i + 4] == _MAGIC_BYTES:
            pieces += [_lrec(1 if start == 0 else 2, i - start), buf[start:i]]
            start = i + 4
    pieces += [_lrec(3 if start else 0, len(buf) - start), buf[start:], b"\0" * (-len(buf) % 4)]
    return b"".join(pieces)


def _read_record(f, where: str):
    """The next record of the open file ``f`` (None at its end)."""
    parts = []
    while True:
        head = f.read(8)
        if not head and not parts:
            return None
        if len(head) != 8:
            raise ValueError(f"{where}: invalid RecordIO file (a record header is cut short)")
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise ValueError(f"{where}: invalid RecordIO file (no record magic at byte {f.tell() - 8})")
        cflag, length = lrec >> _LENGTH_BITS, lrec & ((1 << _LENGTH_BITS) - 1)
        data = f.read(length + (-length % 4))
        if len(data) < length:
            raise ValueError(f"{where}: invalid RecordIO file (a record is cut short)")
        parts.append(data[:length])
        if cflag in (0, 3):
            return _MAGIC_BYTES.join(parts)


class MXRecordIO:
    """Sequential RecordIO reader (``flag='r'``) or writer (``'w'``, which truncates the file), as MXNet's."""

    def __init__(self, uri, flag):
        self.uri = uri.decode("utf-8") if isinstance(uri, bytes) else str(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self._file = None
        self.open()

    def open(self):
        """Open the file (again: reading starts over, writing truncates)."""
        if self.flag == "w":
            self._file, self.writable = open(self.uri, "wb"), True
        elif self.flag == "r":
            self._file, self.writable = open(self.uri, "rb"), False
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d["is_open"], d["_file"] = is_open, None
        return d

    def __setstate__(self, d):
        is_open = d["is_open"]
        self.__dict__ = d
        self.is_open = False
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        if self.pid != current_process().pid:
            if not allow_reset:
                raise RuntimeError("Forbidden operation in multiple processes")
            self.reset()

    def close(self):
        """Close the file (a no-op if closed)."""
        if not getattr(self, "is_open", False):
            return
        self._file.close()
        self.is_open = False
        self.pid = None

    def reset(self):
        """Back to the first record (a writer truncates the file)."""
        self.close()
        self.open()

    def write(self, buf):
        """Append ``buf`` (bytes) as one record."""
        assert self.writable
        self._check_pid(allow_reset=False)
        self._file.write(_encode(bytes(buf)))

    def read(self):
        """The next record as bytes, or None after the last."""
        assert not self.writable
        self._check_pid(allow_reset=False)
        return _read_record(self._file, self.uri)


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with an index file (``key\\toffset`` lines) for random access by key, as MXNet's."""

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx, self.keys = {}, []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx, self.keys = {}, []
        self.fidx = open(self.idx_path, self.flag)
        if not self.writable:
            for line in iter(self.fidx.readline, ""):
                line = line.strip().split("\t")
                key = self.key_type(line[0])
                self.idx[key] = int(line[1])
                self.keys.append(key)

    def close(self):
        if not getattr(self, "is_open", False):
            return
        super().close()
        self.fidx.close()

    def __getstate__(self):
        d = super().__getstate__()
        d["fidx"] = None
        return d

    def seek(self, idx):
        """Put the reader at the record of key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        self._file.seek(self.idx[idx])

    def tell(self):
        """The writer's byte offset (where the next record goes)."""
        assert self.writable
        return self._file.tell()

    def read_idx(self, idx):
        """The record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append ``buf`` as the record of key ``idx`` (and its index line)."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """``s`` (bytes) with MXNet's image-record header in front; an array label is stored after the header
    (``flag`` = its size, the header's label 0), a number in the header (``flag`` 0)."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s):
    """``(IRHeader, payload bytes)`` of a packed record (an array label as float32 when ``flag > 0``)."""
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _pillow(api):
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"{api} encodes/decodes images with Pillow in ast-hybrid (MXNet uses OpenCV): "
                          "pip install 'ast-hybrid[image]' (or pip install pillow)") from e
    return Image


def unpack_img(s, iscolor=-1):
    """``(IRHeader, numpy uint8 image)``: decoded as OpenCV's ``imdecode(buf, iscolor)`` gives it, in BGR
    order (``iscolor`` 1: 3 channels, 0: grey (H, W), -1: as stored)."""
    import io

    header, s = unpack(s)
    image = _pillow("mxnet.recordio.unpack_img")
    with image.open(io.BytesIO(s)) as im:
        if iscolor == 0:
            return header, np.asarray(im.convert("L"))
        if iscolor > 0 or im.mode not in ("L", "RGBA", "I;16", "I"):
            arr = np.asarray(im.convert("RGB"))
        else:
            arr = np.asarray(im)
    if arr.ndim == 3:
        arr = arr[:, :, [2, 1, 0, 3][:arr.shape[2]]]       # RGB(A) -> OpenCV's BGR(A)
    return header, np.ascontiguousarray(arr)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """``pack(header, <img encoded as img_fmt>)``; ``img`` a uint8 array in OpenCV's BGR order (or grey),
    ``quality`` the JPEG quality (for PNG, the compression level, at most 9)."""
    import io

    image = _pillow("mxnet.recordio.pack_img")
    fmt = img_fmt.upper().lstrip(".")
    img = np.asarray(img)
    if img.ndim == 3 and img.shape[2] in (3, 4):
        img = img[:, :, [2, 1, 0, 3][:img.shape[2]]]       # OpenCV's BGR(A) -> RGB(A)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    buf = io.BytesIO()
    pil = image.fromarray(np.ascontiguousarray(img))
    if fmt in ("JPG", "JPEG"):
        pil.save(buf, format="JPEG", quality=int(quality))
    elif fmt == "PNG":
        pil.save(buf, format="PNG", compress_level=min(int(quality), 9))
    else:
        pil.save(buf, format=fmt)
    return pack(header, buf.getvalue())
