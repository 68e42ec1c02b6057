import assert from "node:assert/strict";
import { test } from "node:test";

import { checkpointRows, formatRevertResult, revertConfirmation } from "../common/checkpoints";
import type { CheckpointInfo } from "../common/protocol";

const BASH: CheckpointInfo = {
  callId: "c-7",
  session: "default",
  tool: "bash",
  time: Date.UTC(2026, 0, 2, 3, 4, 5) / 1000,
  label: "rm a.txt && mv b c",
  files: [
    { path: "a.txt", change: "deleted", fromPath: null, notStored: false },
    { path: "c", change: "moved", fromPath: "b", notStored: false },
    { path: "big.bin", change: "created", fromPath: null, notStored: true },
  ],
};

test("the confirmation names every file and what reverting does to it", () => {
  const { message, detail } = revertConfirmation(BASH);
  assert.equal(message, "Revert call c-7 (bash: rm a.txt && mv b c)? It will change:");
  assert.deepEqual(detail.split("\n").slice(0, 3), [
    "deleted a.txt → restored",
    "moved c (from b) → moved back",
    "created big.bin (not stored: cannot be restored) → removed",
  ]);
});

test("rows show the call, its tool and files", () => {
  const [row] = checkpointRows([BASH], new Date(Date.UTC(2030, 0, 1)));
  assert.equal(row.label, "$(discard) c-7");
  assert.equal(row.description, "2026-01-02 03:04 · bash · default · rm a.txt && mv b c");
  assert.equal(row.detail, "deleted a.txt, moved c (from b), created big.bin (not stored: cannot be restored)");
});

test("a revert's conflicts come with their diffs", () => {
  const text = formatRevertResult({
    reverted: ["a.txt"],
    conflicts: [{ path: "app.py", reason: "changed since the call, in the same lines the call changed", diff: "--- a/app.py\n+++ b/app.py\n-x\n+y\n" }],
    checkpoint: "revert-1",
    text: "Reverted 1 file(s) of call c-7.",
  });
  assert.match(text, /^Reverted 1 file\(s\) of call c-7\.\n\nchanged since the call: app\.py \(changed since/);
  assert.match(text, /\+y\n$/);
});
