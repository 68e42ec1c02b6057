import assert from "node:assert/strict";
import { test } from "node:test";

import { type Bundle, PYTHON_SERVE_ARGS, resolveServer, type ResolutionInputs, workspaceFolderOf } from "../common/serverResolution";
import { ScriptedProbe } from "./scriptedHost";

function inputs(overrides: Partial<ResolutionInputs> = {}): ResolutionInputs {
  return {
    serverPath: "",
    serverPython: "",
    warm: false,
    pythonExtensionInstalled: false,
    pythonExtensionInterpreter: async () => undefined,
    ...overrides,
  };
}

test("1: the toolhost.server.path setting wins and is started with serve", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe(["/opt/th/bin/toolhost"], { python3: "/usr/bin/python3" }, { "/usr/bin/python3": { code: 0 } });
  const result = await resolveServer(inputs({ serverPath: "/opt/th/bin/toolhost", serverPython: "/x/python" }), probe, (l) => log.push(l));
  assert.deepEqual(result, { ok: true, server: { command: "/opt/th/bin/toolhost", args: ["serve"], source: "setting toolhost.server.path" } });
  assert.equal(probe.runs.length, 0);
  assert.match(log[0], /step 1/);
});

test("1: a server.path that is not executable is an error with the fix, no silent fallback", async () => {
  const probe = new ScriptedProbe([], { python3: "/usr/bin/python3" }, { "/usr/bin/python3": { code: 0 } });
  const result = await resolveServer(inputs({ serverPath: "/nope/toolhost" }), probe, () => {});
  assert.equal(result.ok, false);
  assert.ok(!result.ok && /toolhost\.server\.path/.test(result.fix));
});

test("2: toolhost.server.python runs python -m lsp_server serve after an import probe", async () => {
  const probe = new ScriptedProbe([], {}, { "/venv/bin/python": { code: 0 } });
  const result = await resolveServer(inputs({ serverPython: "/venv/bin/python" }), probe, () => {});
  assert.deepEqual(result, { ok: true, server: { command: "/venv/bin/python", args: PYTHON_SERVE_ARGS, source: "setting toolhost.server.python" } });
  assert.match(probe.runs[0], /^\/venv\/bin\/python -c import lsp_server/);
});

test("2: an interpreter without toolhost is an error naming the wheel to pip install into it", async () => {
  const probe = new ScriptedProbe([], {}, { "/venv/bin/python": { code: 1, stderr: "Traceback...\nModuleNotFoundError: No module named 'lsp_server'" } });
  const result = await resolveServer(inputs({ serverPython: "/venv/bin/python" }), probe, () => {});
  assert.ok(!result.ok);
  assert.match(result.message, /No module named 'lsp_server'/);
  assert.match(result.fix, /\/venv\/bin\/python -m pip install \/path\/to\/toolhost_runtime-VERSION-py3-none-any\.whl/);
  assert.doesNotMatch(result.fix, /pip install toolhost\b/); // "toolhost" on PyPI is another project
});

test("3: the Python extension's interpreter comes before python3", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe([], { python3: "/usr/bin/python3" }, { "/proj/.venv/bin/python": { code: 0 }, "/usr/bin/python3": { code: 0 } });
  const result = await resolveServer(
    inputs({ pythonExtensionInstalled: true, pythonExtensionInterpreter: async () => "/proj/.venv/bin/python" }),
    probe,
    (l) => log.push(l),
  );
  assert.ok(result.ok && result.server.source === "Python extension" && result.server.command === "/proj/.venv/bin/python");
  assert.deepEqual(
    log.map((l) => /step (\d)/.exec(l)?.[1]).filter(Boolean),
    ["1", "2", "3", "4"],
  );
});

test("4: python3 on PATH when the Python extension's interpreter lacks toolhost", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe([], { python3: "/usr/bin/python3" }, { "/proj/.venv/bin/python": { code: 1, stderr: "No module named 'lsp_server'" }, "/usr/bin/python3": { code: 0 } });
  const result = await resolveServer(
    inputs({ pythonExtensionInstalled: true, pythonExtensionInterpreter: async () => "/proj/.venv/bin/python" }),
    probe,
    (l) => log.push(l),
  );
  assert.ok(result.ok && result.server.source === "python3 on PATH" && result.server.command === "/usr/bin/python3");
  assert.ok(log.some((l) => /step 4 failed/.test(l)));
  assert.ok(log.some((l) => /step 5/.test(l)));
});

test("nothing found: one message listing every failed step and the exact fix", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe([], {}, {});
  const result = await resolveServer(inputs({ pythonExtensionInstalled: false }), probe, (l) => log.push(l));
  assert.ok(!result.ok);
  assert.match(result.message, /no python3 on PATH/);
  assert.match(result.fix, /python3 -m pip install \/path\/to\/toolhost_runtime-VERSION-py3-none-any\.whl/);
  assert.doesNotMatch(result.fix, /pip install toolhost\b/);
  assert.ok(log.some((l) => /Python extension is not installed/.test(l)));
});

const BUNDLE: Bundle = { launcher: "/ext/bundled/tool/toolhost_serve.py", pythons: ["3.11", "3.12", "3.13", "3.14"], version: "0.1.0" };

test("3: the bundled server runs with python3 when no setting is given", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe([], { python3: "/usr/bin/python3" }, { "/usr/bin/python3": { code: 0, stdout: "3.12.4\n" } });
  const result = await resolveServer(inputs({ bundle: BUNDLE }), probe, (l) => log.push(l));
  assert.deepEqual(result, {
    ok: true,
    server: {
      command: "/usr/bin/python3",
      args: ["-I", BUNDLE.launcher, "serve"],
      source: "bundled",
      detail: "bundled toolhost 0.1.0, Python 3.12.4 at /usr/bin/python3",
    },
  });
  assert.ok(log.some((l) => /using the bundled server 0\.1\.0 with \/usr\/bin\/python3/.test(l)));
});

test("3: the settings still come before the bundled server", async () => {
  const probe = new ScriptedProbe(["/opt/th/bin/toolhost"], { python3: "/usr/bin/python3" }, { "/venv/bin/python": { code: 0 } });
  const byPath = await resolveServer(inputs({ serverPath: "/opt/th/bin/toolhost", bundle: BUNDLE }), probe, () => {});
  assert.ok(byPath.ok && byPath.server.source === "setting toolhost.server.path");
  const byPython = await resolveServer(inputs({ serverPython: "/venv/bin/python", bundle: BUNDLE }), probe, () => {});
  assert.ok(byPython.ok && byPython.server.source === "setting toolhost.server.python");
});

test("3: the Python extension's interpreter is preferred; a too-old one is passed over", async () => {
  const probe = new ScriptedProbe([], { python3: "/usr/bin/python3", "python3.13": "/usr/bin/python3.13" }, {
    "/proj/.venv/bin/python": { code: 0, stdout: "3.9.18\n" },
    "/usr/bin/python3": { code: 0, stdout: "3.10.2\n" },
    "/usr/bin/python3.13": { code: 0, stdout: "3.13.1\n" },
  });
  const ext = await resolveServer(
    inputs({ bundle: BUNDLE, pythonExtensionInstalled: true, pythonExtensionInterpreter: async () => "/proj/.venv/bin/python" }),
    probe,
    () => {},
  );
  assert.ok(ext.ok && ext.server.command === "/usr/bin/python3.13" && ext.server.source === "bundled");
  const good = new ScriptedProbe([], { python3: "/usr/bin/python3" }, {
    "/proj/.venv/bin/python": { code: 0, stdout: "3.11.9\n" },
    "/usr/bin/python3": { code: 0, stdout: "3.12.0\n" },
  });
  const preferred = await resolveServer(
    inputs({ bundle: BUNDLE, pythonExtensionInstalled: true, pythonExtensionInterpreter: async () => "/proj/.venv/bin/python" }),
    good,
    () => {},
  );
  assert.ok(preferred.ok && preferred.server.command === "/proj/.venv/bin/python");
});

test("3: only a too-old or missing Python: one message that names the fix", async () => {
  const old = new ScriptedProbe([], { python3: "/usr/bin/python3" }, { "/usr/bin/python3": { code: 0, stdout: "3.9.2\n" } });
  const tooOld = await resolveServer(inputs({ bundle: BUNDLE }), old, () => {});
  assert.ok(!tooOld.ok);
  assert.match(tooOld.message, /needs Python 3\.11 to 3\.14: \/usr\/bin\/python3 is Python 3\.9\.2 \(too old\)/);
  assert.match(tooOld.fix, /Install Python 3\.11 or newer/);
  const none = await resolveServer(inputs({ bundle: BUNDLE }), new ScriptedProbe([], {}, {}), () => {});
  assert.ok(!none.ok);
  assert.match(none.message, /no Python found/);
  assert.match(none.fix, /toolhost\.server\.path/);
});

test("toolhost.server.warm: every command found is started with serve --warm", async () => {
  const probe = new ScriptedProbe(["/opt/th/bin/toolhost"], { python3: "/usr/bin/python3" }, {
    "/venv/bin/python": { code: 0 },
    "/proj/.venv/bin/python": { code: 0 },
    "/usr/bin/python3": { code: 0, stdout: "3.12.4\n" },
  });
  const cases: [Partial<ResolutionInputs>, string, string[]][] = [
    [{ serverPath: "/opt/th/bin/toolhost" }, "/opt/th/bin/toolhost", ["serve"]],
    [{ serverPython: "/venv/bin/python" }, "/venv/bin/python", PYTHON_SERVE_ARGS],
    [{ bundle: BUNDLE }, "/usr/bin/python3", ["-I", BUNDLE.launcher, "serve"]],
    [{ pythonExtensionInstalled: true, pythonExtensionInterpreter: async () => "/proj/.venv/bin/python" }, "/proj/.venv/bin/python", PYTHON_SERVE_ARGS],
    [{}, "/usr/bin/python3", PYTHON_SERVE_ARGS],
  ];
  for (const [given, command, args] of cases) {
    const log: string[] = [];
    const warm = await resolveServer(inputs({ ...given, warm: true }), probe, (l) => log.push(l));
    assert.ok(warm.ok, JSON.stringify(given));
    assert.equal(warm.server.command, command);
    assert.deepEqual(warm.server.args, [...args, "--warm"]);
    assert.ok(log.some((l) => l === `server: toolhost.server.warm is on: ${command} ${[...args, "--warm"].join(" ")}`), log.join("\n"));
    const cold = await resolveServer(inputs(given), probe, () => {});
    assert.ok(cold.ok && cold.server.command === command);
    assert.deepEqual(cold.server.args, args);
  }
});

test("an interpreter inside a workspace folder (an agent can rewrite .venv) is never started on its own", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe([], { python3: "/usr/bin/python3" }, {
    "/proj/.venv/bin/python": { code: 0, stdout: "3.12.1\n" },
    "/usr/bin/python3": { code: 0, stdout: "3.11.2\n" },
  });
  const extension = { pythonExtensionInstalled: true, pythonExtensionInterpreter: async () => "/proj/.venv/bin/python" };
  const bundled = await resolveServer(inputs({ ...extension, bundle: BUNDLE, workspaceFolders: ["/proj"] }), probe, (l) => log.push(l));
  assert.ok(bundled.ok && bundled.server.command === "/usr/bin/python3", JSON.stringify(bundled));
  assert.ok(log.some((l) => /inside the workspace \/proj, where an agent can change it/.test(l)), log.join("\n"));
  assert.ok(!probe.runs.some((r) => r.startsWith("/proj/")), "the workspace interpreter never ran, not even as a probe");
  const development = await resolveServer(inputs({ ...extension, workspaceFolders: ["/proj"] }), probe, () => {});
  assert.ok(development.ok && development.server.source === "python3 on PATH", JSON.stringify(development));
  // Named in the user's toolhost.server.python, it is used: the user chose it.
  const named = await resolveServer(inputs({ serverPython: "/proj/.venv/bin/python", workspaceFolders: ["/proj"] }), probe, () => {});
  assert.ok(named.ok && named.server.command === "/proj/.venv/bin/python");
});

test("a folder is matched whole: /proj2 is not inside /proj", () => {
  assert.equal(workspaceFolderOf("/proj2/.venv/bin/python", ["/proj"]), undefined);
  assert.equal(workspaceFolderOf("/proj/sub/../.venv/bin/python", ["/proj/"]), "/proj/");
  assert.equal(workspaceFolderOf("/usr/bin/python3", ["/proj", "/other"]), undefined);
});
