"""Renderers for diagnostics (TODO(cli): json, sarif, github; full text format)."""

from __future__ import annotations

__all__ = ["render_text"]


def render_text(diagnostics, color: bool = False) -> str:
    out = []
    for d in diagnostics:
        loc = f"{d.span.line}:{d.span.col}" if d.span else "1:1"
        out.append(f"{d.path}:{loc}: {d.code} {d.message}")
        if d.help:
            out.append(f"  help: {d.help}")
    return "\n".join(out)
