import assert from "node:assert/strict";
import { test } from "node:test";

import { PYTHON_SERVE_ARGS, resolveServer, type ResolutionInputs } from "../common/serverResolution";
import { ScriptedProbe } from "./scriptedHost";

function inputs(overrides: Partial<ResolutionInputs> = {}): ResolutionInputs {
  return {
    serverPath: "",
    serverPython: "",
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

test("2: an interpreter without toolhost is an error naming pip install for it", async () => {
  const probe = new ScriptedProbe([], {}, { "/venv/bin/python": { code: 1, stderr: "Traceback...\nModuleNotFoundError: No module named 'lsp_server'" } });
  const result = await resolveServer(inputs({ serverPython: "/venv/bin/python" }), probe, () => {});
  assert.ok(!result.ok);
  assert.match(result.message, /No module named 'lsp_server'/);
  assert.match(result.fix, /\/venv\/bin\/python -m pip install toolhost/);
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
    ["1", "2", "3"],
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
  assert.ok(log.some((l) => /step 3 failed/.test(l)));
  assert.ok(log.some((l) => /step 4/.test(l)));
});

test("nothing found: one message listing every failed step and the exact fix", async () => {
  const log: string[] = [];
  const probe = new ScriptedProbe([], {}, {});
  const result = await resolveServer(inputs({ pythonExtensionInstalled: false }), probe, (l) => log.push(l));
  assert.ok(!result.ok);
  assert.match(result.message, /no python3 on PATH/);
  assert.match(result.fix, /pip install toolhost/);
  assert.ok(log.some((l) => /Python extension is not installed/.test(l)));
});
