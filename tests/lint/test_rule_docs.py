"""``docs/rules``: one page per rule of the catalogue, generated from it, and the index.

The pages are written by ``python -m ast_hybrid.cli.rules --write-docs docs/rules``
(:func:`ast_hybrid.cli.rules.write_docs`); here they are written again into a
temporary folder and compared with the repository's, file for file and byte for
byte, so a catalogue change without regenerating them fails.  Every code of
:data:`~ast_hybrid.common.rules.RULES` has a page, and no page is for a code the
catalogue lacks.  The link every diagnostic carries (``Diagnostic.url``, the JSON
``url``, SARIF's ``page``) names that page.
"""

from pathlib import Path

from ast_hybrid.cli.rules import page, write_docs
from ast_hybrid.common.diagnostics import RULE_URL
from ast_hybrid.common.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "rules"


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()) if p.is_file()}


def test_docs_rules_is_what_the_catalogue_generates(tmp_path):
    written = write_docs(tmp_path)
    assert sorted(p.name for p in written) == sorted(_files(tmp_path))
    expected, actual = _files(tmp_path), _files(DOCS)
    assert sorted(actual) == sorted(expected), (
        "docs/rules has other files than the generator writes; "
        "run `python -m ast_hybrid.cli.rules --write-docs docs/rules`")
    for name in expected:
        assert actual[name] == expected[name], (
            f"docs/rules/{name} is stale; run `python -m ast_hybrid.cli.rules --write-docs docs/rules`")


def test_every_code_has_a_page_and_every_page_a_code():
    pages = {p.stem for p in DOCS.glob("*.md") if p.name != "README.md"}
    assert pages == set(RULES)
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for code, rule in RULES.items():
        text = (DOCS / f"{code}.md").read_text(encoding="utf-8")
        assert text.startswith(page(rule)) and f"# {rule.name} ({code})" in text
        assert f"| [{code}]({code}.md) | `{rule.name}` |" in index


def test_rule_url_names_the_page_in_the_repository():
    for code, rule in RULES.items():
        assert rule.url == RULE_URL.format(code=code) == f"docs/rules/{code}.md"
        assert (ROOT / rule.url).is_file(), rule.url


def test_writing_removes_pages_of_codes_the_catalogue_lacks(tmp_path):
    (tmp_path / "HY998.md").write_text("old\n")
    (tmp_path / "notes.txt").write_text("kept\n")
    write_docs(tmp_path)
    assert not (tmp_path / "HY998.md").exists() and (tmp_path / "notes.txt").exists()
