"""`# noqa` as flake8/ruff: bare, with codes (any case, commas/spaces), on the first line."""

from lint_helpers import codes, model


def test_bare_noqa_suppresses_everything_on_the_line():
    assert codes(model("x += y  # noqa\nreturn x")) == []


def test_noqa_with_codes_only_those():
    src = model("x[x.sum() > 0] += y  # noqa: HY001\nz = x\nz += 1  # noqa: hy002, HY001\nreturn x")
    assert codes(src) == ["HY002"]


def test_noqa_other_code_keeps_finding():
    assert codes(model("x += y  # noqa: HY004\nreturn x")) == ["HY001"]


def test_noqa_space_separated_and_no_space_after_hash():
    assert codes(model("x += y  #noqa:HY004 HY001\nreturn x")) == []


def test_noqa_in_a_string_does_not_count():
    assert codes(model("x += y; s = '# noqa'\nreturn x")) == ["HY001"]


def test_multiline_statement_noqa_goes_on_first_line():
    first = model("x += F.relu(  # noqa: HY001\n    y)\nreturn x")
    last = model("x += F.relu(\n    y)  # noqa: HY001\nreturn x")
    assert codes(first) == []
    assert codes(last) == ["HY001"]
