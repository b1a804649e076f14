"""The language server: ``ast-hybrid server`` speaks LSP over stdio, with pygls.

An editor sends the text of each Python file it has open, saved or not; the
server lints that text with the linter (:func:`ast_hybrid.linter.api.lint_source`)
and publishes the findings as the user types.  Beside them: code actions (each
finding's fix, the unsafe ones marked; ``# noqa`` for the line; fix all safe
fixes, as ``source.fixAll.ast-hybrid``), and hover with the rule's page.
Settings are the nearest ``pyproject.toml``'s ``[tool.ast-hybrid]`` above the
file (re-read when it changes), under the editor's ``initializationOptions``
(``target``, ``select``, ``extendSelect``, ``ignore``: as the command line's
flags).  Nothing the user wrote is imported or executed: the linter reads it.

- :mod:`.convert`: our diagnostics, fixes and pages as LSP's types (positions in
  the encoding the client chose);
- :mod:`.server`: the server, its state (the open documents' findings, the
  settings read) and its handlers.

May import: the standard library, pygls and lsprotocol, :mod:`ast_hybrid.common`
and :mod:`ast_hybrid.linter`.  Never jax or numpy: the server starts as fast as
``lint`` does.
"""

from __future__ import annotations

__all__ = ["serve"]


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    from .server import build_server

    build_server().start_io()
