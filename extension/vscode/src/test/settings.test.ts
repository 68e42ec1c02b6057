import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

import { buildInitializationOptions, serverSettingKeys, type SettingValues } from "../common/settings";

const packageJson = JSON.parse(readFileSync(resolve(__dirname, "../../package.json"), "utf8"));

test("server-bound keys come from package.json; client-only ones stay out", () => {
  const keys = serverSettingKeys(packageJson);
  assert.ok(keys.includes("toolhost.policy.mode"));
  assert.ok(keys.includes("toolhost.lsp.servers"));
  assert.ok(!keys.some((k) => k.startsWith("toolhost.server.") || k.startsWith("toolhost.trace.")));
});

test("only settings the user set are sent, nested and camelCase", () => {
  const values: Record<string, SettingValues> = {
    "toolhost.policy.allow": { globalValue: ["bash(git status)"] },
    "toolhost.policy.mode": { globalValue: "acceptEdits", workspaceValue: "default" },
    "toolhost.shell.defaultTimeoutMs": {},
  };
  const options = buildInitializationOptions(Object.keys(values), (k) => values[k], true);
  assert.deepEqual(options, {
    toolhost: { policy: { allow: ["bash(git status)"], mode: "default" }, workspaceTrusted: true },
  });
});

test("untrusted workspace: readOnly, workspaceTrusted false, workspace values ignored", () => {
  const values: Record<string, SettingValues> = {
    "toolhost.policy.allow": { workspaceValue: ["bash(rm:*)"] },
    "toolhost.policy.mode": { globalValue: "bypass" },
    "toolhost.policy.deny": { globalValue: ["bash(curl:*)"] },
  };
  const options = buildInitializationOptions(Object.keys(values), (k) => values[k], false);
  assert.deepEqual(options, {
    toolhost: { policy: { mode: "readOnly", deny: ["bash(curl:*)"] }, workspaceTrusted: false },
  });
});
