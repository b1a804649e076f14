"""``mx``: ``import mxnet`` resolving to ``ast_hybrid.mxnet`` for the test, as ``ast-hybrid run`` makes it."""

import sys

import pytest

collect_ignore = ["scripts"]       # MXNet scripts, run by the tests under `ast-hybrid run`, not imported


@pytest.fixture
def mx():
    from ast_hybrid import mxnet as compat

    was_installed = compat.installed()
    saved = {k: v for k, v in sys.modules.items() if k == "mxnet" or k.startswith("mxnet.")}
    compat.uninstall()
    compat.install()
    try:
        import mxnet
        yield mxnet
    finally:
        compat.uninstall()
        sys.modules.update(saved)
        if was_installed:
            compat.install()
