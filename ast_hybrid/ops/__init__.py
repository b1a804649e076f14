"""MXNet's op namespace on jax/lax, organised by family (each module readable in one sitting):

- ``elemwise``: unary math, arithmetic, comparisons, broadcast_*/elemwise_*, clip, where, cast;
- ``reduce``: sum/mean/max/min/prod/norm, argmax/argmin, sort, topk;
- ``shape``: reshape (special codes), transpose, concat/stack/split, slice*, tile, repeat, flip,
  broadcast_to/like, pad;
- ``indexing``: x[key], take, pick, gather_nd, scatter_nd, one_hot, SequenceMask/Last/Reverse, diag;
- ``nn``: FullyConnected, Activation, LeakyReLU, softmax family, Dropout, Embedding, output layers;
- ``normalization``: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN;
- ``conv``: Convolution, Deconvolution, Pooling, UpSampling;
- ``rnn``: the fused RNN op;
- ``update``: the optimizer update operators (sgd_update, adam_update...: weight and states written in place);
- ``linalg``: dot, batch_dot, linalg.gemm/gemm2/potrf/...;
- ``creation``: array, zeros, ones, full, arange, linspace, eye;
- ``random``: uniform, normal, randint, multinomial, shuffle, seed;
- ``contrib``: BilinearResize2D, AdaptiveAvgPooling2D, foreach/while_loop/cond, ..., and re-exported from
  ``detection``: box_nms, box_iou, box_encode/decode, bipartite_matching, ROIPooling, ROIAlign,
  PSROIPooling;

Every op is one function (``_core.op``) that runs eagerly on concrete arrays
and inside a hybridized program on tracers.  ``F`` in ``hybrid_forward`` is
``ast_hybrid.nd``, which is this namespace plus the imperative helpers.

Each op is checked against MXNet 1.9.1 (``tests/ops``).  Where we differ, on purpose:

- ``F`` is ``nd`` in both modes, so a ``hybrid_forward`` branch on ``F is nd``
  takes its imperative side inside a compiled program too;
- integer inputs to float math are computed in float32 (MXNet: float64), and
  int64/float64 follow jax's ``jax_enable_x64`` (off: 32-bit; ``ast-hybrid run`` turns it on);
- slices and reshapes are copies (MXNet: views that alias their source);
- sparse arrays (``row_sparse``, ``csr``) are held dense, with MXNet's structure
  and storage types (``core/sparse.py``), not its memory savings;
- not available: ``pooling_convention='same'`` (MXNet 1.9.1 rejects it too),
  ``contrib.boolean_mask`` inside a compiled program (its size depends on the
  data), ``ROIAlign`` with an adaptive ``sample_ratio`` inside a compiled program;
- the RNN op's ``use_sequence_length``, ``projection_size`` and LSTM state
  clipping follow MXNet's GPU (cuDNN) build (its CPU build ignores the first
  and the last and refuses the projection);
- where MXNet reads out of bounds or returns garbage (a too-short BatchNorm
  gamma, ``reshape`` whose -1 does not divide, float16 FullyConnected on CPU)
  we raise a clear error or compute the result (``tests/ops``: DIVERGENT).

Besides the families: ``_core`` (what makes a function an op: eager, traced, recorded for autograd),
``param_shapes`` (the shapes of deferred parameters, per op), ``rng`` (the PRNG stream behind
``random``, Dropout and the initializers).

``custom``: MXNet's Python custom operators (``Custom``, ``mx.operator``), and ``function``:
``autograd.Function``, each lowered to one ``jax.custom_vjp`` with the pieces in ``custom_lowering``.
``conv_lowering``: the three lowerings of a convolution and the rule that picks one per shape (part of the
op; the per-shape *timing* of that choice is an XLA rewrite, ``ast_hybrid/xla``).  ``array_methods``:
NDArray's operators and methods, installed on the class at the end of this module (the array type in
``ast_hybrid.core`` imports nothing of the ops).

May import: jax, numpy, ``ast_hybrid.core`` and ``ast_hybrid.common`` (the op output counts MXNet declares).
Never the XLA rewrites, Gluon, MXNet's API rooms, the linter, the transpiler, the CLI or ``testing``.
"""

from ast_hybrid.ops import _core, contrib, conv, creation, elemwise, indexing, linalg, nn, normalization, random, \
    legacy, reduce, rnn, shape, sparse  # noqa: F401
from ast_hybrid.ops import internal as _internal  # noqa: F401
from ast_hybrid.ops.detection import ROIPooling  # noqa: F401
from ast_hybrid.ops.conv import *  # noqa: F401,F403
from ast_hybrid.ops.creation import *  # noqa: F401,F403
from ast_hybrid.ops.elemwise import *  # noqa: F401,F403
from ast_hybrid.ops.indexing import (SequenceLast, SequenceMask, SequenceReverse, batch_take,  # noqa: F401
                                     choose_element_0index, diag, fill_element_0index, gather_nd, one_hot, pick,
                                     ravel_multi_index, scatter_nd, take, unravel_index)
from ast_hybrid.ops.legacy import *  # noqa: F401,F403
from ast_hybrid.ops.linalg import batch_dot, dot  # noqa: F401
from ast_hybrid.ops.nn import *  # noqa: F401,F403
from ast_hybrid.ops.normalization import *  # noqa: F401,F403
from ast_hybrid.ops.random import shuffle  # noqa: F401
from ast_hybrid.ops.reduce import *  # noqa: F401,F403
from ast_hybrid.ops.rnn import RNN  # noqa: F401
from ast_hybrid.ops.shape import *  # noqa: F401,F403
from ast_hybrid.ops.spatial import *  # noqa: F401,F403
from ast_hybrid.ops.update import *  # noqa: F401,F403

linalg_gemm, linalg_gemm2, linalg_potrf, linalg_potri = linalg.gemm, linalg.gemm2, linalg.potrf, linalg.potri
linalg_trmm, linalg_trsm, linalg_syrk, linalg_sumlogdiag = linalg.trmm, linalg.trsm, linalg.syrk, linalg.sumlogdiag
linalg_extractdiag, linalg_makediag, linalg_inverse, linalg_det = (linalg.extractdiag, linalg.makediag,
                                                                   linalg.inverse, linalg.det)
linalg_slogdet, linalg_extracttrian, linalg_maketrian, linalg_gelqf = (linalg.slogdet, linalg.extracttrian,
                                                                       linalg.maketrian, linalg.gelqf)

from ast_hybrid.ops.custom import Custom  # noqa: E402,F401  (MXNet's Custom: the Python operator named op_type)

from ast_hybrid.ops import array_methods as _array_methods  # noqa: E402  (needs every op above)

_array_methods.install()
