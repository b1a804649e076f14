"""A rule's page: Markdown made from the catalogue (:mod:`.rules`), one function.

``ast-hybrid rule CODE`` prints it, ``docs/rules/CODE.md`` keeps it (written by
``python -m ast_hybrid.cli.rules --write-docs docs/rules``), and the language
server shows it on hover.

>>> from ast_hybrid.common.rules import RULES
>>> print(page(RULES["HY005"]).splitlines()[0])
# wait-in-forward (HY005)
"""

from __future__ import annotations

import ast

from .rules import TARGETS

__all__ = ["page"]


def _severities(rule) -> str:
    cells = []
    for target in TARGETS:
        sev = rule.severity(target)
        cells.append(f"{sev.value if sev is not None else 'not reported'} on target {target}")
    return "; ".join(cells)


def page(rule) -> str:
    """One rule's page, Markdown, as ``ast-hybrid rule CODE`` prints it (ending in a blank line)."""
    out = [f"# {rule.name} ({rule.code})\n", f"{rule.summary}\n", f"Severity: {_severities(rule)}.\n"]
    if rule.internal:
        out.append("Reported by: any part of ast-hybrid (a failure of the tool itself: the run exits 2).\n")
    elif rule.origin != "lint":
        out.append(f"Reported by: `ast_hybrid.{rule.origin}` (at conversion time).\n")
    for title, body in (("What it does", rule.what), ("Why is this bad?", rule.why),
                        ("Example", rule.example), ("Use instead", rule.instead),
                        ("Fix safety", rule.fix)):
        if body:
            out.append(f"## {title}\n")
            # code is shown fenced (an example may be code that does not parse: HY020's); a "use
            # instead" that is prose (HY999's) as it is
            if "```" not in body and (title == "Example" or title == "Use instead" and _is_python(body)):
                out.append(f"```python\n{body.strip()}\n```\n")
            else:
                out.append(f"{body.strip()}\n")
    return "\n".join(out)


def _is_python(text: str) -> bool:
    """Whether ``text`` parses as Python."""
    try:
        ast.parse(text.strip())
    except SyntaxError:
        return False
    return True
