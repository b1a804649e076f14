"""Transpiler passes: one gast transformer per module; see ast_hybrid.transpiler.pipeline for their order."""
