"""``python -m ast_hybrid.conformance.d2l`` (issue 30 item 2), on a chapter laid out as the d2l book's sources
(an ``index.md`` table of contents, notebooks of tagged ```` ```{.python .input} ```` cells) holding notebooks of
our own: which cells MXNet's edition runs, a class defined in a cell hybridized from its source, a download
served from the local stand-ins, numbers that move with the seed against those that must not, and the
first error of a notebook that stops."""

from __future__ import annotations

import json

import pytest

from ast_hybrid.conformance import d2l

pytestmark = [pytest.mark.oracle, pytest.mark.processes]

INDEX = """# Toy
```toc
:maxdepth: 2

learns
stops
```
"""

LEARNS = '''# A notebook

```{.python .input}
%matplotlib inline
from mxnet import autograd, gluon, init, np, npx
from mxnet.gluon import nn
import requests
npx.set_np()
```

```{.python .input}
#@tab pytorch
import torch
```

```{.python .input}
#@tab all
text = requests.get('https://d2l-data.s3-accelerate.amazonaws.com/timemachine.txt').content.decode()
print(text.splitlines()[0])
```

```{.python .input}
class Net(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(8, activation='relu')
        self.out = nn.Dense(1)

    def hybrid_forward(self, F, x):
        return self.out(F.np.tanh(self.hidden(x)))

net = Net()
net.initialize(init.Normal(0.5))
net.hybridize()
X = np.arange(24).reshape(6, 4) / 24
y = X.sum(axis=1, keepdims=True)
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
loss = gluon.loss.L2Loss()
for epoch in range(3):
    with autograd.record():
        l = loss(net(X), y)
    l.backward()
    trainer.step(6)
    print(f'epoch {epoch + 1}, loss {float(l.mean()):f}')
```

```{.python .input}
X.sum(), X.shape
```
'''

STOPS = '''```{.python .input}
from mxnet import np, npx
npx.set_np()
print(np.ones((2, 3)).sum())
```

```{.python .input}
import mxnet
mxnet.gluon.utils.download('https://example.org/not-here.zip')
```

```{.python .input}
print('never reached')
```
'''


def test_mxnet_cells_are_the_mxnet_editions():
    cells = d2l.mxnet_cells(LEARNS)
    assert len(cells) == 4
    assert not any("torch" in c for c in cells)
    assert not any("%matplotlib" in c for c in cells)
    assert cells[1].startswith("#@tab all")


def test_compare_holds_fixed_numbers_and_bounds_the_moving_ones():
    def log(*outputs):
        return [{"output": o} for o in outputs]

    mxnet0 = log("shape (2, 3)\n", "loss 0.50, acc 0.80\n", "took 1.5 sec\n")
    mxnet1 = log("shape (2, 3)\n", "loss 0.52, acc 0.79\n", "took 0.7 sec\n")
    assert d2l.compare(mxnet0, mxnet1, log("shape (2, 3)\n", "loss 0.55, acc 0.85\n", "took 9 sec\n")) is None
    assert "cell 0" in d2l.compare(mxnet0, mxnet1, log("shape (3, 2)\n", "loss 0.5, acc 0.8\n", "x\n"))
    assert "cell 1" in d2l.compare(mxnet0, mxnet1, log("shape (2, 3)\n", "loss 2.30, acc 0.10\n", "x\n"))
    assert "numbers printed" in d2l.compare(mxnet0, mxnet1, log("shape (2, 3)\n", "loss 0.5\n", "x\n"))
    timed = log("71.7\n"), log("73.2\n"), log("150.5\n")          # a cell printing a timer's reading
    assert "cell 0" in d2l.compare(*timed)
    assert d2l.compare(*timed, ["timer.start()\nfor i in range(9): pass\ntimer.stop()"]) is None


def test_a_chapter_of_notebooks_on_both_sides(tmp_path):
    book = tmp_path / "book"
    chapter = book / "chapter_toy"
    chapter.mkdir(parents=True)
    (chapter / "index.md").write_text(INDEX)
    (chapter / "learns.md").write_text(LEARNS)
    (chapter / "stops.md").write_text(STOPS)
    assert [p.stem for p in d2l.notebooks(book, "toy")] == ["learns", "stops"]

    work = tmp_path / "work"
    sides = d2l._sides(work)
    learns = d2l.run_notebook(chapter / "learns.md", work, sides, timeout=600)
    assert learns["mxnet_runs"], learns["mxnet0"]
    assert learns["ours_runs"], learns["ours"]
    assert learns["agrees"], learns.get("difference")
    records = [json.loads(line) for line in (work / "ours" / "logs" / "toy.learns.jsonl").read_text().splitlines()]
    assert records[1]["output"].startswith("The Time Machine")          # served from the local stand-in
    assert "epoch 3, loss" in records[2]["output"]
    assert records[3]["output"].strip().startswith("(array(")              # the cell's value, shown

    stops = d2l.run_notebook(chapter / "stops.md", work, sides, timeout=600)
    assert not stops["mxnet_runs"] and not stops["ours_runs"]
    assert stops["ours"]["cells_run"] == 2 and stops["ours"]["error"].startswith("cell 1: ")
    assert "not available in ast-hybrid" in stops["ours"]["error"]
    assert stops["cause"] == "not available"
    assert "| toy/stops | 3 | no | no | no |" in d2l.markdown([learns, stops])


def test_library_coverage_counts_what_agreeing_notebooks_ran():
    rows = [{"agrees": True, "d2l_used": ["Timer", "sgd"]}, {"agrees": False, "d2l_used": ["train_ch3"]},
            {"agrees": True, "d2l_used": ["sgd", "not_in_the_library"]}]
    passed, rest = d2l.coverage(rows, ["Timer", "sgd", "train_ch3", "Animator"])
    assert passed == ["Timer", "sgd"] and rest == ["Animator", "train_ch3"]
