"""Conformance report: GluonCV 0.10.5 / GluonNLP 0.10.0 models, unmodified, through ``import mxnet`` = ast-hybrid,
against real MXNet 1.9.1 (issue 12 item 5).

    python -m ast_hybrid.conformance [--family F] [--only PATTERN] [--limit N] [--timeout S] [--jobs J]
                                     [--resume] [--json PATH] [--markdown PATH] [--stand-ins]

For each model (GluonCV's ``model_zoo.get_model_list()``, read in MXNet's process, then ``_models.NLP_MODELS``):

1. MXNet's side (``_sides.mxnet_side``, the oracle's Python with ``PYTHONPATH = oracle.gluon_pkgs()``): build
   with ``pretrained=False`` (and ``pretrained_base=False`` where the constructor takes it), initialise with
   ``_models.INIT`` (He-scaled Gaussian: outputs spread, scores do not tie), run once, randomise BatchNorm's
   running statistics, run the input, save parameters / inputs / outputs, time plain and hybridized.
   The input: the first shape of the family's row in ``_models.SIZES`` that MXNet runs (smallest first:
   classification 32x32 up to 299, segmentation 64 up (told its crop_size), pose 64x48 up, detection 128 up
   (SSD at its own size; *_custom given classes; initialisers under which scores do not tie), action 32 up
   (3D nets N,C,T,H,W from 4x32x32, SlowFast its slow+fast frames), GluonNLP: 5x2 word ids, BERT-like 1x8
   tokens, ELMo 2x3x50 characters).  A model MXNet itself cannot build or run on CPU is reported as such ("mxnet" column).
2. Our side (``_sides.our_side``, a child process per model: isolation and ``--timeout``): ``import mxnet`` is
   ``ast_hybrid.mxnet`` (``_import``), the unmodified package is imported, the same constructor built,
   MXNet's file loaded, run op by op and hybridized; every output array must be within 1e-4 of its scale
   (max |ref|) of MXNet's.  Time ratio: ours hybridized / MXNet hybridized (best of 3 after a warm call;
   MXNet runs with OMP_NUM_THREADS=1 and its NaiveEngine, as the oracle does, so the ratio is no benchmark;
   op by op where MXNet's own hybridized call fails, e.g. GluonNLP's LSTM LMs call nd.Dropout in hybrid_forward).
   ILL-CONDITIONED: MXNet's side also runs the input times (1 + 1e-6); where its own output moves more than
   1e-4 of its scale (deep SE/attention nets at this initialisation: se_resnet152_v1 moves 0.49), a difference
   of at most 100 times that is reported as "ill-conditioned", not as a match and not as a failure of ours.
3. A row: builds, matches plain, matches hybridized, worst error, time ratio, and the first cause of a failure
   (``Type: message [at innermost frame in gluoncv/, gluonnlp/ or ast_hybrid/]``).

Rows go to a JSON file (``--json``, default bench/results/conformance.json; ``--resume`` keeps rows already
there and runs the rest), the table to stdout and to ``--markdown`` (default bench/results/conformance.md):
models not run are listed as not run.

A tool on top of the house: may import anything of ast_hybrid (``testing``'s oracle included); nothing imports it.
"""

from ._report import main, run_model, table, totals  # noqa: F401
