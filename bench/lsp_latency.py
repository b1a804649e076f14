"""How long ``ast-hybrid server`` takes to answer an edit: didChange to publishDiagnostics, on a 2,000-line file.

Usage::

    python -m bench.lsp_latency [--lines N] [--repeat N]     (python -m bench runs it with the rest)

The file is real Gluon code: whole modules of MXNet 1.9.1's ``mxnet/gluon`` (the labelled tree,
:func:`ast_hybrid.testing.corpus.gluon_tree`), concatenated until it has at least ``--lines`` lines
(2,000 by default, the issue's size), with ``examples/lint_model.py`` at its end so there are findings to
publish.  The server runs as editors start it, a subprocess speaking JSON-RPC on stdin/stdout; this
script is the client (plain frames, no library, so the client costs nothing measurable).  Times,
medians of interleaved rounds (``bench/harness.py``):

1. ``server round trip``: a one-character edit sent as an incremental ``didChange``, until the
   ``publishDiagnostics`` of that version arrives;
2. ``lint in-process``: :func:`ast_hybrid.linter.api.lint_source` on the same text, the baseline: what the
   server cannot avoid.

Prints round trip / lint.  Not a test: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench import harness

ROOT = Path(__file__).resolve().parents[1]


class Client:
    """A minimal LSP client over a subprocess's pipes: send requests and notifications, read messages."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "ast_hybrid", "server"], cwd=str(ROOT),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"processId": None, "rootUri": cwd.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def notify(self, method: str, params) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params):
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == self.next_id and "method" not in msg:
                return msg.get("result")

    def published(self, uri: str, version: int) -> list:
        while True:
            msg = self.read()
            p = msg.get("params") or {}
            if msg.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri \
                    and p.get("version") == version:
                return p["diagnostics"]

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=30)


def sample_text(lines: int) -> str:
    """Whole modules of mxnet/gluon, concatenated until ``lines`` lines, then the lint example."""
    from ast_hybrid.testing.corpus import gluon_tree

    parts, n = [], 0
    for f in sorted(Path(gluon_tree()).rglob("*.py")):
        if n >= lines:
            break
        text = f.read_text(encoding="utf-8")
        if "hybrid_forward" in text:
            parts.append(text)
            n += text.count("\n")
    parts.append((ROOT / "examples" / "lint_model.py").read_text())
    return "\n".join(parts)


def scenario(report, quick=False, lines=2000, repeat=20):
    """The server's diagnostics round trip on an edit, against linting the same text in-process."""
    import tempfile

    from ast_hybrid.common.source import SourceFile
    from ast_hybrid.linter.api import lint_source
    from ast_hybrid.linter.config import Settings

    text = sample_text(lines)
    n_lines = text.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.py"
        path.write_text(text)
        uri = path.as_uri()
        client = Client(Path(tmp))
        try:
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}})
            found = client.published(uri, 1)
            state = {"version": 1, "char": "a"}

            def round_trip(n):
                t0 = time.perf_counter()
                for _ in range(n):
                    state["version"] += 1
                    state["char"] = "b" if state["char"] == "a" else "a"
                    # the last line is a comment we keep retyping: `# a` <-> `# b`
                    client.notify("textDocument/didChange", {
                        "textDocument": {"uri": uri, "version": state["version"]},
                        "contentChanges": [{"range": {"start": {"line": n_lines, "character": 2},
                                                      "end": {"line": n_lines, "character": 3}},
                                            "text": state["char"]}]})
                    client.published(uri, state["version"])
                return (time.perf_counter() - t0) / n

            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                     "contentChanges": [{"text": text + "# a"}]})
            client.published(uri, 2)
            state["version"] = 2
            settings = Settings(root=Path(tmp))
            src_text = text + "# a"

            def in_process(n):
                t0 = time.perf_counter()
                for _ in range(n):
                    lint_source(SourceFile.from_text(src_text, str(path)), settings)
                return (time.perf_counter() - t0) / n

            t = harness.interleave({harness.OURS: round_trip, "lint in-process": in_process}, 3,
                                   rounds=5 if quick else repeat)
        finally:
            client.close()
    note = f"{n_lines} lines, {len(found)} findings; ours = didChange -> publishDiagnostics over stdio"
    row = report.add("language server", f"diagnostics round trip, {n_lines}-line file", "ms",
                     {k: v * 1e3 for k, v in t.items()}, note)
    row.ratios["round trip/lint"] = t[harness.OURS] / t["lint in-process"]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    row = scenario(harness.Report(), lines=args.lines, repeat=args.repeat)
    for k, v in row.times.items():
        print(f"{k}: {v:.1f} ms")
    for k, v in row.ratios.items():
        print(f"ratio {k}: {v:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
