"""Generic tools over gast trees that the passes use and no pass owns (AutoGraph's ``pyct``).

- ``analysis``: per-function activity, liveness and definite assignment, on beniget;
- ``annotations``: the notes passes leave on nodes (``Anno``, one keyed enum);
- ``templates``: code from Python text with named placeholders;
- ``naming``: fresh names for what the passes create, and the runtime's reserved name;
- ``origin``: every created node carries the user's location; the move back to the user's lines;
- ``transformer``: the base ``NodeTransformer`` of every pass;
- ``jumps``: the block walk that lowers ``break``/``continue``/``return`` into flags.

The walkers the linter shares (scopes, children, parameter lists, beniget's
chains) are in :mod:`ast_hybrid.common.walkers`.

May import: ``ast_hybrid.common``, gast, beniget.  Never jax, numpy, the
runtime, a pass, or the Gluon front.
"""
