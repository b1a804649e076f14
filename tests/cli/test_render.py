import json
from pathlib import Path

import pytest

from ast_hybrid.common.diagnostics import Diagnostic, Edit, Fix, Severity
from ast_hybrid.common.render import (render_concise, render_github, render_json, render_sarif,
                                      render_statistics, render_summary, render_text)
from ast_hybrid.common.rules import RULES
from ast_hybrid.common.source import Span

ROOT = Path(__file__).resolve().parents[2]


def _diag(path, **kw):
    base = dict(code="HY001", message="in-place `+=` on tensor `x`", path=str(path),
                span=Span(2, 5, 2, 11), help="write `x = x + 1`",
                fix=Fix("Replace", (Edit(Span(2, 5, 2, 11), "x = x + 1"),)))
    base.update(kw)
    return Diagnostic(**base)


def test_text_excerpt_carets_under_span_from_file(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f(F, x):\n    x += 1\n    return x\n")
    out = render_text([_diag(f)])
    lines = out.splitlines()
    assert lines[0] == f"{f}:2:5: HY001 [*] in-place `+=` on tensor `x`"
    src_line = next(ln for ln in lines if ln.startswith("2 |"))
    caret_line = lines[lines.index(src_line) + 1]
    start = caret_line.index("^")
    # carets sit exactly under `x += 1` (the gutter "2 | " and "  | " have equal width)
    assert src_line[start:start + 6] == "x += 1" and caret_line.count("^") == 6
    assert "  = help: write `x = x + 1`" in lines


def test_text_uses_source_lines_and_survives_missing_file(tmp_path):
    gone = tmp_path / "gone.py"
    d = _diag(gone, source_lines={1: "def f(F, x):", 2: "    x += 1"})
    assert "2 |     x += 1" in render_text([d])
    bare = _diag(gone)  # no file, no source_lines: header and help only
    out = render_text([bare])
    assert out.startswith(f"{gone}:2:5: HY001") and "^" not in out and "help:" in out


def test_text_notes_and_unsafe_fix_marked(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("a\nprint(x)\n")
    note = _diag(f, code="HY006", message="print", severity=Severity.NOTE, fix=None, help=None,
                 span=Span(2, 1, 2, 9))
    unsafe = _diag(f, fix=Fix("Replace", (Edit(Span(2, 5, 2, 11), "y"),), "unsafe"))
    out = render_text([note, unsafe])
    assert "HY006 note: print" in out
    assert "HY001 [*]" not in out and "--unsafe-fixes" in out
    assert "HY001 [*]" in render_text([unsafe], unsafe_fixes=True)


def test_text_multiline_span(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("y = f(\n    a,\n    b)\n")
    out = render_text([_diag(f, span=Span(1, 5, 3, 7), fix=None)])
    carets = [ln for ln in out.splitlines() if "^" in ln]
    assert len(carets) == 3 and carets[-1].endswith("HY001")


def test_color_only_when_asked(tmp_path):
    d = _diag(tmp_path / "m.py")
    assert "\x1b[" not in render_text([d])
    assert "\x1b[" in render_text([d], color=True)


def test_summary_counts():
    d = _diag("m.py")
    note = _diag("m.py", severity=Severity.NOTE, fix=None)
    s = render_summary([d, d, note])
    assert "Found 2 errors." in s and "[*] 2 fixable with the --fix option." in s
    assert "1 note" in s
    assert render_summary([]) == "All checks passed!"
    assert "1 fixed, 0 remaining" in render_summary([], fixed=1, fix_enabled=True)


def test_json_shape_is_ruffs():
    d = _diag("m.py")
    nopos = _diag("m.py", span=None, fix=None, code="HY020")
    data = json.loads(render_json([d, nopos]))
    obj = data[0]
    assert set(obj) >= {"code", "message", "filename", "location", "end_location", "fix",
                        "url", "noqa_row"}
    assert obj["location"] == {"row": 2, "column": 5}
    assert obj["end_location"] == {"row": 2, "column": 11}
    assert obj["fix"]["applicability"] == "safe"
    assert obj["fix"]["edits"] == [{"content": "x = x + 1", "location": {"row": 2, "column": 5},
                                    "end_location": {"row": 2, "column": 11}}]
    # the rule's page: a path in the repository, to a file that exists
    assert obj["url"] == "docs/rules/HY001.md" and (ROOT / obj["url"]).is_file() and obj["noqa_row"] == 2
    assert data[1]["fix"] is None and data[1]["noqa_row"] is None


def test_sarif_required_keys():
    d = _diag("m.py")
    note = _diag("m.py", severity=Severity.NOTE, code="HY010")
    doc = json.loads(render_sarif([d, note]))
    assert doc["version"] == "2.1.0" and "sarif" in doc["$schema"]
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "ast-hybrid" and driver["version"]
    # SARIF wants absolute URIs there and ast-hybrid has no website: none given rather than a wrong one
    assert "informationUri" not in driver
    ids = [r["id"] for r in driver["rules"]]
    assert set(RULES) <= set(ids)
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"] and "helpUri" not in r
        page = r["properties"]["page"]
        assert page == f"docs/rules/{r['id']}.md" and (ROOT / page).is_file()
        assert f"`ast-hybrid rule {r['id']}`" in r["help"]["text"] and page in r["help"]["text"]
    res = doc["runs"][0]["results"]
    assert [r["level"] for r in res] == ["error", "note"]
    rep = res[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert rep["insertedContent"]["text"] == "x = x + 1" and rep["deletedRegion"]["startColumn"] == 5
    for r in res:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].startswith("file://")
        assert loc["region"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 11}
        assert r["message"]["text"]


def test_github_annotations_escaped():
    d = _diag("a,b:c.py", message="50% bad\nreally")
    line = render_github([d, _diag("m.py", severity=Severity.NOTE)]).splitlines()
    assert line[0] == ("::error title=ast-hybrid (HY001),file=a%2Cb%3Ac.py,line=2,col=5,"
                       "endLine=2,endColumn=11::HY001 50%25 bad%0Areally")
    assert line[1].startswith("::notice ")


def test_statistics():
    out = render_statistics([_diag("m.py"), _diag("n.py"), _diag("m.py", code="HY006", fix=None)])
    rows = [r.split("\t") for r in out.splitlines()]
    assert rows[0] == ["2", "HY001", "[*] inplace-augmented-assignment"]
    assert rows[1][:2] == ["1", "HY006"]
    assert rows[1][2] == "[ ] print-tensor"     # ruff marks the unfixable ones when some code is fixable


def test_statistics_as_ruff_writes_them():
    unsafe = Fix("Replace", (Edit(Span(2, 5, 2, 11), "x = x + 1"),), "unsafe")
    many = [_diag("m.py", code="HY006", fix=None)] * 12 + [_diag("m.py"), _diag("n.py", fix=unsafe)]
    rows = render_statistics(many).splitlines()
    # the count right-aligned to the widest; no [*]: HY001 has a finding --fix would not fix
    assert rows == ["12\tHY006\tprint-tensor", " 2\tHY001\tinplace-augmented-assignment"]
    assert render_statistics(many, unsafe_fixes=True).splitlines()[1] == \
        " 2\tHY001\t[*] inplace-augmented-assignment"
    assert json.loads(render_statistics(many, "json")) == [
        {"code": "HY006", "name": "print-tensor", "count": 12, "fixable": False},
        {"code": "HY001", "name": "inplace-augmented-assignment", "count": 2, "fixable": False}]
    assert render_statistics([]) == "" and json.loads(render_statistics([], "json")) == []
    with pytest.raises(ValueError, match="sarif"):
        render_statistics(many, "sarif")


def test_concise_is_one_line_each():
    out = render_concise([_diag("m.py"), _diag("m.py", code="HY006", fix=None, severity=Severity.NOTE)])
    assert out.splitlines() == ["m.py:2:5: HY001 [*] in-place `+=` on tensor `x`",
                                "m.py:2:5: HY006 note: in-place `+=` on tensor `x`"]
    # the first line of the full format, and nothing else
    assert render_text([_diag("m.py")]).splitlines()[0] == out.splitlines()[0]
