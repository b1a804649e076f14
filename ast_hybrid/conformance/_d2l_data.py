"""Small local stand-ins for the files the d2l notebooks download (``d2l.py`` writes them before a run).

Same names and formats as the real files (the d2l library and MXNet's readers parse them unchanged), a
fraction of their size, made from a fixed seed so that both sides of a run read the same bytes:

- Fashion-MNIST's four ``*-ubyte.gz`` files under ``$MXNET_HOME/datasets/fashion-mnist`` (``TRAIN``/``TEST``
  images of 28x28, each class a pattern of its own plus noise: the notebooks' classifiers learn);
- ``timemachine.txt`` (lines of words: one batch of ``32 x 35`` characters an epoch), ``fra-eng.zip``
  (``fra-eng/fra.txt``, tab-separated pairs), ``airfoil_self_noise.dat`` (1503 rows of 6 tab-separated
  numbers, the last a noisy linear function of the others), ``kaggle_house_pred_{train,test}.csv`` (numeric
  and categorical columns, some missing values).
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zipfile
from pathlib import Path

import numpy as np

TRAIN, TEST = 1280, 256
# the RNN chapters train 500 epochs: about 1,900 characters, one batch of 32 x 35 an epoch
TIME_MACHINE_LINES = 36
# seq2seq trains 300 epochs: three batches of 64 an epoch
NMT_PAIRS = 150
_WORDS = ("the time machine by wells traveller was expounding a recondite matter to us his grey eyes shone "
          "and twinkled usually pale face flushed animated fire burned brightly soft radiance of the "
          "incandescent lights in lilies silver caught bubbles that flashed passed our glasses").split()
_FRENCH = {w: w[::-1] + "e" for w in _WORDS}


def _idx(path: Path, array: np.ndarray, magic: int) -> None:
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in array.shape))
        f.write(array.astype(np.uint8).tobytes())


def fashion_mnist(folder: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    patterns = rng.uniform(0, 1, (10, 28, 28)) > 0.6
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, n in (("train", TRAIN), ("t10k", TEST)):
        labels = rng.integers(0, 10, n)
        images = patterns[labels] * 200.0 + rng.uniform(0, 55, (n, 28, 28))
        _idx(folder / f"{prefix}-images-idx3-ubyte.gz", images, 2051)
        _idx(folder / f"{prefix}-labels-idx1-ubyte.gz", labels, 2049)


def downloads(folder: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["The Time Machine, by H. G. Wells [1898]", ""]
    lines += [" ".join(rng.choice(_WORDS, rng.integers(4, 12))).capitalize() + "." for _ in range(TIME_MACHINE_LINES)]
    (folder / "timemachine.txt").write_text("\n".join(lines) + "\n")

    pairs = []
    for _ in range(NMT_PAIRS):
        words = list(rng.choice(_WORDS, rng.integers(1, 6)))
        pairs.append(" ".join(words).capitalize() + ".\t" + " ".join(_FRENCH[w] for w in words).capitalize() + " !")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("fra-eng/fra.txt", "\n".join(pairs) + "\n")
    (folder / "fra-eng.zip").write_bytes(buf.getvalue())

    x = rng.uniform(0, 1, (1503, 5))
    y = x @ np.array([1.5, -2.0, 0.7, 3.0, -1.0]) + rng.normal(0, 0.1, 1503) + 120
    (folder / "airfoil_self_noise.dat").write_text(
        "\n".join("\t".join(f"{v:.6g}" for v in row) for row in np.column_stack([x, y])) + "\n")

    for name, n, first in (("train", 200, 1), ("test", 100, 201)):
        rows = ["Id,MSSubClass,MSZoning,LotFrontage,LotArea,Street,YearBuilt,SaleType,SaleCondition"
                + (",SalePrice" if name == "train" else "")]
        for i in range(n):
            area = int(rng.integers(2000, 20000))
            year = int(rng.integers(1900, 2010))
            frontage = "NA" if rng.uniform() < 0.1 else str(int(rng.integers(30, 120)))
            row = [str(first + i), str(int(rng.choice([20, 60, 120]))), str(rng.choice(["RL", "RM", "FV"])), frontage,
                   str(area), str(rng.choice(["Pave", "Grvl"])), str(year), str(rng.choice(["WD", "New"])),
                   str(rng.choice(["Normal", "Abnorml"]))]
            if name == "train":
                row.append(str(int(20000 + area * 8 + (year - 1900) * 900 + rng.normal(0, 5000))))
            rows.append(",".join(row))
        (folder / f"kaggle_house_pred_{name}.csv").write_text("\n".join(rows) + "\n")


def write(folder: Path, mxnet_home: Path) -> None:
    """The download stand-ins into ``folder``, Fashion-MNIST into ``mxnet_home``."""
    downloads(folder)
    fashion_mnist(mxnet_home / "datasets" / "fashion-mnist")
    os.makedirs(mxnet_home, exist_ok=True)
