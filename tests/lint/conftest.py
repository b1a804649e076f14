import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def corpus_trees(gluon_tree):
    """The three labelled trees of real Gluon code (read, never imported): name -> path.

    GluonCV and GluonNLP are downloaded once (``pip download --no-deps``) into ``.cache/``.
    """
    from ast_hybrid.testing.corpus import CorpusUnavailable, package_tree

    try:
        return {"mxnet-gluon": Path(gluon_tree), "gluoncv": package_tree("gluoncv"),
                "gluonnlp": package_tree("gluonnlp")}
    except CorpusUnavailable as exc:
        pytest.skip(f"GLUONCV/GLUONNLP CORPUS UNAVAILABLE, labelled real-code test NOT run: {exc}")
