import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

import { ALLOW_ONCE, ALLOW_SESSION, ALWAYS_ALLOW, approvalDetail, askApproval, DECISION_COMMANDS, DECISIONS, DENY, validateRule } from "../common/approvals";
import type { ApproveParams } from "../common/protocol";
import { ScriptedHost } from "./scriptedHost";

const FILE = "/home/user/project/src/app.py";

function params(overrides: Partial<ApproveParams> = {}): ApproveParams {
  return {
    callId: "c-1",
    session: "default",
    tool: "edit_file",
    readOnly: false,
    title: "Edit src/app.py",
    summary: "Replace one line in src/app.py",
    arguments: { path: "src/app.py", old_string: "a = 1", new_string: "a = 2" },
    paths: [FILE],
    diff: "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3\n",
    risk: "medium",
    suggestedRules: ["Edit(src/app.py)", "Edit(src/**)"],
    ...overrides,
  };
}

function bash(overrides: Partial<ApproveParams> = {}): ApproveParams {
  return params({
    tool: "bash",
    title: "Run: npm test",
    summary: "Run the tests",
    arguments: { command: "npm test\n  -- --watch=false" },
    paths: [],
    diff: null,
    cwd: "/home/user/project/web",
    background: false,
    timeoutMs: 120000,
    sandbox: "workspace-write",
    client: "Copilot Chat",
    suggestedRules: ["bash(npm test)"],
    ...overrides,
  });
}

const WITH_FILE = { [FILE]: "a = 1\nb = 3\n" };

test("a file change opens in the diff editor first, with the decisions, and no modal over it", async () => {
  const host = new ScriptedHost([ALLOW_ONCE], [], WITH_FILE);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_once" });
  assert.equal(host.modals.length, 0);
  const shown = host.diffs[0];
  assert.equal(shown.title, "Approve? Edit src/app.py");
  assert.equal(shown.before, "a = 1\nb = 3\n");
  assert.equal(shown.after, "a = 2\nb = 3\n");
  assert.equal(shown.path, FILE);
  assert.match(shown.detail, /\/home\/user\/project\/src\/app\.py/);
  assert.match(shown.detail, /Risk: medium/);
  assert.match(shown.detail, /Replace one line/);
  // The decision closes the approval editor.
  assert.equal(host.closedPrompts, 1);
});

test("Deny is always the last decision, for writers and commands alike", async () => {
  assert.deepEqual([...DECISIONS], [ALLOW_ONCE, ALLOW_SESSION, ALWAYS_ALLOW, DENY]);
  const host = new ScriptedHost([ALLOW_ONCE]);
  await askApproval(host, bash());
  assert.deepEqual(host.modals[0].items, DECISIONS);
});

test("a change that does not apply to the file as it is now shows the patch with the same decisions", async () => {
  const host = new ScriptedHost([ALLOW_ONCE], [], { [FILE]: "something else\n" });
  await askApproval(host, params());
  assert.equal(host.diffs[0].patch, params().diff);
  assert.equal(host.diffs[0].before, undefined);
});

test("a change to several files shows the whole patch", async () => {
  const diff = `${params().diff}--- a/src/b.py\n+++ b/src/b.py\n@@ -1 +1 @@\n-x\n+y\n`;
  const host = new ScriptedHost([ALLOW_ONCE], [], WITH_FILE);
  await askApproval(host, params({ diff }));
  assert.equal(host.diffs[0].patch, diff);
});

test("a new file is a diff against nothing", async () => {
  const host = new ScriptedHost([ALLOW_ONCE]);
  await askApproval(host, params({ diff: "--- /dev/null\n+++ b/src/app.py\n@@ -0,0 +1,2 @@\n+x\n+y\n" }));
  assert.equal(host.diffs[0].before, "");
  assert.equal(host.diffs[0].after, "x\ny\n");
});

test("a bash approval shows the command (whitespace kept), folder, foreground and timeout, sandbox and who asks", async () => {
  const host = new ScriptedHost([ALLOW_ONCE]);
  await askApproval(host, bash());
  const detail = host.modals[0].detail;
  assert.match(detail, /Command:\n {4}npm test\n {6}-- --watch=false/);
  assert.match(detail, /Folder: \/home\/user\/project\/web/);
  assert.match(detail, /Runs: in the foreground, stopped after 120 s/);
  assert.match(detail, /Sandbox: workspace-write/);
  assert.match(detail, /from Copilot Chat, session default/);
  assert.equal(host.diffs.length, 0);
});

test("a background bash approval says it keeps running", () => {
  assert.match(approvalDetail(bash({ background: true, timeoutMs: null })), /Runs: in the background/);
  assert.match(approvalDetail(bash({ sandbox: "none" })), /Sandbox: none \(not sandboxed/);
  assert.match(approvalDetail(bash({ sandbox: "workspace-write+network" })), /Sandbox: workspace-write \(may write inside the workspace only\), with network access/);
});

test("allow for session carries the first suggested rule", async () => {
  const host = new ScriptedHost([ALLOW_SESSION], [], WITH_FILE);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_session", rule: "Edit(src/app.py)" });
});

test("always allow offers the first suggested rule, editable, and sends the edited rule", async () => {
  const host = new ScriptedHost([ALWAYS_ALLOW], ["  Edit(src/**)  "], WITH_FILE);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_always", rule: "Edit(src/**)" });
  assert.equal(host.inputBoxes[0].value, "Edit(src/app.py)");
});

test("always allow, then Escape in the rule box, goes back to the same diff", async () => {
  const host = new ScriptedHost([ALWAYS_ALLOW, DENY], [undefined, ""], WITH_FILE);
  assert.deepEqual(await askApproval(host, params()), { decision: "deny" });
  assert.equal(host.diffs.length, 1);
});

test("an invalid edited rule is explained and the decision asked again", async () => {
  const host = new ScriptedHost([ALWAYS_ALLOW, ALLOW_ONCE], ["not a rule!"], WITH_FILE);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_once" });
  assert.equal(host.infos.length, 1);
  assert.equal(validateRule("bash(npm:*)"), undefined);
  assert.equal(validateRule("Edit"), undefined);
  assert.notEqual(validateRule(""), undefined);
});

test("deny asks an optional reason and sends it; Escape on the reason goes back", async () => {
  const host = new ScriptedHost([DENY], ["wrong file"], WITH_FILE);
  assert.deepEqual(await askApproval(host, params()), { decision: "deny", reason: "wrong file" });
  const silent = new ScriptedHost([DENY], [""], WITH_FILE);
  assert.deepEqual(await askApproval(silent, params()), { decision: "deny" });
  const back = new ScriptedHost([DENY, ALLOW_ONCE], [undefined], WITH_FILE);
  assert.deepEqual(await askApproval(back, params()), { decision: "allow_once" });
});

test("closing the diff or escaping the modal is reported as a dismissal, not as the user's words", async () => {
  const closed = new ScriptedHost([undefined], [], WITH_FILE);
  assert.deepEqual(await askApproval(closed, params()), { decision: "deny", dismissed: true });
  const escaped = new ScriptedHost([undefined]);
  assert.deepEqual(await askApproval(escaped, bash()), { decision: "deny", dismissed: true });
});

test("the server giving up closes the approval editor", async () => {
  const host = new ScriptedHost([], [], WITH_FILE);
  let release: (choice: string | undefined) => void = () => {};
  host.showApprovalDiff = async () => ({
    next: () => new Promise((resolve) => (release = resolve)),
    close: () => release(undefined),
  });
  const abandoned = new AbortController();
  const answer = askApproval(host, params(), abandoned.signal);
  await new Promise((resolve) => setImmediate(resolve));
  abandoned.abort();
  assert.deepEqual(await answer, { decision: "deny", dismissed: true });
});

test("package.json puts exactly these decisions, in this order, on the approval editor's title bar", () => {
  const pkg = JSON.parse(readFileSync(resolve(__dirname, "../../package.json"), "utf8")) as {
    contributes: { commands: { command: string; title: string }[]; menus: Record<string, { command: string; when: string; group?: string }[]> };
  };
  const titleBar = pkg.contributes.menus["editor/title"].filter((item) => item.command.startsWith("toolhost.approval."));
  assert.deepEqual(titleBar.map((item) => item.command), [...DECISION_COMMANDS]);
  assert.ok(titleBar.every((item) => item.when === "resourceScheme == toolhost-approval" && item.group?.startsWith("navigation")));
  const titles = DECISION_COMMANDS.map((command) => pkg.contributes.commands.find((c) => c.command === command)?.title);
  assert.deepEqual(titles, [...DECISIONS]);
});
