"""Bad or odd input never gives a traceback, and linting never imports or runs the file."""

import subprocess
import sys
from pathlib import Path

import pytest

from ast_hybrid.linter import check_source
from ast_hybrid.linter.api import lint
from ast_hybrid.common.source import SourceFile
from lint_helpers import codes

ROOT = Path(__file__).resolve().parents[2]


def test_empty_and_blank_files():
    assert codes("") == []
    assert codes("\n\n   \n# just a comment\n") == []


@pytest.mark.parametrize("text", [
    "#!/bin/sh\necho hybrid_forward $1\nfi\n",
    "{\"forward\": [1, 2, }\n",
    "def hybrid_forward(self, F, x:\n    return x\n",
    "class N(HybridBlock):\n    def forward(self, x)\n        return x\n",
    "\tdef forward(self):\n  return 1\n",
])
def test_non_python_is_hy020_with_position(text):
    [d] = check_source(SourceFile.from_text(text, "bad.py"))
    assert d.code == "HY020" and d.span is not None and d.span.line >= 1


def test_undecodable_and_null_bytes(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"x = '\xff\xfe'\n")
    (tmp_path / "nul.py").write_bytes(b"def forward(self):\n    return 1\x00\n")
    (tmp_path / "ok.py").write_text("class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n"
                                    "        x += 1\n        return x\n")
    found = lint([tmp_path], respect_config=False)
    by_file = {Path(d.path).name: d.code for d in found}
    assert by_file == {"latin.py": "HY020", "nul.py": "HY020", "ok.py": "HY001"}


def test_ten_thousand_line_file():
    blocks = []
    for i in range(1000):  # 10 lines each
        blocks.append(f"class N{i}(HybridBlock):\n    def hybrid_forward(self, F, x, y):\n"
                      f"        z = F.relu(x)\n        z += y\n        if z.sum() > {i}:\n"
                      f"            z = z * 2\n        n = x.shape[0]\n        self.last = z + self.last\n"
                      f"        return z\n\n")
    text = "".join(blocks)
    assert text.count("\n") == 10000
    found = check_source(SourceFile.from_text(text, "big.py"), target="mxnet")
    assert [d.code for d in found].count("HY001") == 1000
    assert {d.code for d in found} == {"HY001", "HY008", "HY010", "HY012"}


def test_deep_nesting_is_not_a_traceback():
    expr = "(" * 90 + "x" + ")" * 90
    assert codes(f"class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        return {expr}\n") == []


@pytest.mark.parametrize("snippet", [
    "async def forward(self, x):\n    return x",
    "class A:\n    class B(HybridBlock):\n        def hybrid_forward(self, F, x):\n"
    "            return [y async for y in x]",
    "forward = lambda self, x: x",
    "def hybrid_forward(F, x):\n    return x",     # a module-level function, not a method
    "class N(HybridBlock):\n    def hybrid_forward():\n        return 1",
    "class N(HybridBlock):\n    def hybrid_forward(self, F, *, x):\n"
    "        global g\n        g += x\n        return x",
    "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n"
    "        nonlocal_ = [x for x in x if (y := x)]\n        return x",
    "class N(N):\n    def forward(self, x):\n        return super(N, self).forward(x)",
    "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        return self.hybrid_forward(F, x)",
    "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        try:\n            pass\n"
    "        except* ValueError as e:\n            pass\n        return x",
    "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n"
    "        with F.foo() as (a, b):\n            del a\n        return x",
])
def test_weird_valid_syntax_never_raises(snippet):
    for target in ("jax", "mxnet"):
        found = check_source(SourceFile.from_text(snippet + "\n", "w.py"), target=target)
        assert all(d.code != "HY999" for d in found)


def test_linting_never_imports_or_executes_the_file(tmp_path):
    marker = tmp_path / "MARKER"
    victim = tmp_path / "victim.py"
    victim.write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n"
        "import mxnet\n"
        "class N(mxnet.gluon.HybridBlock):\n"
        f"    def hybrid_forward(self, F, x=open({str(marker)!r}, 'w')):\n"
        "        x += 1\n        return x\n")
    found = lint(str(victim), respect_config=False, target="mxnet")
    assert [d.code for d in found] == ["HY001"]
    # and through the CLI, in a fresh process
    done = subprocess.run([sys.executable, "-m", "ast_hybrid", "lint", "--isolated", str(victim)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert not marker.exists()


def test_lint_path_does_not_import_jax():
    code = ("import sys, ast_hybrid\n"
            "ast_hybrid.lint('class N(HybridBlock):\\n def hybrid_forward(self, F, x):\\n  x += 1\\n  return x\\n')\n"
            "print('jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_internal_error_in_one_function_is_hy999_and_others_still_checked(monkeypatch):
    from ast_hybrid.linter import checks

    real = checks.Checker.visit_Assert

    def boom(self, node):
        raise KeyError("simulated bug")

    monkeypatch.setattr(checks.Checker, "visit_Assert", boom)
    text = ("class A(HybridBlock):\n    def hybrid_forward(self, F, x):\n        assert x\n        return x\n"
            "class B(HybridBlock):\n    def hybrid_forward(self, F, x):\n        x += 1\n        return x\n")
    found = check_source(SourceFile.from_text(text, "m.py"))
    assert [(d.code, d.span.line) for d in found] == [("HY999", 2), ("HY001", 7)]
    assert "simulated bug" in found[0].message
    monkeypatch.setattr(checks.Checker, "visit_Assert", real)
