import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

import {
  answerConfiguration,
  buildInitializationOptions,
  declaredSettingKeys,
  effectiveValue,
  ignoredWorkspaceKeys,
  serverSettingKeys,
  type SettingValues,
  settingsFileKeys,
  userOnlySettingKeys,
} from "../common/settings";

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
  const options = buildInitializationOptions(Object.keys(values), (k) => values[k], true, userOnlySettingKeys(packageJson));
  // policy.mode is user-only: the workspace's "default" does not replace the user's choice.
  assert.deepEqual(options, {
    toolhost: { policy: { allow: ["bash(git status)"], mode: "acceptEdits" }, workspaceTrusted: true },
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

// Every setting that loosens policy or chooses the command that runs: only user settings
// may set it (scope "machine"; VS Code ignores such a value in workspace/folder settings).
const LOOSENING = [
  "toolhost.server.path",
  "toolhost.server.python",
  "toolhost.server.warm",
  "toolhost.policy.mode",
  "toolhost.policy.allow",
  "toolhost.policy.unattended",
  "toolhost.policy.readOnlyCommands",
  "toolhost.workspace.extraRoots",
  "toolhost.workspace.readableRoots",
  "toolhost.workspace.allowedSecrets",
  "toolhost.shell.sandbox",
  "toolhost.shell.sandboxNetwork",
  "toolhost.lsp.servers",
  "toolhost.web.allowLoopback",
  // A workspace value would replace the user's list of isolated sessions, not add to it.
  "toolhost.sessions.isolated",
];

test("every loosening setting is declared user-only (scope machine), and restricted when untrusted", () => {
  const userOnly = userOnlySettingKeys(packageJson);
  for (const key of LOOSENING) {
    assert.ok(userOnly.has(key), `${key} must have "scope": "machine"`);
  }
  const restricted: string[] = packageJson.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const key of userOnly) {
    assert.ok(restricted.includes(key), `${key} missing from restrictedConfigurations`);
  }
  // Tightening settings may still come from a workspace.
  for (const key of ["toolhost.policy.deny", "toolhost.policy.ask", "toolhost.workspace.secretPatterns"]) {
    assert.ok(!userOnly.has(key), key);
  }
});

test("trusted workspace: a workspace or folder value of a loosening key never reaches the server", () => {
  // What an agent writes into .vscode/settings.json (issue 41).
  const values: Record<string, SettingValues> = {
    "toolhost.shell.sandbox": { workspaceFolderValue: "off" },
    "toolhost.policy.mode": { globalValue: "default", workspaceValue: "bypass" },
    "toolhost.policy.allow": { workspaceFolderValue: ["Bash"] },
    "toolhost.policy.deny": { workspaceValue: ["bash(curl:*)"] },
  };
  const userOnly = userOnlySettingKeys(packageJson);
  const options = buildInitializationOptions(Object.keys(values), (k) => values[k], true, userOnly);
  assert.deepEqual(options, {
    toolhost: { policy: { mode: "default", deny: ["bash(curl:*)"] }, workspaceTrusted: true },
  });
  assert.equal(effectiveValue({ workspaceFolderValue: "/evil/toolhost" }, true, true), undefined);
  assert.equal(effectiveValue({ globalValue: "/usr/bin/toolhost", workspaceValue: "/evil" }, true, true), "/usr/bin/toolhost");
});

test("workspace/configuration is answered from the declared settings only", () => {
  const section = { policy: { mode: "default", deny: ["bash(rm:*)"] } };
  assert.deepEqual(answerConfiguration(["toolhost", "toolhost.policy", "toolhost.policy.mode", "toolhost.shell", "python", undefined], section), [
    section,
    section.policy,
    "default",
    null,
    null,
    null,
  ]);
});

test("the workspace values that were ignored are named: inspected, and read from the file", () => {
  const userOnly = userOnlySettingKeys(packageJson);
  const declared = declaredSettingKeys(packageJson);
  const values: Record<string, SettingValues> = { "toolhost.policy.allow": { workspaceValue: ["Bash"] } };
  const file = `{
    // "toolhost.web.allowLoopback": true,   (a comment is not a setting)
    "toolhost.shell.sandbox": "off",
    "toolhost.shell": { "sandboxNetwork": true },
    "toolhost.policy.trustedRoots": ["/"],
    "toolhost.policy.deny": ["bash(curl:*)"],
    "editor.fontSize": 14
  }`;
  assert.deepEqual(settingsFileKeys(file), ["toolhost.shell.sandbox", "toolhost.shell", "toolhost.policy.trustedRoots", "toolhost.policy.deny"]);
  assert.deepEqual(ignoredWorkspaceKeys(userOnly, declared, (k) => values[k], settingsFileKeys(file)), [
    "toolhost.policy.allow",
    "toolhost.policy.trustedRoots",
    "toolhost.shell",
    "toolhost.shell.sandbox",
  ]);
});
