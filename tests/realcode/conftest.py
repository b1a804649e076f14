"""Real code nobody here wrote, run on ast-hybrid; the helpers are imported from this folder."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def mxnet_source(tmp_path_factory, gluon_tree):
    """``mxnet`` importable as the stand-in package holding MXNet's own model and loss code."""
    import mxshim

    dest = tmp_path_factory.mktemp("mxshim")
    mxshim.build(dest, gluon_tree)
    saved = {k: v for k, v in sys.modules.items() if k == "mxnet" or k.startswith("mxnet.")}
    sys.path.insert(0, str(dest))
    try:
        import mxnet
        assert mxnet.__file__.startswith(str(dest))
        yield mxnet
    finally:
        sys.path.remove(str(dest))
        for k in [k for k in sys.modules if k == "mxnet" or k.startswith("mxnet.")]:
            del sys.modules[k]
        sys.modules.update(saved)
