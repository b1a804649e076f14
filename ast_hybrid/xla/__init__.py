"""The XLA performance rewrites: what makes a traced program fast on XLA (tuned for XLA:CPU), and what keeps
compiled programs from one process to the next.

- ``channel_last``: a predict program's convolutions, pooling and their neighbours rewritten to run
  channel-last (NHWC) inside: the interpreter of a traced program; ``channel_last_rules``: its rule per
  primitive, over values stored in a permutation of their axes;
- ``program``: a hybridized block's predict program compiled channel-last (``Program``) and run
  (``Executable``): kernels transposed once per parameter update, GEMMs over few rows given their weight
  first when the parameters exceed the last-level cache, the whole program timed against im2col on request;
- ``tuning``: a program that answers at once and is tuned afterwards: the first call of a convolving predict
  program runs it as traced, and the channel-last program is built (in a thread of its own), timed (in short
  slices between the next calls) and swapped in;
- ``conv_tuning``: each convolution the lowering rule (``ast_hybrid/ops/conv_lowering.py``) leaves to XLA, timed
  once per shape and machine both ways, the faster kept on disk;
- ``onednn``: oneDNN's convolutions (forward and both gradients) as JAX primitives lowered to XLA FFI calls,
  put into training programs by ``channel_last``; optional: compiled at first use from ``onednn_conv.cc``
  where the oneDNN package and a C++ compiler are, XLA's kernels otherwise;
- ``hoist``: what a program computes from its parameters alone, run once per parameter update;
- ``program_cache``: a hybridized block's compiled predict program kept on disk for the next process;
- ``compile_cache``: JAX's persistent compilation cache, on for hybridized blocks;
- ``host_memory``: glibc's malloc set for XLA's worker threads when jax creates its CPU client;
- ``program_memory``: JAX's in-memory program caches emptied every ``AST_HYBRID_PROGRAM_LIMIT`` compilations;
- ``disk``: the atomic writes the caches share.

Importing this package installs ``host_memory``'s hook (it changes nothing until jax creates its CPU client),
``program_memory``'s compilation counter, and the channel-last interpreter as the rewrite of recorded tapes'
replayed forward (``core/tape_program.py``'s ``REWRITE``).

May import: ``ast_hybrid.core``, the ops (``conv_lowering``: the lowerings it times), jax (``jax._src``: only in
this room), numpy.  Never Gluon, MXNet's API rooms, the linter, the transpiler, the CLI or ``testing``: a
block's own description reaches the program cache as an argument.
"""

from ast_hybrid.core import tape_program as _tape_program
from ast_hybrid.xla import host_memory as _host_memory
from ast_hybrid.xla import program_memory as _program_memory

_host_memory.install()
_program_memory.install()


def _tape_forward(fn, *args):
    from ast_hybrid.xla import program    # with the lowerings and tuning: when a tape is first compiled

    return program.tape_forward(fn, *args)


_tape_program.REWRITE.forward = _tape_forward     # recorded tapes' backward channel-last (core/tape_program.py)
