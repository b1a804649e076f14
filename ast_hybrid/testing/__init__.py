"""What the tests and benchmarks stand on: real MXNet 1.9.1 and real code nobody here wrote.

- ``oracle``: MXNet 1.9.1 in its own virtualenv (``python -m ast_hybrid.testing.oracle setup``),
  driven through a subprocess;
- ``corpus``: the ``mxnet/gluon`` tree of that wheel, unpacked to be read (never imported).

May import: anything of ast_hybrid.  Nothing in ast_hybrid imports this package
(it is not part of the product).
"""
