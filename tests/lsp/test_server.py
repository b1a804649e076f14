"""``ast-hybrid server`` end to end: pygls's client starts it as a subprocess and speaks LSP to it over stdio,
as an editor does: open a file whose unsaved text differs from the disk, type, ask for code actions and hover,
close it, shut down.  Positions are checked in UTF-16 (LSP's default) on a line with a character outside the
Basic Multilingual Plane; the project's ``[tool.ast-hybrid]`` is honoured; the user's code is never run."""

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]

ON_DISK = "x = 1\n"
# what the editor holds (unsaved): module code that would leave a mark if anything ran it
TEXT = '''import pathlib
pathlib.Path(__file__).with_name("RAN").write_text("the server ran the user's code")
raise SystemExit(3)


class Net(HybridBlock):
    def hybrid_forward(self, F, x, y):
        n = x.shape[0]
        h = F.relu(x)
        t = "\U0001d518"; h += y
        return h * n
'''


class Session:
    """A client connected to a fresh server; ``published`` receives each publishDiagnostics."""

    def __init__(self):
        self.client = LanguageClient("ast-hybrid-test", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        self.messages: list = []

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(params):
            self.published.put_nowait(params)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def _shown(params):
            self.messages.append(params.message)

    async def start(self, root: Path, options=None):
        await self.client.start_io(sys.executable, "-m", "ast_hybrid", "server", cwd=str(ROOT))
        result = await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
            initialization_options=options)), 60)
        self.client.initialized(types.InitializedParams())
        return result

    async def diagnostics(self, uri: str, version=None) -> types.PublishDiagnosticsParams:
        while True:
            params = await asyncio.wait_for(self.published.get(), 60)
            if params.uri == uri and (version is None or params.version == version):
                return params

    async def stop(self) -> int:
        await asyncio.wait_for(self.client.shutdown_async(None), 30)
        self.client.exit(None)
        code = await asyncio.wait_for(self.client._server.wait(), 30)
        await self.client.stop()
        return code


def open_params(uri, text, version=1):
    return types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", version, text))


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ast-hybrid]\ntarget = "mxnet"\n')
    (tmp_path / "m.py").write_text(ON_DISK)
    return tmp_path


def _by_code(params):
    return {d.code: d for d in params.diagnostics}


def test_an_editor_session(project):
    asyncio.run(_an_editor_session(project))


async def _an_editor_session(project):
    s = Session()
    init = await s.start(project)
    caps = init.capabilities
    assert caps.hover_provider and caps.code_action_provider and init.server_info.name == "ast-hybrid"
    uri = (project / "m.py").as_uri()
    s.client.text_document_did_open(open_params(uri, TEXT))
    got = await s.diagnostics(uri, 1)
    found = _by_code(got)
    # the unsaved text is linted (the disk holds `x = 1`); target mxnet from pyproject.toml: HY008 reported
    assert set(found) == {"HY001", "HY008"}
    assert all(d.source == "ast-hybrid" for d in got.diagnostics)
    shape = found["HY008"]
    assert (shape.range.start.line, shape.range.start.character) == (7, 12)   # `x.shape`, 0-based
    assert shape.severity == types.DiagnosticSeverity.Error and "help:" in shape.message
    # `h += y` after a character outside the BMP: two UTF-16 units, so column 18 (in code points: 17)
    inplace = found["HY001"]
    assert (inplace.range.start.line, inplace.range.start.character) == (9, 18)
    assert (inplace.range.end.line, inplace.range.end.character) == (9, 24)

    # quick fixes for the finding under the cursor: the rewrite (safe, preferred) and # noqa
    actions = await s.client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), inplace.range, types.CodeActionContext([inplace])))
    titles = [a.title for a in actions]
    fix = next(a for a in actions if "HY001" in a.title and a.kind == types.CodeActionKind.QuickFix
               and a.is_preferred)
    (edit,) = fix.edit.changes[uri]
    assert edit.new_text == "h = h + y" and edit.range == inplace.range
    noqa = next(a for a in actions if a.title == "Disable HY001 for this line")
    (edit,) = noqa.edit.changes[uri]
    assert edit.new_text == "  # noqa: HY001" and edit.range.start == types.Position(9, 24)
    assert any(t.startswith("Fix all safe") for t in titles)
    # only the fix-all kind when asked for it: the whole text, as `lint --fix` would write it
    (fix_all,) = await s.client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(0, 0)),
        types.CodeActionContext([], only=["source.fixAll"])))
    (edit,) = fix_all.edit.changes[uri]
    assert fix_all.kind == "source.fixAll.ast-hybrid"
    assert edit.new_text == TEXT.replace("h += y", "h = h + y")
    assert edit.range == types.Range(types.Position(0, 0), types.Position(TEXT.count("\n"), 0))

    # hover on the finding: the rule's page; on a code written in a comment: that rule's page
    hover = await s.client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(9, 21)))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("# inplace-augmented-assignment (HY001)")
    assert await s.client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(0, 3))) is None

    # typing: an incremental change that fixes the line and adds `# noqa: HY008` on the shape line
    s.client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [types.TextDocumentContentChangePartial(inplace.range, "h = h + y"),
         types.TextDocumentContentChangePartial(types.Range(types.Position(7, 22), types.Position(7, 22)),
                                                "  # noqa: HY008")]))
    got = await s.diagnostics(uri, 2)
    assert list(got.diagnostics) == []
    hover = await s.client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(7, 34)))
    assert hover.contents.value.startswith("# ") and "(HY008)" in hover.contents.value.splitlines()[0]

    s.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert not (await s.diagnostics(uri)).diagnostics
    assert await s.stop() == 0
    assert not (project / "RAN").exists() and (project / "m.py").read_text() == ON_DISK
    assert s.messages == []


def test_settings_options_and_exclusions(project):
    asyncio.run(_settings_options_and_exclusions(project))


async def _settings_options_and_exclusions(project):
    (project / "pyproject.toml").write_text('[tool.ast-hybrid]\ntarget = "mxnet"\nexclude = ["gen"]\n')
    (project / "gen").mkdir()
    s = Session()
    # the editor's options are laid over pyproject.toml, as the command line's flags are
    await s.start(project, {"ignore": ["HY001"]})
    uri = (project / "m.py").as_uri()
    s.client.text_document_did_open(open_params(uri, TEXT))
    assert set(_by_code(await s.diagnostics(uri, 1))) == {"HY008"}
    # an excluded file: no findings
    gen = (project / "gen" / "g.py").as_uri()
    s.client.text_document_did_open(open_params(gen, TEXT))
    assert not (await s.diagnostics(gen, 1)).diagnostics
    # the configuration changes on disk (target jax: no HY008); saving it lints the open files again
    (project / "pyproject.toml").write_text('[tool.ast-hybrid]\ntarget = "jax"\n')
    s.client.text_document_did_save(types.DidSaveTextDocumentParams(
        types.TextDocumentIdentifier((project / "pyproject.toml").as_uri())))
    assert not (await s.diagnostics(uri, 1)).diagnostics
    # a configuration that cannot be used: said once, and the defaults (target jax, HY001 ignored by the editor)
    (project / "pyproject.toml").write_text('[tool.ast-hybrid]\ntarget = "tensorflow"\n')
    s.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent((project / "pyproject.toml").as_uri(), types.FileChangeType.Changed)]))
    assert not (await s.diagnostics(uri, 1)).diagnostics
    # an unsaved buffer (no file): linted with the workspace's settings
    s.client.text_document_did_open(open_params("untitled:Untitled-1", TEXT))
    assert {d.code for d in (await s.diagnostics("untitled:Untitled-1", 1)).diagnostics} == set()
    assert await s.stop() == 0
    assert len(s.messages) == 1 and "tensorflow" in s.messages[0]


def test_bad_options_are_said_not_fatal(project):
    async def go():
        s = Session()
        await s.start(project, {"select": ["XX9"], "colour": 1})
        uri = (project / "m.py").as_uri()
        s.client.text_document_did_open(open_params(uri, TEXT))
        assert set(_by_code(await s.diagnostics(uri, 1))) == {"HY001", "HY008"}
        assert await s.stop() == 0
        return s.messages
    messages = asyncio.run(go())
    assert any("colour" in m for m in messages) and any("XX9" in m for m in messages)


def test_without_pygls_the_command_says_what_to_install(monkeypatch, capsys):
    from ast_hybrid.cli import main

    monkeypatch.setitem(sys.modules, "pygls", None)     # what `import pygls` meets where it is not installed
    assert main(["server"]) == 2
    assert "pip install 'ast-hybrid[server]'" in capsys.readouterr().err


def test_the_server_imports_no_numerical_library():
    import subprocess

    code = ("import sys; from ast_hybrid.lsp.server import build_server; build_server(); "
            "print(sorted(m for m in ('jax', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_imperative_only_path_is_one_diagnostic_with_related_places(project):
    text = ('class Det(HybridBlock):\n    def __init__(self, hybridizable=True):\n'
            '        self.hybridizable = hybridizable\n\n    def hybrid_forward(self, F, x):\n'
            '        y = F.softmax(x)\n        if self.hybridizable:\n            return y\n'
            '        return [r.asnumpy() for r in y]\n')

    async def go():
        s = Session()
        await s.start(project)
        uri = (project / "d.py").as_uri()
        s.client.text_document_did_open(open_params(uri, text))
        (d,) = (await s.diagnostics(uri, 1)).diagnostics
        assert await s.stop() == 0
        return uri, d
    uri, d = asyncio.run(go())
    assert d.code == "HY015" and d.severity == types.DiagnosticSeverity.Information
    assert d.range.start == types.Position(6, 11)
    places = [(r.location.uri, r.location.range.start.line, r.message.split()[0]) for r in d.related_information]
    assert places == [(uri, 8, "HY004"), (uri, 8, "HY011")]


def test_noqa_action_adds_to_a_noqa_already_there():
    from pygls.workspace import TextDocument

    from ast_hybrid.common.source import SourceFile
    from ast_hybrid.linter import check_source
    from ast_hybrid.lsp.convert import noqa_action, to_lsp

    text = ("class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n"
            "        h = F.relu(x); n = h.shape[0]; h += 1  # noqa: HY008\n        return h * n\n")
    doc = TextDocument("file:///m.py", text)
    src = SourceFile.from_text(text, "/m.py")
    (d,) = [d for d in check_source(src, target="mxnet") if d.code == "HY001"]
    edit = noqa_action(doc, src, d, to_lsp(doc, d)).edit.changes["file:///m.py"][0]
    assert edit.new_text == ", HY001" and edit.range.start.character == text.splitlines()[2].index("HY008") + 5
