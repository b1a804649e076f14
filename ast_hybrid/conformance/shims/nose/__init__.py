"""A stand-in for ``nose`` (last released 2015; it does not import on Python 3.10+), which MXNet 1.9.1's unit
tests import for a few helpers (``nose.tools``) and ``nose.runmodule`` under ``__main__``.  On the path of
both sides when ``python -m ast_hybrid.conformance.mxnet_tests`` runs those tests, so both run the same."""


def runmodule(*args, **kwargs):
    raise SystemExit("run this file with pytest")
