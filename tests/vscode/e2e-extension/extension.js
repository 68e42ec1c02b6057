// Test-only extension: writes one JSON line per observation to $TOOLHOST_E2E_LOG
// (the pytest side reads it) and calls the language-model tools API the way a
// chat extension would.
const { execFileSync } = require("node:child_process");
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

/** Every process with its parent and command line (cut at `limit`), from /proc (the test
 * checks who runs which language server). */
function processes(limit = 400) {
  const found = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim();
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      found.push({ pid: Number(name), ppid, cmdline: cmdline.slice(0, limit) });
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

/** The pipes and sockets a process holds, as /proc names them. */
function channels(pid) {
  const found = [];
  let fds = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return found;
  }
  for (const fd of fds) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (/^(pipe|socket):/.test(target)) {
        found.push(target);
      }
    } catch {
      // closed meanwhile
    }
  }
  return found;
}

// lsp_* calls on the TypeScript fixture (tests/langservers/fixtures/typescript), none of
// whose files is open in an editor.
const LSP_CALLS = {
  definition: ["lsp_definition", { path: "src/main.ts", line: 7, symbol: "makeCircle" }],
  references: ["lsp_references", { path: "src/main.ts", line: 7, symbol: "makeCircle" }],
  hover: ["lsp_hover", { path: "src/main.ts", line: 7, symbol: "makeCircle" }],
  unicode: ["lsp_definition", { path: "src/unicode.ts", line: 3, symbol: "makeCircle" }],
};

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
    vscode.commands.registerCommand("toolhostE2E.lspCheck", async () => {
      const tabs = () => vscode.window.tabGroups.all.flatMap((group) => group.tabs.map((tab) => tab.label));
      const before = { tabs: tabs(), active: vscode.window.activeTextEditor?.document.uri.toString() ?? null };
      const results = {};
      for (const [key, [tool, args]] of Object.entries(LSP_CALLS)) {
        record({ kind: "lspAsking", key });
        try {
          const result = await api.call(tool, args);
          const text = result.content.filter((part) => part.type === "text").map((part) => part.text).join("\n");
          results[key] = { isError: result.isError, text, error: result.error };
        } catch (error) {
          results[key] = { isError: true, text: `${error.name}: ${error.message}` };
        }
      }
      // bad.ts is in no tab: the extension shows it in a background tab for the question.
      record({ kind: "lspAsking", key: "diagnostics" });
      const diagnostics = await api.call("lsp_diagnostics", { path: "src/bad.ts" });
      const text = diagnostics.content.filter((part) => part.type === "text").map((part) => part.text).join("\n");
      const after = { tabs: tabs(), active: vscode.window.activeTextEditor?.document.uri.toString() ?? null };
      record({ kind: "lspCheck", results, diagnostics: { isError: diagnostics.isError, text }, processes: processes(), extensionHostPid: process.pid, before, after });
    }),
    vscode.commands.registerCommand("toolhostE2E.serverProcess", async () => {
      // The toolhost server this extension host started: where it runs from, its
      // environment and every file it has mapped (its native libraries).
      const server = processes().find((p) => p.ppid === process.pid && /toolhost_serve\.py| serve\b/.test(p.cmdline));
      const entry = { kind: "serverProcess", found: server !== undefined };
      if (server !== undefined) {
        const read = (name) => fs.readFileSync(`/proc/${server.pid}/${name}`, "utf8");
        const environ = Object.fromEntries(read("environ").split("\0").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
        const maps = [...new Set(read("maps").split("\n").map((line) => line.split(/\s+/)[5]).filter((f) => f && f.startsWith("/")))];
        Object.assign(entry, {
          cmdline: server.cmdline,
          exe: fs.readlinkSync(`/proc/${server.pid}/exe`),
          cwd: fs.readlinkSync(`/proc/${server.pid}/cwd`),
          path: environ.PATH ?? "",
          pythonPath: environ.PYTHONPATH ?? "",
          maps,
        });
      }
      record(entry);
    }),
    vscode.commands.registerCommand("toolhostE2E.serverChannels", async () => {
      // What the warm-start test reads (tests/warm/editor_servers.py): this extension
      // host's pipes and sockets, the socket pairs (`ss`), and those of its children and of
      // every toolhost.
      const listed = processes(Infinity)
        .filter((p) => p.ppid === process.pid || /toolhost|lsp_server/.test(p.cmdline))
        .map((p) => ({ ...p, channels: channels(p.pid) }));
      const unixSockets = execFileSync("ss", ["-xnH"], { encoding: "utf8" });
      record({ kind: "serverChannels", editorPid: process.pid, channels: channels(process.pid), unixSockets, processes: listed });
    }),
    vscode.commands.registerCommand("toolhostE2E.settingsCheck", async () => {
      // What the server makes of the settings (issue 41): would a command leave the
      // sandbox or skip the prompt, does the user's own mode apply, and who set what. Then a
      // command that writes outside the workspace, for real (the driver answers its prompt).
      const escape = { command: `touch ${process.env.HOME}/escaped`, description: "write outside the workspace" };
      const entry = { kind: "settingsCheck" };
      try {
        entry.sandboxed = await api.preview("bash", escape);
        entry.escalation = await api.preview("bash", { ...escape, sandbox: "off" });
        entry.write = await api.preview("write_file", { path: "new.txt", content: "x\n" });
        entry.status = await api.status();
        record({ kind: "settingsPreviewed", status: entry.status });
        entry.bash = await api.call("bash", escape);
        entry.escaped = fs.existsSync(`${process.env.HOME}/escaped`);
      } catch (error) {
        entry.error = `${error.name}: ${error.message}`;
      }
      record(entry);
    }),
    vscode.commands.registerCommand("toolhostE2E.status", async () => {
      record({ kind: "status", status: await api.status() });
    }),
    vscode.commands.registerCommand("toolhostE2E.lmEdit", async () => {
      // notes.md: not covered by the Edit(*.txt) rule the always-allow step writes.
      await invoke("toolhost_edit_file", { path: "notes.md", old_string: "world", new_string: "from the LM tool" });
    }),
  );
}

module.exports = { activate, deactivate() {} };
