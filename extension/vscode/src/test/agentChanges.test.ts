import assert from "node:assert/strict";
import { test } from "node:test";

import { agentRows, formatRevertAllResult, formatSessionChanges, revertAllConfirmation } from "../common/agentChanges";
import type { CheckpointInfo } from "../common/protocol";

function checkpoint(callId: string, session: string, agent: string | null, path: string, tool = "edit_file"): CheckpointInfo {
  return {
    callId,
    session,
    agent,
    tool,
    time: 0,
    label: "",
    files: [{ path, change: "modified", fromPath: null, notStored: false }],
  };
}

test("rows group the calls by session and name the agent", () => {
  const rows = agentRows([
    checkpoint("c-3", "codex-1", "codex-mcp-client", "a.py"),
    checkpoint("c-2", "claude", "claude-code", "b.py", "bash"),
    checkpoint("c-1", "codex-1", "codex-mcp-client", "a.py"),
  ]);
  assert.deepEqual(
    rows.map((r) => [r.label, r.description, r.detail]),
    [
      ["$(person) codex-mcp-client", "session codex-1 · 2 call(s) · 1 file(s)", "edit_file: a.py"],
      ["$(person) claude-code", "session claude · 1 call(s) · 1 file(s)", "bash: b.py"],
    ],
  );
  assert.equal(agentRows([checkpoint("c-1", "cli", null, "x")])[0].label, "$(person) cli");
});

test("the confirmation says what reverting all does", () => {
  const [row] = agentRows([checkpoint("c-1", "codex-1", "codex", "a.py")]);
  const { message, detail } = revertAllConfirmation(row);
  assert.equal(message, "Revert all 1 call(s) of codex (session codex-1)?");
  assert.match(detail, /newest first/);
  assert.match(detail, /left alone and listed/);
});

test("the review and the result read as text", () => {
  const review = formatSessionChanges({
    session: "s",
    agent: "codex",
    calls: ["c-1", "c-2"],
    files: [{ path: "a.py", change: "modified", fromPath: null, notStored: false }],
    diff: "--- a/a.py\n+++ b/a.py\n-x\n+y\n",
    text: "session s (codex) changed 1 file(s) in 2 call(s).",
  });
  assert.equal(
    review,
    "# session s (codex) changed 1 file(s) in 2 call(s).\n# calls, oldest first: c-1, c-2\n# modified a.py\n--- a/a.py\n+++ b/a.py\n-x\n+y\n",
  );
  const result = formatRevertAllResult({
    reverted: [],
    conflicts: [{ path: "a.py", reason: "changed since the call (call c-2)", diff: "-y\n+z\n" }],
    calls: ["c-2", "c-1"],
    checkpoints: [],
    text: "Reverted 2 call(s) of session s, newest first: 0 file(s) put back.",
  });
  assert.match(result, /changed since: a.py \(changed since the call \(call c-2\)\)\n-y\n\+z/);
});
