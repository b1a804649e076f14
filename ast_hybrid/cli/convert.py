"""``ast-hybrid convert FILE[::QUALNAME]``: print the code the transpiler generates.

The file is read and parsed, never imported or run: conversion is a function
of the source alone.  ``QUALNAME`` is a dotted path (``Net.hybrid_forward``,
``outer.inner``); without it every function and method of the file is shown.
Exit codes as ``lint``: 0 printed, 1 a function with in-place ops or host
syncs that conversion refuses when they meet a traced value (their
diagnostics are printed to stderr, the code still to stdout), 2 a usage
error (no such file or function, a syntax error).
"""

from __future__ import annotations

import sys

import gast

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ast_hybrid.common.diagnostics import Diagnostic
from ast_hybrid.common.render import render_text
from ast_hybrid.common.rules import message
from ast_hybrid.common.source import SourceError, read_file

__all__ = ["run", "functions"]

_DEFS = (gast.FunctionDef, gast.ClassDef)


def functions(module):
    """``(qualname, FunctionDef, class name or None)`` for every function and method, outermost first."""
    todo = [(node, "", None) for node in module.body]
    while todo:
        node, prefix, cls = todo.pop(0)
        if isinstance(node, gast.FunctionDef):
            yield prefix + node.name, node, cls
            todo.extend((n, f"{prefix}{node.name}.", None) for n in node.body if isinstance(n, _DEFS))
        elif isinstance(node, gast.ClassDef):
            todo.extend((n, f"{prefix}{node.name}.", node.name) for n in node.body if isinstance(n, _DEFS))


def run(args) -> int:
    from ast_hybrid.transpiler.converter import lint_refusals, transform_function

    path, _, qualname = args.target.partition("::")
    try:
        source = read_file(path)
        module = source.parse()
    except SourceError as err:
        if err.span is None:
            print(f"error: {err.path}: {err.message}", file=sys.stderr)
        else:
            text, help = message("HY020", "convert-cli", reason=err.message)
            print(render_text([Diagnostic("HY020", text, err.path, err.span, help=help)], color=False),
                  file=sys.stderr)
        return EXIT_ERROR
    found = list(functions(module))
    if qualname:
        found = [f for f in found if f[0] == qualname]
        if not found:
            names = ", ".join(q for q, _, _ in functions(source.parse())) or "none"
            print(f"error: {path} defines no function `{qualname}` (it defines: {names})", file=sys.stderr)
            return EXIT_ERROR
    status = EXIT_CLEAN
    for i, (name, fn, cls) in enumerate(found):
        fn.decorator_list = []
        refusals = lint_refusals(fn, source)
        if refusals:
            print(render_text(refusals, color=False), file=sys.stderr)
            status = EXIT_FINDINGS
        tree, _ = transform_function(fn, source, cls, refusals=refusals)
        if len(found) > 1:
            print(f"{'' if i == 0 else chr(10)}# --- {path}::{name}")
        print(gast.unparse(tree.body[0].body[-2]).strip())
    return status
