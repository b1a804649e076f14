"""Every relative link of the documentation leads to a file of the repository.

README.md, ``docs/**/*.md`` and bench's Markdown pages link each other with relative paths
(``[docs/lint.md](docs/lint.md)``, ``[rules](rules/README.md)``); a page moved or renamed
without its links fails here.  Links with a scheme (``https:``) and in-page anchors are not
checked.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("bench/*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_pages_exist():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    for page in ("README.md", "docs/lint.md", "docs/rules/README.md", "docs/convert.md", "docs/gluon.md",
                 "docs/mxnet.md", "docs/performance.md", "docs/distributed.md", "docs/conformance.md",
                 "docs/architecture.md", "docs/history.md", "bench/README.md", "bench/HISTORY.md"):
        assert page in names, page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    text = page.read_text(encoding="utf-8")
    # code spans and fenced blocks are not links
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{page.relative_to(ROOT)} links {target!r}, which does not exist"
