"""Unmodified GluonCV 0.10.5 / GluonNLP 0.10.0 imported through ``import mxnet`` = ``ast_hybrid.mxnet``.

``import_package(name)`` installs the compatibility package (``ast_hybrid.mxnet.install()``), restores the
numpy aliases as ``ast-hybrid run`` does, puts the unpacked packages folder LAST on ``sys.path`` (it holds
scipy/Pillow/requests built for the oracle's numpy 1.x; ours come first) and imports the package, whole: no
name is stood in for (every name they import from MXNet exists in the compatibility package;
``tests/mxnet/test_gluon_packages_import.py`` imports every submodule on both sides).

The folder: ``ast_hybrid.testing.oracle.gluon_pkgs()`` (inside the oracle's virtualenv, filled by its
``setup``; ``$AST_HYBRID_GLUON_PKGS`` names another).  If its install fails the tests skip, loudly.
"""

from __future__ import annotations

from pathlib import Path


def restore() -> None:
    """Nothing to undo: no stand-in is given (kept for the callers that undid them)."""


def packages_folder() -> Path | None:
    """The folder ``python -m ast_hybrid.testing.oracle setup`` fills (``oracle.gluon_pkgs()``, or
    ``$AST_HYBRID_GLUON_PKGS``), installed now if it is not yet; None only when that install fails."""
    from ast_hybrid.testing import oracle

    try:
        return oracle.ensure_gluon_pkgs()
    except oracle.OracleUnavailable:
        return None


def import_package(name: str, folder: Path):
    """``name`` imported as above (``ast_hybrid.conformance._import.import_package``: GluonCV's parts are first
    imported under an empty package shell, since its ``__init__`` turns any ImportError of theirs into "missing
    mxnet & torch")."""
    from ast_hybrid.conformance._import import import_package as _import_package

    return _import_package(name, folder)
