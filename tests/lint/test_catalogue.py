"""The rule catalogue is complete enough for every producer to read it."""

import string

import pytest

from ast_hybrid.common.rules import RULES, TARGETS, message


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_code_has_wording_and_a_severity_somewhere(code):
    rule = RULES[code]
    assert rule.messages, f"{code} has no message"
    assert any(rule.severity(t) is not None for t in TARGETS)
    assert bool(rule.fixes) == (rule.fix_title is not None)
    for variant, m in rule.messages.items():
        # a variant reported on fewer targets names only targets the rule has a severity for
        assert m.targets is None or (m.targets and all(rule.severity(t) is not None for t in m.targets))
        fields = {f for t in (m.text, m.help or "") for _, f, _, _ in string.Formatter().parse(t) if f}
        text, help = message(code, variant, **{f: f"<{f}>" for f in fields})
        assert "{" not in text and "{" not in (help or ""), (code, variant)


def test_the_internal_error_is_an_entry_like_any_other():
    assert [c for c, r in RULES.items() if r.internal] == ["HY999"]
    assert RULES["HY999"].what and RULES["HY999"].summary and not RULES["HY999"].selectable
    with pytest.raises(KeyError, match="HY001 has no message 'nope'"):
        message("HY001", "nope")
