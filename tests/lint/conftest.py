import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def corpus_trees(gluon_tree):
    """The labelled trees of real Gluon code (read, never imported): name -> path.

    GluonCV, GluonNLP and GluonTS are downloaded once (``pip download --no-deps``) into ``.cache/``.
    """
    from ast_hybrid.testing.corpus import CorpusUnavailable, package_tree

    try:
        return {"mxnet-gluon": Path(gluon_tree), "gluoncv": package_tree("gluoncv"),
                "gluonnlp": package_tree("gluonnlp"), "gluonts": package_tree("gluonts")}
    except CorpusUnavailable as exc:
        pytest.skip(f"GLUONCV/GLUONNLP/GLUONTS CORPUS UNAVAILABLE, labelled real-code test NOT run: {exc}")
