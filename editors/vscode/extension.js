// The VS Code side of ast-hybrid's language server: start `ast-hybrid server` for Python files.
// Everything else (diagnostics as you type, quick fixes, fix all, hover with the rule's page, the
// project's [tool.ast-hybrid] settings) is the server's; this file only starts it.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function options(config) {
  const out = {};
  const target = config.get("target");
  if (target) out.target = target;
  const ignore = config.get("ignore") || [];
  if (ignore.length) out.ignore = ignore;
  return out;
}

function activate(context) {
  const config = vscode.workspace.getConfiguration("ast-hybrid");
  const server = { command: config.get("path") || "ast-hybrid", args: ["server"], transport: TransportKind.stdio };
  client = new LanguageClient("ast-hybrid", "ast-hybrid", server, {
    documentSelector: [{ scheme: "file", language: "python" }, { scheme: "untitled", language: "python" }],
    initializationOptions: options(config),
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/pyproject.toml") },
  });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate, options };
