"""MXNet's files and data iterators, from the format up.

- ``params_file``: MXNet's NDArray file format (``nd.save``/``nd.load``, ``.params``), read and written by hand;
- ``recordio``: MXNet's RecordIO files (``MXRecordIO``, ``MXIndexedRecordIO``, ``pack``/``unpack``...);
- ``iterators``: ``mx.io``'s ``NDArrayIter``, ``DataIter``, ``DataBatch``, ``DataDesc``.

``mxnet.io`` and ``mxnet.recordio`` are these modules (``ast_hybrid/mxnet``, the import door).

May import: ``ast_hybrid.core``, the ops, numpy.  Never Gluon, the linter, the transpiler, the CLI or
``testing``.
"""
