"""``ast-hybrid server``: the language server (LSP over stdin/stdout) for editors.

Runs :func:`ast_hybrid.lsp.serve` until the client says exit.  It needs pygls
(``pip install 'ast-hybrid[server]'``); without it the command says so and exits 2.
Imports no jax.
"""

from __future__ import annotations

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, err

__all__ = ["run"]


def run(args) -> int:
    try:
        import pygls  # noqa: F401 - only to say what is missing before anything starts
    except ImportError:
        err("the language server needs pygls: pip install 'ast-hybrid[server]' (or pip install pygls)")
        return EXIT_ERROR
    from ast_hybrid.lsp import serve

    serve()
    return EXIT_CLEAN
