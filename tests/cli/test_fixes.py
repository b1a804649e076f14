import pytest

from ast_hybrid.common.diagnostics import Diagnostic, Edit, Fix
from ast_hybrid.linter.apply import apply_fixes, fix_file, fix_text
from ast_hybrid.common.source import Span


def _d(span, content, appl="safe"):
    return Diagnostic("HY001", "m", "m.py", span, fix=Fix("f", (Edit(span, content),), appl))


def test_back_to_front_and_overlap_skipped():
    text = "ab\ncd\nef\n"
    diags = [_d(Span(1, 1, 1, 2), "X"), _d(Span(3, 2, 3, 3), "YY"), _d(Span(1, 1, 2, 2), "Z")]
    new, n = apply_fixes(text, diags)
    assert (new, n) == ("Xb\ncd\neYY\n", 2)  # the overlapping third waits for a later round


def test_unsafe_only_when_asked():
    d = _d(Span(1, 1, 1, 2), "X", "unsafe")
    assert apply_fixes("ab\n", [d]) == ("ab\n", 0)
    assert apply_fixes("ab\n", [d], unsafe=True) == ("Xb\n", 1)


def test_multiline_edit_and_crlf_columns():
    text = "a = 1\r\nb = f(\r\n  2)\r\n"
    new, n = apply_fixes(text, [_d(Span(2, 5, 3, 5), "g(2)")])
    assert new == "a = 1\r\nb = g(2)\r\n" and n == 1


@pytest.fixture
def _lint(fake_linter):
    from ast_hybrid.common.source import SourceFile
    return lambda text: fake_linter(SourceFile.from_text(text, "m.py"))


def test_fix_text_until_stable_and_idempotent(_lint):
    text = "def f(F, x):\n    x += 1\n    x *= alias\n    return x\n"
    res = fix_text(text, "m.py", _lint)
    assert res.fixed == 1 and "x = x + 1" in res.text and "x *= alias" in res.text
    assert [d.code for d in res.remaining] == ["HY001"]
    again = fix_text(res.text, "m.py", _lint)
    assert again.fixed == 0 and again.text == res.text
    both = fix_text(text, "m.py", _lint, unsafe=True)
    assert both.fixed == 2 and both.remaining == []
    assert compile(both.text, "m.py", "exec")


@pytest.mark.parametrize("encoding,newline,bom", [
    ("utf-8", "\n", False), ("utf-8", "\r\n", False), ("utf-8-sig", "\n", True),
    ("latin-1", "\r\n", False),
])
def test_fix_file_keeps_encoding_and_newlines(tmp_path, encoding, newline, bom, fake_linter):
    cookie = "# -*- coding: latin-1 -*-\n" if encoding == "latin-1" else ""
    text = cookie + "def f(F, x):\n    s = 'é'\n    x += 1\n    return x\n"
    data = text.replace("\n", newline).encode(encoding)
    p = tmp_path / "m.py"
    p.write_bytes(data)
    res = fix_file(str(p), fake_linter, write=True)
    assert res.fixed == 1
    out = p.read_bytes()
    assert out.startswith(b"\xef\xbb\xbf") is bom
    decoded = out.decode(encoding)
    assert decoded == text.replace("x += 1", "x = x + 1").replace("\n", newline)
    assert fix_file(str(p), fake_linter).fixed == 0


def test_diff_writes_nothing(tmp_path, fake_linter):
    p = tmp_path / "m.py"
    p.write_text("x += 1\n")
    res = fix_file(str(p), fake_linter, write=False)
    assert p.read_text() == "x += 1\n"
    assert "-x += 1\n+x = x + 1\n" in res.diff()
