"""``ast_hybrid.lint``: what is a path and what is source, selection, never a traceback."""

from pathlib import Path

import ast_hybrid
from ast_hybrid.linter.api import lint


def test_exported_lazily():
    assert ast_hybrid.lint is lint


def test_source_string_vs_path(tmp_path, fake_linter):
    f = tmp_path / "m.py"
    f.write_text("x += 1\n")
    by_path = lint(str(f), respect_config=False)
    assert [(d.code, d.path) for d in by_path] == [("HY001", str(f))]
    assert [d.path for d in lint(f, respect_config=False)] == [str(f)]          # PathLike
    assert [d.path for d in lint([f, f], respect_config=False)] == [str(f)]     # deduplicated
    assert [d.path for d in lint(tmp_path, respect_config=False)] == [str(f)]   # directory
    src = lint("x += 1\n")
    assert [(d.code, d.path) for d in src] == [("HY001", "<string>")]
    # a one-line string naming no existing path is source too
    assert [d.code for d in lint("x += 2")] == ["HY001"]


def test_select_ignore_and_missing_paths(tmp_path, fake_linter):
    text = "x += 1\nprint(x)\n"
    assert [d.code for d in lint(text)] == ["HY001", "HY006"]
    assert [d.code for d in lint(text, ignore=["HY001"])] == ["HY006"]
    assert [d.code for d in lint(text, select="HY00", ignore="HY006")] == ["HY001"]
    diags = lint([tmp_path / "nope.py"], respect_config=False)
    assert [(d.code, d.span, d.message) for d in diags] == [("HY020", None, "path does not exist")]


def test_internal_errors_become_hy999(tmp_path, monkeypatch):
    import ast_hybrid.linter as linter

    def boom(src, target):
        if "bad" in src.path:
            raise RuntimeError("broken")
        return []
    monkeypatch.setattr(linter, "check_source", boom)
    (tmp_path / "bad.py").write_text("x = 1\n")
    (tmp_path / "good.py").write_text("x = 1\n")
    diags = lint(tmp_path, respect_config=False)
    assert [(Path(d.path).name, d.code) for d in diags] == [("bad.py", "HY999")]
    assert "RuntimeError: broken" in diags[0].message


def test_real_checker_runs_on_bad_input(tmp_path):
    """The real ``check_source``, whatever rules it has today: unreadable input is HY020."""
    (tmp_path / "a.py").write_bytes(b"\xff\xfe = 1\n")
    (tmp_path / "b.py").write_text("def f(:\n")
    diags = lint(tmp_path, respect_config=False)
    assert [(Path(d.path).name, d.code) for d in diags] == [("a.py", "HY020"), ("b.py", "HY020")]
    assert all(d.span is not None for d in diags)
