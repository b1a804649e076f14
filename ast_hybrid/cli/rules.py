"""``ast-hybrid rules`` (every rule, one line each) and ``ast-hybrid rule CODE`` (one rule's page).

Both read the catalogue's :data:`~ast_hybrid.common.rules.RULES`: the rules
about user code (an internal entry such as HY999 is neither listed nor paged).
"""

from __future__ import annotations

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, err
from ast_hybrid.common.rules import RULES

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
    rule = RULES.get(code.upper())
    if rule is None:
        err(f"unknown rule code {code!r}; `ast-hybrid rules` lists them")
        return EXIT_ERROR
    print(f"# {rule.name} ({rule.code})\n")
    print(f"{rule.summary}\n")
    if rule.origin != "lint":
        print(f"Reported by: `ast_hybrid.{rule.origin}` (at conversion time).\n")
    for title, body in (("What it does", rule.what), ("Why is this bad?", rule.why),
                        ("Example", rule.example), ("Use instead", rule.instead),
                        ("Fix safety", rule.fix)):
        if body:
            print(f"## {title}\n")
            if title in ("Example", "Use instead") and "```" not in body:
                print(f"```python\n{body.strip()}\n```\n")
            else:
                print(f"{body.strip()}\n")
    print(f"See {rule.url}")
    return EXIT_CLEAN
