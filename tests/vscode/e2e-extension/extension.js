// Test-only extension: writes one JSON line per observation to $TOOLHOST_E2E_LOG
// (the pytest side reads it) and calls the language-model tools API the way a
// chat extension would.
const fs = require("node:fs");
const vscode = require("vscode");

function record(entry) {
  const file = process.env.TOOLHOST_E2E_LOG;
  if (file) {
    fs.appendFileSync(file, JSON.stringify({ at: Date.now(), ...entry }) + "\n");
  }
}

function texts(result) {
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : String(part)));
}

async function invoke(name, input) {
  try {
    const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
    record({ kind: "lmInvoke", tool: name, input, texts: texts(result) });
  } catch (error) {
    record({ kind: "lmInvoke", tool: name, input, error: `${error.name}: ${error.message}` });
  }
}

async function activate(context) {
  record({ kind: "e2eActivated", pid: process.pid });
  record({ kind: "trust", trusted: vscode.workspace.isTrusted });
  const toolhost = vscode.extensions.getExtension("toolhost.toolhost");
  const api = await toolhost.activate();
  context.subscriptions.push(api.onEvent((event) => record({ kind: "toolhost", event })));
  record({ kind: "toolhostActivated", serverState: api.serverState });
  record({ kind: "toolhostStarted", serverState: await api.whenStarted() });
  context.subscriptions.push(
    vscode.commands.registerCommand("toolhostE2E.lmCheck", async () => {
      const names = vscode.lm.tools.map((tool) => tool.name).filter((name) => name.startsWith("toolhost_"));
      record({ kind: "lmTools", names });
      await invoke("toolhost_read_file", { path: "hello.txt" });
      await invoke("toolhost_read_file", { path: "notes.md" });
    }),
    vscode.commands.registerCommand("toolhostE2E.lmEdit", async () => {
      // notes.md: not covered by the Edit(*.txt) rule the always-allow step writes.
      await invoke("toolhost_edit_file", { path: "notes.md", old_string: "world", new_string: "from the LM tool" });
    }),
  );
}

module.exports = { activate, deactivate() {} };
