"""Every switch in one place (``ast_hybrid/core/settings.py``): its values, its errors, its table, its command."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ast_hybrid.core import settings
from ast_hybrid.core.settings import SETTINGS, SettingError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_setting_takes_its_values_and_refuses_others(setting):
    name = setting.name
    assert settings.get(name, {}) == setting.default
    assert settings.get(name, {name: "  "}) == setting.default          # empty is unset
    for value, spellings in setting.values.items():
        for spelling in spellings:
            assert settings.get(name, {name: spelling.upper()}) == value
    if setting.values:
        with pytest.raises(SettingError) as err:
            settings.get(name, {name: "sometimes"})
        message = str(err.value)
        assert name in message and "'sometimes'" in message
        assert all("/".join(s) in message for s in setting.values.values())     # the values it takes
    elif isinstance(setting.default, int):      # a number: another text is an error naming it
        assert settings.get(name, {name: "7"}) == 7
        with pytest.raises(SettingError, match=f"{name}='/some/where' is not a value it takes: a whole number"):
            settings.get(name, {name: "/some/where"})
    else:
        assert settings.get(name, {name: "/some/where"}) == "/some/where"


def test_every_variable_the_code_and_docs_name_is_declared():
    named = set()
    for path in [*(ROOT / "ast_hybrid").rglob("*.py"), *(ROOT / "passes").rglob("*.py"), *(ROOT / "docs").rglob("*.md"),
                 ROOT / "README.md", ROOT / "conftest.py", *(ROOT / "tests").rglob("*.py")]:
        named |= set(re.findall(r"\bAST_HYBRID_[A-Z][A-Z0-9_]*\b", path.read_text(errors="replace")))
    assert named - {s.name for s in SETTINGS} == set()


def test_the_docs_table_is_the_declarations():
    text = (ROOT / "docs" / "performance.md").read_text()
    assert settings.markdown_table() in text


def test_ast_hybrid_config_prints_every_setting_and_names_a_bad_value(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "AST_HYBRID_HOIST": "1", "AST_HYBRID_WEIGHT_FIRST": "always"}
    out = subprocess.run([sys.executable, "-m", "ast_hybrid", "config"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stdout.splitlines()
    for s in SETTINGS:
        assert any(line.startswith(s.name + " ") for line in lines), s.name
    assert any(line.startswith("AST_HYBRID_HOIST ") and line.split()[-1] == "on" for line in lines)
    assert "AST_HYBRID_WEIGHT_FIRST='always' is not a value it takes" in out.stdout
    good = subprocess.run([sys.executable, "-m", "ast_hybrid", "config", "--markdown"], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert good.returncode == 0 and good.stdout.strip() == settings.markdown_table()


def test_a_bad_value_stops_the_program_that_reads_it(monkeypatch):
    """A typo in a switch is the user's error at the call that reads it, naming the variable, not "on"."""
    from ast_hybrid import nd
    from ast_hybrid.gluon import nn

    monkeypatch.setenv("AST_HYBRID_CHANNEL_LAST", "of")
    net = nn.HybridSequential()
    net.add(nn.Conv2D(2, 3))
    net.initialize()
    net.hybridize()
    with pytest.raises(SettingError, match="AST_HYBRID_CHANNEL_LAST='of'"):
        net(nd.array(np.ones((1, 1, 5, 5), "float32")))
    monkeypatch.setenv("AST_HYBRID_CHANNEL_LAST", "off")
    net.hybridize()
    assert net(nd.array(np.ones((1, 1, 5, 5), "float32"))).shape == (1, 2, 3, 3)
