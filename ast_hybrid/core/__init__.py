"""The bottom of the front: what MXNet's operators, Gluon and ``import mxnet`` all stand on.

- ``ndarray``: ``NDArray``, MXNet's array as a thin wrapper around one jax array (what it *is*; what
  computes with it is installed by the operator package, ``ast_hybrid/ops/array_methods.py``); ``sparse``:
  MXNet's row_sparse and csr arrays, held dense with MXNet's structure and storage types;
- ``context``: ``Context``, ``cpu``/``gpu`` and the current context (per thread);
- ``autograd``: recording and training mode (per thread), the tape, ``backward``/``grad``; ``tape_program``:
  a tape as one compiled backward; ``storage``: what a parameter's data or a gradient handed out as an array
  writes into;
- ``tiers``: the program of a recorded backward or an optimizer step (``jax.jit``; on request, compiled
  quickly for its first calls, XLA's optimised one swapped in once compiled in the background);
- ``errors``: the errors the front raises on purpose and the cleaner that takes them back out of JAX;
- ``settings``: every ``AST_HYBRID_*`` switch, its default, accepted values and help (the one module that
  reads them from the environment).

May import: the standard library, numpy and jax (jax only inside functions, where it can be: ``settings``
and ``errors`` never import it).  Nothing else of ast_hybrid: every other room of the front imports this one.
"""
