import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def corpus_trees(gluon_tree):
    """The labelled trees of real Gluon code (read, never imported): name -> path.

    GluonCV, GluonNLP, GluonTS, gluoncv2, sockeye, gluonfr, autogluon, deeprenewal, xfer and cnstd
    are downloaded once (``pip download --no-deps``) into ``.cache/``.
    """
    from ast_hybrid.testing.corpus import CorpusUnavailable, package_tree

    try:
        return {"mxnet-gluon": Path(gluon_tree), "gluoncv": package_tree("gluoncv"),
                "gluonnlp": package_tree("gluonnlp"), "gluonts": package_tree("gluonts"),
                "gluoncv2": package_tree("gluoncv2"), "sockeye": package_tree("sockeye"),
                "gluonfr": package_tree("gluonfr"), "autogluon": package_tree("autogluon"),
                "deeprenewal": package_tree("deeprenewal"), "xfer": package_tree("xfer"),
                "cnstd": package_tree("cnstd")}
    except CorpusUnavailable as exc:
        pytest.skip("GLUONCV/GLUONNLP/GLUONTS/GLUONCV2/SOCKEYE/GLUONFR/AUTOGLUON/DEEPRENEWAL/XFER/CNSTD CORPUS "
                    "UNAVAILABLE, "
                    f"labelled real-code test NOT run: {exc}")
