"""docs/lint.md's rule table (``| code | what | jax target | mxnet target |``) says what the catalogue says.

(The table was in the README until the docs were split.)  The table's wording is the page's
own; what is compared is what the catalogue (:mod:`ast_hybrid.common.rules`) holds: every code, and each
code's severity per target (a cell's first word: ``error``, ``warning``,
``note``; ``-`` for not reported on that target).  A row ``HYaaa-HYbbb``
stands for every catalogue code in that range.
"""

from pathlib import Path

from ast_hybrid.common.rules import RULES, TARGETS

DOC = Path(__file__).resolve().parents[2] / "docs" / "lint.md"
HEADER = "| code | what | jax target | mxnet target |"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def readme_rows() -> dict[str, tuple[str | None, ...]]:
    """code -> (jax severity, mxnet severity) as docs/lint.md's table gives them."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    assert lines.count(HEADER) == 1, f"docs/lint.md has no single rule table starting {HEADER!r}"
    start = lines.index(HEADER) + 2  # past the header and the |---| line
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        code, _what, *severities = _cells(line)
        assert len(severities) == len(TARGETS), line
        values = tuple(None if s == "-" else s.split()[0] for s in severities)
        first, _, last = code.partition("-")
        codes = [first] if not last else [c for c in RULES if first <= c <= last]
        assert first in RULES and (not last or last in RULES), f"unknown code in {line!r}"
        for c in codes:
            assert c not in rows, f"{c} is in docs/lint.md's table twice"
            rows[c] = values
    return rows


def test_readme_table_has_every_code_of_the_catalogue():
    assert sorted(readme_rows()) == sorted(RULES)


def test_readme_table_gives_the_catalogues_severities():
    rows = readme_rows()
    for code, rule in RULES.items():
        expected = tuple(None if rule.severity(t) is None else rule.severity(t).value for t in TARGETS)
        assert rows[code] == expected, code
