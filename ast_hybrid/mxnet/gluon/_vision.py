"""``mxnet.gluon.data.vision.ImageRecordDataset``: the images of a RecordIO file, as MXNet 1.9.1's.

It lives in the compatibility package (it decodes through ``mxnet.recordio`` and ``mxnet.image``) and is put
on ``ast_hybrid.gluon.data.vision`` (and its ``datasets``) by ``ast_hybrid.mxnet.gluon``, where MXNet has it.
"""

from __future__ import annotations

from ast_hybrid.gluon.data.dataset import RecordFileDataset

__all__ = ["ImageRecordDataset"]


class ImageRecordDataset(RecordFileDataset):
    """``name.rec`` (with ``name.idx``) of records ``recordio.pack``/``pack_img`` made: each sample is
    ``(image.imdecode(payload, flag), header.label)``, through ``transform(image, label)`` if given."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        from ast_hybrid.io import recordio
        from ast_hybrid.image.image import imdecode

        header, img = recordio.unpack(super().__getitem__(idx))
        if self._transform is not None:
            return self._transform(imdecode(img, self._flag), header.label)
        return imdecode(img, self._flag), header.label
