"""``python -m ast_hybrid.run SCRIPT [ARGS...]``: ``ast-hybrid run`` (``ast_hybrid/cli/run.py``) as a module.

Runs an MXNet script unchanged with ``import mxnet`` resolving to ``ast_hybrid.mxnet``.  Nothing but the
entry point lives here; it may import the CLI.
"""
