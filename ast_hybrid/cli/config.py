"""``ast-hybrid config``: every setting ast-hybrid reads from the environment, with its current value.

One row per ``AST_HYBRID_*`` variable (``ast_hybrid/core/settings.py`` declares them): the value in effect
now (or the error a bad value gives), the default, the values it takes and what it does; then the variables
of other tools it reads.  Exit 2 when one holds a value it does not take (the error names it), else 0.
``--markdown`` prints the table the documentation holds (``docs/performance.md``).  Imports no jax.
"""

from __future__ import annotations

import textwrap

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR
from ast_hybrid.core import settings

__all__ = ["run"]


def run(args) -> int:
    if args.markdown:
        print(settings.markdown_table())
        return EXIT_CLEAN
    rows = settings.rows()
    width = max(len(r[0]) for r in rows)
    bad = 0
    for name, now, default, accepted, help_text in rows:
        bad += now.startswith("ERROR")
        print(f"{name:<{width}}  {now}")
        detail = f"default {default}; takes {accepted}. {help_text}"
        print(textwrap.indent(textwrap.fill(detail, max(40, 118 - width)), " " * (width + 2)))
    print("\nAlso read, from other tools:")
    for name, what in settings.READ.items():
        value = settings.environ(name)
        print(f"  {name}={value!r}  ({what})" if value is not None else f"  {name} (unset): {what}")
    return EXIT_ERROR if bad else EXIT_CLEAN
