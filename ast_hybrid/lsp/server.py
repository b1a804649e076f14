"""``ast-hybrid server``: the linter as a language server (pygls), its state and its handlers.

What happens, per notification or request of the client:

- ``didOpen``/``didChange``: lint the document's text as the editor holds it
  (unsaved changes included; pygls keeps the text, incremental changes
  applied) and publish the findings with the document's version;
- ``didSave`` of a ``pyproject.toml``, ``didChangeWatchedFiles``,
  ``didChangeConfiguration``: the settings may have changed: lint every open
  document again;
- ``didClose``: clear its findings;
- ``codeAction``: for the findings under the range, their fixes (the unsafe
  ones marked) and ``# noqa`` for the line; for the document, every safe fix at
  once (``source.fixAll.ast-hybrid``, as ``lint --fix`` would);
- ``hover``: the page of each rule found under the cursor, or of the code
  written there (``# noqa: HY001``).

Settings: the nearest ``pyproject.toml`` above the file, read again when its
modification time changes, under the client's ``initializationOptions``
(``target``, ``select``, ``extendSelect``, ``ignore``).  A file the
configuration excludes gets no findings.  A configuration that cannot be
used is shown to the user once (``window/showMessage``) and the defaults are
used.  The server's state (findings published, settings read) belongs to
the :class:`HybridLanguageServer` instance: nothing is shared between
instances.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ast_hybrid.common.source import SourceFile
from ast_hybrid.linter.api import lint_source
from ast_hybrid.linter.apply import fix_text
from ast_hybrid.linter.config import ConfigError, Settings, excluded, find_pyproject, load_settings

from . import convert

__all__ = ["HybridLanguageServer", "build_server", "SERVER_NAME"]

SERVER_NAME = "ast-hybrid"
#: initializationOptions key -> the Settings override it sets
_OPTIONS = {"target": "target", "select": "select", "extendSelect": "extend_select", "ignore": "ignore"}


@dataclass
class Published:
    """What was last published for one document: the version, its source, and each finding as ours and LSP's."""

    version: int | None
    src: SourceFile
    settings: Settings
    findings: list     # [(ours, lsp)]


class HybridLanguageServer(LanguageServer):
    """pygls's server with the linter's state: the findings published and the settings read."""

    def __init__(self):
        from ast_hybrid import __version__

        super().__init__(SERVER_NAME, __version__)
        self.overrides: dict = {}
        self.published: dict[str, Published] = {}
        self._settings: dict = {}          # pyproject path (or None) -> (mtime, Settings)
        self._reported: set = set()        # configuration errors already shown

    # -- settings -------------------------------------------------------------------------------------------
    def settings_for(self, path: str | None) -> Settings:
        """The settings for a file at ``path`` (None: an unsaved buffer: the workspace's)."""
        start = path or self._workspace_root()
        pyproject = find_pyproject(start) if start else None
        try:
            mtime = os.stat(pyproject).st_mtime_ns if pyproject else None
        except OSError:
            mtime = None
        cached = self._settings.get(pyproject)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            settings = load_settings(pyproject).with_overrides(**self.overrides)
            settings.check_selectors()
        except ConfigError as exc:
            self._show_once(f"ast-hybrid: {exc}; using the default settings")
            root = os.path.dirname(pyproject) if pyproject else (start or os.getcwd())
            settings = Settings(root=root).with_overrides(**self.overrides)
        self._settings[pyproject] = (mtime, settings)
        return settings

    def set_overrides(self, options) -> None:
        """The client's ``initializationOptions``; an unknown key or a bad value is shown, not fatal."""
        self.overrides = {}
        if not isinstance(options, dict):
            return
        for key, value in options.items():
            if key not in _OPTIONS:
                self._show_once(f"ast-hybrid: unknown initialization option {key!r} "
                                f"(known: {', '.join(_OPTIONS)})")
                continue
            if key != "target":
                value = tuple(value.split(",") if isinstance(value, str) else value)
            self.overrides[_OPTIONS[key]] = value
        try:
            Settings().with_overrides(**self.overrides).check_selectors()
        except (ConfigError, TypeError) as exc:
            self._show_once(f"ast-hybrid: initialization options: {exc}; ignored")
            self.overrides = {}
        self._settings.clear()

    def _workspace_root(self) -> str | None:
        try:
            return self.workspace.root_path
        except RuntimeError:        # before initialize
            return None

    def _show_once(self, text: str) -> None:
        if text not in self._reported:
            self._reported.add(text)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, text))

    # -- linting --------------------------------------------------------------------------------------------
    def lint(self, uri: str) -> Published | None:
        """Lint the open document ``uri`` as the editor holds it, publish, and remember what was published."""
        doc = self.workspace.get_text_document(uri)
        if not _is_python(doc):
            return None
        path = doc.path if uri.startswith("file:") else None
        settings = self.settings_for(path)
        src = SourceFile.from_text(doc.source, path or uri)
        found = [] if path and excluded(path, settings) else lint_source(src, settings)
        pub = Published(doc.version, src, settings, [(d, convert.to_lsp(doc, d)) for d in found])
        self.published[uri] = pub
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=[lsp for _, lsp in pub.findings], version=doc.version))
        return pub

    def current(self, uri: str) -> Published | None:
        """The findings for the document as it is now (linted again if it changed since)."""
        pub = self.published.get(uri)
        doc = self.workspace.get_text_document(uri)
        if pub is None or pub.version != doc.version or pub.src.text != doc.source:
            pub = self.lint(uri)
        return pub

    def lint_open_documents(self) -> None:
        self._settings.clear()
        for uri in list(self.workspace.text_documents):
            self.lint(uri)

    def forget(self, uri: str) -> None:
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- code actions and hover -----------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        pub = self.current(uri)
        if pub is None:
            return []
        doc = self.workspace.get_text_document(uri)
        only = params.context.only
        wants = (lambda kind: True) if not only else (
            lambda kind: any(kind == k or kind.startswith(f"{k}.") for k in only))
        actions: list[types.CodeAction] = []
        if wants(types.CodeActionKind.QuickFix):
            for d, lsp_d in pub.findings:
                if convert.overlaps(lsp_d.range, params.range):
                    actions.extend(convert.quick_fixes(doc, d, lsp_d))
                    noqa = convert.noqa_action(doc, pub.src, d, lsp_d)
                    if noqa is not None:
                        actions.append(noqa)
        if wants(convert.FIX_ALL):
            fix_all = self._fix_all(doc, pub)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def _fix_all(self, doc, pub: Published) -> types.CodeAction | None:
        """Every safe fix, applied as ``lint --fix`` does (rounds until nothing changes): one edit of the text."""
        if not any(d.fix is not None and d.fix.applicability == "safe" for d, _ in pub.findings):
            return None
        path = pub.src.path
        res = fix_text(doc.source, path, lambda t: lint_source(SourceFile.from_text(t, path), pub.settings))
        if not res.changed:
            return None
        whole = convert.whole_range(doc)
        return types.CodeAction(
            title=f"Fix all safe ast-hybrid findings ({res.fixed})", kind=convert.FIX_ALL,
            edit=types.WorkspaceEdit(changes={doc.uri: [types.TextEdit(range=whole, new_text=res.text)]}))

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        pub = self.current(params.text_document.uri)
        if pub is None:
            return None
        doc = self.workspace.get_text_document(params.text_document.uri)
        text = convert.hover_text(doc, params.position, pub.findings)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def _is_python(doc) -> bool:
    return doc.language_id == "python" or (doc.path or "").endswith((".py", ".pyi"))


def build_server() -> HybridLanguageServer:
    """A new server with its handlers registered (nothing is started)."""
    server = HybridLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: HybridLanguageServer, params: types.InitializeParams):
        ls.set_overrides(params.initialization_options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: HybridLanguageServer, params: types.DidOpenTextDocumentParams):
        ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: HybridLanguageServer, params: types.DidChangeTextDocumentParams):
        ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: HybridLanguageServer, params: types.DidSaveTextDocumentParams):
        if params.text_document.uri.endswith("/pyproject.toml"):
            ls.lint_open_documents()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: HybridLanguageServer, params: types.DidCloseTextDocumentParams):
        ls.forget(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: HybridLanguageServer, params: types.DidChangeWatchedFilesParams):
        ls.lint_open_documents()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: HybridLanguageServer, params: types.DidChangeConfigurationParams):
        ls.lint_open_documents()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, convert.FIX_ALL], resolve_provider=False))
    def code_action(ls: HybridLanguageServer, params: types.CodeActionParams):
        return ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: HybridLanguageServer, params: types.HoverParams):
        return ls.hover(params)

    return server
