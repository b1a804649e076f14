"""The transpiler: Python control flow on tensors -> functional control flow under ``jax.jit``.

- ``api``: ``convert``, ``jit``, ``to_source``, ``do_not_convert`` (what ``ast_hybrid`` exports);
- ``converter``: one function from source to a new function object (checks, pipeline, compile, bind);
- ``pipeline``: the passes of ``passes/``, in order, each position with its reason;
- ``sites``: what the runtime knows about each converted statement, to explain failures;
- ``passdoc``: runs one pass on a snippet (the before/after in each pass's docstring);
- ``ast_tools/``: the code tools no pass owns (analysis, annotations, templates, naming,
  origin, the base transformer, the jump lowering; the walkers it shares with the linter
  are ``common.walkers``);
- ``runtime/``: what converted code calls, behind the one name ``ah__``.

May import: ``common``, ``passes`` (the pipeline only), and the linter's
``check_source`` (conversion refuses what the linter finds).  ``ast_tools`` and
``passes`` never import the runtime, and the runtime never imports a pass or
``ast_tools`` beyond ``naming``.  Nothing here imports the Gluon front.
"""
