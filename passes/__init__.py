"""Transpiler passes: one gast transformer per module; see ast_hybrid.pipeline for their order."""
