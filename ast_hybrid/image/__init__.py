"""MXNet's image helpers: ``mx.image`` (decoding, resizing, cropping, augmenters, ``ImageIter``: ``image.py``;
the detection iterator's names: ``detection.py``) and ``mx.nd.image``'s operators (``nd_image.py``).

``mxnet.image`` and ``mxnet.nd.image`` are these modules (``ast_hybrid/mxnet``, the import door).

May import: ``ast_hybrid.core``, the ops, ``ast_hybrid.nd``, ``ast_hybrid.io`` (RecordIO), Gluon's vision data
(the image ops and transforms ``gluon.data.vision`` is made of), numpy.  Never the linter, the transpiler, the
CLI or ``testing``.
"""
