"""What the linter and the transpiler share: sources, locations, diagnostics, the rule catalogue.

- ``source``: source files, spans and parsing (the one place that knows where code comes from);
- ``gastconv``: ast <-> gast in one walk each;
- ``walkers``: walks over gast trees (scopes, children, parameter lists, beniget's chains, silenced);
- ``diagnostics``: the one ``Diagnostic`` type (with its fixes and edits) and ``ConversionError``;
- ``rules``: the rule catalogue, the one source of each rule's facts;
- ``rule_pages``: a rule's page (Markdown) made from the catalogue;
- ``render``: diagnostics as text, JSON, SARIF and GitHub annotations;
- ``op_outputs``: how many outputs each MXNet operator declares (the linter's HY rules and Symbol graphs);
  ``op_names``: every name MXNet puts under ``F`` (an operator not among them is a fork's: its outputs unknown);
- ``fluent``: MXNet's NDArray methods that give tensors, by name: the fluent ops the front installs on
  ``NDArray`` (``ops/array_methods.py``) and the linter's tensor methods, one list that both read.

May import: the standard library, gast, beniget, and each other.  Never jax or numpy
(``ast-hybrid lint`` must start fast and run where jax is not installed), and
nothing else of ast_hybrid.
"""
