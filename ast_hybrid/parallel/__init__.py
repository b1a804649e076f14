"""Devices and processes: data parallelism for Gluon on ``jax.sharding``, and several processes as one job.

- ``data_parallel``: parameters replicated over a mesh of a process's devices (``initialize(ctx=[...])``), the
  batch split over them, gradients summed inside the program, across processes too;
- ``distributed``: ``initialize()`` (jax.distributed), ``rank``/``num_workers``/``barrier``, which process
  writes files, MXNet's ``KVStore`` (``ast_hybrid.distributed`` and ``mxnet.kvstore`` are this module).

Parameters and blocks are duck-typed (``_data``, ``_leaf``, ``_set``): Gluon imports this room, not the reverse.

May import: ``ast_hybrid.core``, jax, numpy.  Never the ops' namespace, Gluon, MXNet's API rooms, the linter,
the transpiler, the CLI or ``testing``.
"""
