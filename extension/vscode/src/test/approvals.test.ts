import assert from "node:assert/strict";
import { test } from "node:test";

import { ALLOW_ONCE, ALLOW_SESSION, ALWAYS_ALLOW, askApproval, DENY, SHOW_DIFF, validateRule } from "../common/approvals";
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

test("the modal shows title, real paths, risk and summary with every button", async () => {
  const host = new ScriptedHost([ALLOW_ONCE]);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_once" });
  const modal = host.modals[0];
  assert.equal(modal.message, "Edit src/app.py");
  assert.match(modal.detail, /\/home\/user\/project\/src\/app\.py/);
  assert.match(modal.detail, /Risk: medium/);
  assert.match(modal.detail, /Replace one line/);
  assert.deepEqual(modal.items, [ALLOW_ONCE, ALLOW_SESSION, ALWAYS_ALLOW, SHOW_DIFF, DENY]);
});

test("no diff, no Show diff button", async () => {
  const host = new ScriptedHost([ALLOW_ONCE]);
  await askApproval(host, params({ tool: "bash", diff: null, suggestedRules: ["bash(npm test)"] }));
  assert.ok(!host.modals[0].items.includes(SHOW_DIFF));
});

test("allow for session carries the first suggested rule", async () => {
  const host = new ScriptedHost([ALLOW_SESSION]);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_session", rule: "Edit(src/app.py)" });
});

test("always allow offers the first suggested rule, editable, and sends the edited rule", async () => {
  const host = new ScriptedHost([ALWAYS_ALLOW], ["  Edit(src/**)  "]);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_always", rule: "Edit(src/**)" });
  assert.equal(host.inputBoxes[0].value, "Edit(src/app.py)");
});

test("always allow, then Escape in the rule box, goes back to the modal", async () => {
  const host = new ScriptedHost([ALWAYS_ALLOW, DENY], [undefined, ""]);
  assert.deepEqual(await askApproval(host, params()), { decision: "deny" });
  assert.equal(host.modals.length, 2);
});

test("an invalid edited rule is explained and the modal asked again", async () => {
  const host = new ScriptedHost([ALWAYS_ALLOW, ALLOW_ONCE], ["not a rule!"]);
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_once" });
  assert.equal(host.infos.length, 1);
  assert.equal(validateRule("bash(npm:*)"), undefined);
  assert.equal(validateRule("Edit"), undefined);
  assert.notEqual(validateRule(""), undefined);
});

test("deny asks an optional reason and sends it", async () => {
  const host = new ScriptedHost([DENY], ["wrong file"]);
  assert.deepEqual(await askApproval(host, params()), { decision: "deny", reason: "wrong file" });
  const silent = new ScriptedHost([DENY], [undefined]);
  assert.deepEqual(await askApproval(silent, params()), { decision: "deny" });
});

test("cancel or escape is a deny", async () => {
  const host = new ScriptedHost([undefined]);
  const result = await askApproval(host, params());
  assert.equal(result.decision, "deny");
});

test("show diff opens the diff editor on current and proposed text, then asks again", async () => {
  const host = new ScriptedHost([SHOW_DIFF, ALLOW_ONCE], [], { [FILE]: "a = 1\nb = 3\n" });
  assert.deepEqual(await askApproval(host, params()), { decision: "allow_once" });
  assert.equal(host.modals.length, 2);
  assert.deepEqual(host.diffs[0], { title: "Edit src/app.py (proposed)", before: "a = 1\nb = 3\n", after: "a = 2\nb = 3\n", path: FILE });
});

test("show diff that does not apply shows the patch text instead", async () => {
  const host = new ScriptedHost([SHOW_DIFF, DENY], [undefined], { [FILE]: "something else\n" });
  await askApproval(host, params());
  assert.equal(host.diffs.length, 0);
  assert.equal(host.documents[0].language, "diff");
});
