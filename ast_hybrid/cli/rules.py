"""``ast-hybrid rules`` (every rule, one line each) and ``ast-hybrid rule CODE`` (one rule's page).

Both read the catalogue, :data:`~ast_hybrid.common.rules.RULES`: every code
ast-hybrid can emit, HY999 (an internal error) included.
"""

from __future__ import annotations

import ast

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, err
from ast_hybrid.common.rules import RULES, get_rule

__all__ = ["run"]


def run(args) -> int:
    return print_page(args.code) if args.command == "rule" else print_index()


def print_index() -> int:
    for code, rule in RULES.items():
        fix = "[*]" if rule.fixes else "   "
        origin = "" if rule.origin == "lint" else f"  ({rule.origin})"
        print(f"{code}  {fix} {rule.name:<36} {rule.summary}{origin}")
    return EXIT_CLEAN


def print_page(code: str) -> int:
    rule = get_rule(code)
    if rule is None:
        err(f"unknown rule code {code!r}; `ast-hybrid rules` lists them")
        return EXIT_ERROR
    print(f"# {rule.name} ({rule.code})\n")
    print(f"{rule.summary}\n")
    if rule.internal:
        print("Reported by: any part of ast-hybrid (a failure of the tool itself: the run exits 2).\n")
    elif rule.origin != "lint":
        print(f"Reported by: `ast_hybrid.{rule.origin}` (at conversion time).\n")
    for title, body in (("What it does", rule.what), ("Why is this bad?", rule.why),
                        ("Example", rule.example), ("Use instead", rule.instead),
                        ("Fix safety", rule.fix)):
        if body:
            print(f"## {title}\n")
            # code is shown fenced (an example may be code that does not parse: HY020's); a "use
            # instead" that is prose (HY999's) as it is
            if "```" not in body and (title == "Example" or title == "Use instead" and _is_python(body)):
                print(f"```python\n{body.strip()}\n```\n")
            else:
                print(f"{body.strip()}\n")
    print(f"See {rule.url}")
    return EXIT_CLEAN


def _is_python(text: str) -> bool:
    """Whether ``text`` parses as Python."""
    try:
        ast.parse(text.strip())
    except SyntaxError:
        return False
    return True
