"""Paths the author marked imperative-only become one HY015 note at the guard (issue 34).

The shapes are the real trees': gluoncv2's SuperPointNet (``if self.hybridizable: return pts, confs`` and
the NumPy-style loop after it; ``assert use_batch_box_nms or not hybridizable`` in the constructor and the
``else`` of ``if self.use_batch_box_nms:``; ``self.batch_size if self.batch_size is not None else
x.shape[0]``), GluonTS-style ``if F is mx.nd:`` branches, ``isinstance(x, nd.NDArray)`` guards."""

import json

import pytest

from ast_hybrid.common.diagnostics import Severity
from ast_hybrid.common.render import render_json, render_sarif, render_text
from ast_hybrid.common.source import SourceFile
from ast_hybrid.linter import check_source
from lint_helpers import check, codes, model

DETECTOR = '''
from mxnet import nd
from mxnet.gluon import HybridBlock


class SPDetector(HybridBlock):
    def __init__(self, batch_size=1, use_batch_box_nms=True, hybridizable=True, **kwargs):
        super().__init__(**kwargs)
        assert ((batch_size is not None) or not hybridizable)
        assert (use_batch_box_nms or not hybridizable)
        self.batch_size = batch_size
        self.use_batch_box_nms = use_batch_box_nms
        self.hybridizable = hybridizable

    def hybrid_forward(self, F, x):
        batch_size = self.batch_size if self.batch_size is not None else x.shape[0]
        heatmap = F.softmax(x, axis=1)
        if self.use_batch_box_nms:
            confs = F.contrib.box_nms(heatmap)
            if self.hybridizable:
                return confs
            confs_list = []
            counts = (confs > 0).sum(axis=1)
            for i in range(batch_size):
                count_i = int(counts[i].asscalar())
                confs_list.append(confs[i])
            return confs_list
        else:
            out = []
            for i in range(batch_size):
                h = heatmap[i]
                if h.sum() > 0:
                    h[0] = 0
                out.append(h.asnumpy())
            return out
'''


def _notes(found):
    return {d.span.line: d for d in found if d.code == "HY015"}


@pytest.mark.parametrize("target", ["jax", "mxnet"])
def test_each_imperative_only_path_is_one_note(target):
    found = check(DETECTOR, target)
    assert {d.code for d in found} == {"HY015"}          # nothing else: the default configuration hybridizes
    notes = _notes(found)
    assert all(d.severity is Severity.NOTE for d in notes.values())
    after = notes[20]               # `if self.hybridizable: return confs`: what follows
    assert after.message == ("imperative-only path when `self.hybridizable` is False: 3 constructs here would "
                             "fail under hybridize()")
    assert [(s.line, label.split()[0]) for s, label in after.related] == [(25, "HY004"), (25, "HY011"), (26, "HY011")]
    other = notes[18]               # the else of `if self.use_batch_box_nms:`, tied by the constructor's assert
    assert "`self.use_batch_box_nms` is False (the constructor asserts `use_batch_box_nms or not hybridizable`)" \
        in other.message
    assert [label.split()[0] for _, label in other.related] == ["HY011", "HY010", "HY002", "HY004"]
    # `self.batch_size if self.batch_size is not None else x.shape[0]`: HY008 exists on target mxnet only
    assert (16 in notes) == (target == "mxnet")
    if target == "mxnet":
        assert "`self.batch_size` is None" in notes[16].message and len(notes[16].related) == 1


def test_collapsing_loses_nothing():
    """The notes' constructs are exactly what is reported without notes (the transpiler's view)."""
    src = SourceFile.from_text(DETECTOR, "m.py")
    for target in ("jax", "mxnet"):
        each = {(d.code, d.span) for d in check_source(src, target=target, imperative_notes=False)}
        listed = {(label.split()[0], span) for d in check_source(src, target=target) for span, label in d.related}
        assert each == listed and len(each) == {"jax": 7, "mxnet": 8}[target]


def test_the_notes_related_locations_in_json_sarif_and_text():
    found = check(DETECTOR, "mxnet")
    note = _notes(found)[20]
    obj = next(o for o in json.loads(render_json(found)) if o["location"]["row"] == 20)
    assert obj["code"] == "HY015" and obj["severity"] == "note"
    assert [(r["location"]["row"], r["message"].split()[0]) for r in obj["related"]] == \
        [(s.line, label.split()[0]) for s, label in note.related]
    run = json.loads(render_sarif(found))["runs"][0]
    res = next(r for r in run["results"] if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 20)
    assert res["level"] == "note"
    assert [r["physicalLocation"]["region"]["startLine"] for r in res["relatedLocations"]] == [25, 25, 26]
    assert res["relatedLocations"][0]["message"]["text"].startswith("HY004 ")
    text = render_text([note])
    assert "= note: HY004 `.asscalar()` copies a tensor to the host (m.py:25:31)" in text


def test_noqa_on_the_guard_or_on_a_construct():
    lines = DETECTOR.splitlines()
    lines[19] += "  # noqa: HY015"                  # the guard `if self.hybridizable:` (line 20)
    assert 20 not in _notes(check("\n".join(lines), "jax"))
    lines = DETECTOR.splitlines()
    lines[24] += "  # noqa: HY004"                  # one construct of the path: not listed
    note = _notes(check("\n".join(lines), "jax"))[20]
    assert [label.split()[0] for _, label in note.related] == ["HY011", "HY011"]


def test_code_outside_the_path_is_reported_as_always():
    text = DETECTOR.replace("        heatmap = F.softmax(x, axis=1)\n",
                            "        heatmap = F.softmax(x, axis=1)\n        z = heatmap.asnumpy()\n")
    found = check(text, "jax")
    assert [(d.code, d.span.line) for d in found if d.code != "HY015"] == [("HY004", 18)]


@pytest.mark.parametrize("guard", ["if not self.hybridizable:\n    {body}",
                                   "if self._is_hybridizable:\n    pass\nelse:\n    {body}"])
def test_negated_flag_and_else_branch(guard):
    body = "h = x.asnumpy()"
    text = model(guard.format(body=body) + "\nreturn x", params="x")
    found = check(text, "jax")
    assert [d.code for d in found] == ["HY015"] and len(found[0].related) == 1


def test_a_flag_that_does_not_say_hybridizable_is_not_a_guard():
    # `if self.training: return x` is a mode, not the author marking a path imperative-only
    found = codes(model("if self.training:\n    return x\nh = x.asnumpy()\nreturn h", params="x"), "jax")
    assert found == ["HY004"]


@pytest.mark.parametrize("guard", ["F is nd", "isinstance(x, nd.NDArray)"])
def test_nd_guards_collect_what_they_still_report(guard):
    # HY004 is right on NDArrays (silent under an nd guard); HY002 is reported whatever F is: into the note
    text = model(f"if {guard}:\n    v = x.asnumpy()\n    x[0] = 1\nreturn x", params="x")
    found = check(text, "jax")
    assert [d.code for d in found] == ["HY015"]
    (note,) = found
    assert note.message.startswith(f"imperative-only path (only when `{guard}`): 1 construct")
    assert [label.split()[0] for _, label in note.related] == ["HY002"]


def test_the_transpiler_still_sees_each_construct():
    # the transpiler refuses HY001-HY004 where they are traced: it asks without notes
    src = SourceFile.from_text(DETECTOR, "m.py")
    assert "HY004" in {d.code for d in check_source(src, target="jax", imperative_notes=False)}
