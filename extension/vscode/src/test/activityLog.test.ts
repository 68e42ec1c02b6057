import assert from "node:assert/strict";
import { test } from "node:test";

import { ActivityLog } from "../common/activityLog";
import type { DidCallParams } from "../common/protocol";
import { meta } from "./scriptedHost";

function didCall(callId: string, overrides: Partial<DidCallParams> = {}): DidCallParams {
  return { callId, session: "vscode", tool: "read_file", decision: null, rule: null, code: null, isError: false, durationMs: 2, paths: ["/w/a.txt"], ...overrides };
}

test("every row, newest first, shows the result of a call this editor made", () => {
  const log = new ActivityLog();
  log.record(didCall("c-1"), new Date("2026-01-01T10:00:00Z"));
  log.keep({ name: "read_file", arguments: { path: "a.txt" } }, { callId: "c-1", isError: false, content: [{ type: "text", text: "1→hello" }], meta: meta() });
  log.record(didCall("c-2", { tool: "edit_file", isError: true, code: "FS_NOT_OBSERVED" }), new Date("2026-01-01T10:00:01Z"));
  const rows = log.rows();
  assert.deepEqual(rows.map((row) => row.label), ["$(error) edit_file", "$(pass) read_file"]);
  assert.match(rows[0].description ?? "", /error FS_NOT_OBSERVED · 2\.0 ms · vscode\/c-2 · 10:00:01/);
  const shown = log.resultDocument(rows[1].entry);
  assert.match(shown, /# toolhost read_file: ok/);
  assert.match(shown, /1→hello/);
  assert.match(shown, /`\{"path":"a\.txt"\}`/);
});

test("a row of another client's call says why its result is not here", () => {
  const log = new ActivityLog();
  log.record(didCall("m-1", { session: "mcp-claude", decision: "allow_once" }), new Date());
  const shown = log.resultDocument(log.rows()[0].entry);
  assert.match(shown, /# toolhost read_file: ok/);
  assert.match(shown, /session mcp-claude/);
  assert.match(shown, /not in this editor: another client made this call/);
  assert.match(shown, /\*\*Approval:\*\* allow_once/);
});

test("the list groups the calls by session, its agent named, the newest group first", () => {
  const log = new ActivityLog();
  log.record(didCall("c-1", { session: "claude", agent: "claude-code" }), new Date("2026-01-01T10:00:00Z"));
  log.record(didCall("c-2", { session: "codex" }), new Date("2026-01-01T10:00:01Z"));
  log.record(didCall("c-3", { session: "claude", agent: "claude-code" }), new Date("2026-01-01T10:00:02Z"));
  const labels = log.groupedRows().map((row) => ("separator" in row ? `-- ${row.label}` : row.entry.call.callId));
  assert.deepEqual(labels, ["-- claude-code · session claude", "c-3", "c-1", "-- session codex", "c-2"]);
});
