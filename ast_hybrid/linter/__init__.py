"""Static hybridizability checks over one source file (never imports or runs it).

TODO(linter): the real analysis and rules.  Only HY020 is reported for now.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic
from ..source import SourceError, SourceFile

__all__ = ["check_source"]


def check_source(src: SourceFile, *, target: str = "jax") -> list[Diagnostic]:
    """Every finding in ``src`` for ``target`` ("jax" or "mxnet"), noqa applied."""
    try:
        src.parse()
    except SourceError as err:
        return [Diagnostic("HY020", err.message, err.path, err.span,
                           help="fix the syntax error; the other files are still linted")]
    return []
