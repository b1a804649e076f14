"""``ast-hybrid rules`` (every rule, one line each) and ``ast-hybrid rule CODE`` (one rule's page).

Both read the catalogue, :data:`~ast_hybrid.common.rules.RULES`: every code
ast-hybrid can emit, HY999 (an internal error) included.

The same pages are kept in the repository as Markdown, ``docs/rules/HY001.md``
and so on, with an index ``docs/rules/README.md``: generated from the
catalogue by ``python -m ast_hybrid.cli.rules --write-docs docs/rules`` (a
test regenerates them and compares; edit the catalogue, not the pages).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, err
from ast_hybrid.common.rule_pages import page
from ast_hybrid.common.rules import RULES, TARGETS, get_rule

__all__ = ["run", "page", "index_page", "write_docs"]

#: the command that regenerates ``docs/rules`` (printed in every generated file)
WRITE_DOCS = "python -m ast_hybrid.cli.rules --write-docs docs/rules"


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
    print(page(rule))
    print(f"This page is also {rule.url} in ast-hybrid's repository.")
    return EXIT_CLEAN


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def index_page() -> str:
    """``docs/rules/README.md``: every rule, one row each, linking its page."""
    out = ["# Rules\n",
           "Every diagnostic code ast-hybrid can emit, from the rule catalogue "
           "(`ast_hybrid/common/rules.py`). `ast-hybrid rules` prints this list, `ast-hybrid rule HY001` "
           "one rule's page. Severity per target: `jax` is what ast-hybrid's conversion rejects, `mxnet` "
           "what breaks MXNet 1.x `hybridize()` (`-`: not reported on that target); `[*]`: the rule can "
           "carry an automatic fix; origin `convert`: reported by `ast_hybrid.convert` at conversion time, "
           "`internal`: a failure of ast-hybrid itself.\n",
           "| code | name | summary | jax | mxnet | fix | origin |",
           "|---|---|---|---|---|---|---|"]
    for code, rule in RULES.items():
        sev = [rule.severity(t).value if rule.severity(t) is not None else "-" for t in TARGETS]
        fix = "[*]" if rule.fixes else ""
        out.append(f"| [{code}]({code}.md) | `{rule.name}` | {_md_cell(rule.summary)} | "
                   f"{' | '.join(sev)} | {fix} | {rule.origin} |")
    out.append("")
    out.append(_footer("this index"))
    return "\n".join(out)


def _footer(what: str) -> str:
    return (f"<!-- Generated from ast_hybrid/common/rules.py by `{WRITE_DOCS}`: "
            f"edit the catalogue, not {what}. -->\n")


def write_docs(directory) -> list[Path]:
    """Write every rule's page (``HY001.md``, ...) and ``README.md`` into ``directory``; remove the
    pages of codes the catalogue no longer has.  Returns the files written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files = {f"{code}.md": page(rule) + "\n" + _footer("this page") for code, rule in RULES.items()}
    files["README.md"] = index_page()
    for stale in directory.glob("HY*.md"):
        if stale.name not in files:
            stale.unlink()
    written = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ast_hybrid.cli.rules",
                                     description="Write the rule catalogue's pages as Markdown.")
    parser.add_argument("--write-docs", metavar="DIR", required=True,
                        help="folder to write HY001.md ... and README.md into (docs/rules)")
    args = parser.parse_args(argv)
    for path in write_docs(args.write_docs):
        print(path)
    return EXIT_CLEAN


if __name__ == "__main__":
    raise SystemExit(main())
