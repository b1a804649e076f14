import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ast_hybrid.cli import main

ROOT = Path(__file__).resolve().parents[2]

MODEL = "def hybrid_forward(self, F, x):\n    x += 1\n    print(x)\n    return x\n"


@pytest.fixture
def proj(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.ast-hybrid]\n")
    (tmp_path / "m.py").write_text(MODEL)
    (tmp_path / "clean.py").write_text("y = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_text_output_and_exit_codes(proj, fake_linter, capsys):
    assert main(["lint", "m.py"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("m.py:2:5: HY001 [*] in-place `+=` on tensor `x`\n")
    assert "m.py:3:5: HY006 note:" in out
    assert "Found 1 error." in out and "[*] 1 fixable with the --fix option." in out
    assert main(["lint", "clean.py"]) == 0
    assert "All checks passed!" in capsys.readouterr().out
    assert main(["lint", "--exit-zero", "m.py"]) == 0
    assert main(["lint", "--ignore", "HY001", "m.py"]) == 0   # notes never fail
    capsys.readouterr()
    assert main(["lint", "--select", "HY006", "-q", "m.py"]) == 0
    out = capsys.readouterr().out
    assert "HY001" not in out and "Found" not in out


def test_missing_path_exit_2_others_linted(proj, fake_linter, capsys):
    assert main(["lint", "nope.py", "m.py"]) == 2
    cap = capsys.readouterr()
    assert "error: path does not exist: nope.py" in cap.err and "HY001" in cap.out


def test_each_format_parses(proj, fake_linter, capsys):
    main(["lint", "--output-format", "json", "m.py"])
    data = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in data] == ["HY001", "HY006"]
    main(["lint", "--output-format", "sarif", "."])
    doc = json.loads(capsys.readouterr().out)
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["HY001", "HY006"]
    main(["lint", "--output-format", "github", "m.py"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("::error title=ast-hybrid (HY001),file=m.py,line=2,col=5")
    assert lines[1].startswith("::notice ")


def test_config_output_format_target_and_bad_config(proj, fake_linter, capsys, monkeypatch):
    (proj / "pyproject.toml").write_text('[tool.ast-hybrid]\noutput-format = "json"\nignore = ["HY006"]\n')
    main(["lint", "m.py"])
    assert [d["code"] for d in json.loads(capsys.readouterr().out)] == ["HY001"]
    seen = []
    import ast_hybrid.linter as linter
    monkeypatch.setattr(linter, "check_source", lambda src, target: seen.append(target) or [])
    (proj / "pyproject.toml").write_text('[tool.ast-hybrid]\ntarget = "mxnet"\n')
    main(["lint", "m.py"])
    main(["lint", "--target", "jax", "m.py"])
    main(["lint", "--isolated", "m.py"])
    assert seen == ["mxnet", "jax", "jax"]
    (proj / "pyproject.toml").write_text('[tool.ast-hybrid]\nbogus = 1\n')
    assert main(["lint", "m.py"]) == 2
    assert "unknown key" in capsys.readouterr().err


def test_fix_statistics_diff(proj, fake_linter, capsys):
    assert main(["lint", "--statistics", "m.py"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == "1\tHY001\t[*] inplace-augmented-assignment"
    assert main(["lint", "--diff", "m.py"]) == 1
    assert "+    x = x + 1" in capsys.readouterr().out and (proj / "m.py").read_text() == MODEL
    assert main(["lint", "--fix", "m.py"]) == 0   # only the note remains
    out = capsys.readouterr().out
    assert "1 fixed, 0 remaining" in out
    fixed = (proj / "m.py").read_text()
    assert fixed == MODEL.replace("x += 1", "x = x + 1")
    assert main(["lint", "--fix", "m.py"]) == 0 and (proj / "m.py").read_text() == fixed


def test_concise_and_statistics_formats(proj, fake_linter, capsys):
    assert main(["lint", "--output-format", "concise", "m.py"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["m.py:2:5: HY001 [*] in-place `+=` on tensor `x`",
                       "m.py:3:5: HY006 note: " + out[1].split("note: ", 1)[1], ""]
    assert out[3] == "Found 1 error."
    assert main(["lint", "--statistics", "--output-format", "json", "m.py"]) == 1
    stats = json.loads(capsys.readouterr().out)
    assert [(r["code"], r["count"], r["fixable"]) for r in stats] == [("HY001", 1, True), ("HY006", 1, False)]
    assert main(["lint", "--statistics", "--output-format", "github", "m.py"]) == 2
    assert "--statistics cannot be written as github" in capsys.readouterr().err
    (proj / "pyproject.toml").write_text('[tool.ast-hybrid]\noutput-format = "concise"\n')
    assert main(["lint", "m.py"]) == 1
    assert capsys.readouterr().out.startswith("m.py:2:5: HY001 [*] in-place `+=` on tensor `x`\nm.py:3:5")


def test_internal_error_is_a_diagnostic(proj, monkeypatch, capsys):
    import ast_hybrid.linter as linter

    def boom(src, target):
        raise KeyError("oops")
    monkeypatch.setattr(linter, "check_source", boom)
    assert main(["lint", "m.py", "clean.py"]) == 2
    out = capsys.readouterr().out
    assert out.count("HY999") == 2 and "Traceback" not in out


def test_bad_inputs_never_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "undecodable.py").write_bytes(b"x = 1\ny = '\xff'\n")
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "notpy.py").write_text("<html><body>hi</body></html>\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "big.py").write_text("x = 1\n" * 10_000)
    (tmp_path / "sideeffect.py").write_text(
        f"open({str(tmp_path / 'IMPORTED')!r}, 'w').write('x')\n")
    assert main(["lint", "--isolated", "."]) == 1
    out = capsys.readouterr().out
    assert "undecodable.py:2:6: HY020 cannot decode byte 0xff" in out
    assert "notpy.py:1:1: HY020" in out and "nul.py:1:" in out
    assert "Traceback" not in out and "Found 3 errors." in out
    assert not (tmp_path / "IMPORTED").exists()


def test_rules_and_rule(capsys):
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert all(code in out for code in ("HY001", "HY012", "HY020", "HY033"))
    assert main(["rule", "hy001"]) == 0
    assert "inplace-augmented-assignment (HY001)" in capsys.readouterr().out
    assert main(["rule", "HY777"]) == 2
    assert "unknown rule code" in capsys.readouterr().err
    assert main(["lint", "--output-format", "xml"]) == 2
    assert main(["lint", "--select", "HY0,XY9", "."]) == 2
    assert "unknown rule selector(s): XY9" in capsys.readouterr().err
    assert main([]) == 2


def _run(args, cwd):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def test_subprocess_end_to_end_and_no_jax(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("def f(:\n")
    done = _run(["-m", "ast_hybrid", "lint", "--isolated", str(f)], tmp_path)
    assert done.returncode == 1 and "HY020" in done.stdout and "Traceback" not in done.stderr
    code = ("import sys; from ast_hybrid.cli import main; rc = main(['lint', '--isolated', %r]); "
            "assert 'jax' not in sys.modules, sorted(sys.modules); "
            "sys.exit(rc)" % str(ROOT / "ast_hybrid" / "common" / "render.py"))
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr


def test_stdin(fake_linter, monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO(MODEL))
    assert main(["lint", "--isolated", "--stdin-filename", "x/m.py", "-"]) == 1
    assert capsys.readouterr().out.startswith("x/m.py:2:5: HY001 [*]")
    monkeypatch.setattr("sys.stdin", io.StringIO(MODEL))
    assert main(["lint", "--isolated", "--fix", "-"]) == 0
    assert capsys.readouterr().out == MODEL.replace("x += 1", "x = x + 1")


def test_fix_on_unwritable_folder_exit_2(proj, fake_linter, capsys):
    if os.geteuid() == 0:
        # root ignores permissions: make the write fail another way
        (proj / "m.py.ast-hybrid-tmp").mkdir()
    else:
        proj.chmod(0o555)
    try:
        assert main(["lint", "--fix", "m.py"]) == 2
    finally:
        proj.chmod(0o755)
    cap = capsys.readouterr()
    assert "error: cannot fix m.py" in cap.err and "HY001" in cap.out
    assert (proj / "m.py").read_text() == MODEL
