import assert from "node:assert/strict";
import { test } from "node:test";

import { ConfirmedCalls, invokeLmTool, lmToolName, prepareInvocation, resultParts, toolFromLmName } from "../common/lmTools";
import { fenced, keepWhitespace } from "../common/markdown";
import type { CallParams, CallResult, PreviewParams, PreviewResult, ToolInfo } from "../common/protocol";
import { meta } from "./scriptedHost";

const reader: ToolInfo = { name: "read_file", description: "Read.", readOnly: true, inputSchema: {} };
const writer: ToolInfo = { name: "edit_file", description: "Edit.", readOnly: false, inputSchema: {} };

function ok(text: string): CallResult {
  return { callId: "c", isError: false, content: [{ type: "text", text }], meta: meta() };
}

test("names map both ways", () => {
  assert.equal(lmToolName("read_file"), "toolhost_read_file");
  assert.equal(toolFromLmName("toolhost_read_file"), "read_file");
  assert.equal(toolFromLmName("copilot_x"), undefined);
});

function previewOf(overrides: Partial<PreviewResult> = {}): PreviewResult {
  return {
    wouldAsk: true,
    title: "Edit a.py",
    summary: "Replace 1 occurrence in a.py",
    paths: ["/w/a.py"],
    risk: "medium",
    diff: "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-    x = 1\n+    x = 2\n     keep()\n",
    ...overrides,
  };
}

test("read-only tools get no confirmation and no preview", async () => {
  const asked: PreviewParams[] = [];
  const prepared = await prepareInvocation(reader, { path: "a.py" }, async (p) => (asked.push(p), previewOf()), new ConfirmedCalls());
  assert.equal(prepared.confirmation, undefined);
  assert.equal(asked.length, 0);
});

test("a writer's confirmation shows the real diff from toolhost/preview in a fenced diff block", async () => {
  const asked: PreviewParams[] = [];
  const input = { path: "a.py", old_string: "x = 1", new_string: "x = 2" };
  const prepared = await prepareInvocation(writer, input, async (p) => (asked.push(p), previewOf()), new ConfirmedCalls());
  assert.deepEqual(asked, [{ name: "edit_file", arguments: input, session: "vscode-lm" }]);
  assert.equal(prepared.confirmation?.title, "Edit a.py");
  // As a person sees it: the no-break spaces that keep indentation in VS Code's plain dialog.
  const message = (prepared.confirmation?.message ?? "").replace(/\u00a0/g, " ");
  // The +/- lines with their indentation, inside a diff fence.
  assert.match(message, /```diff\n--- a\/a\.py\n\+\+\+ b\/a\.py\n@@ -1,2 \+1,2 @@\n- {4}x = 1\n\+ {4}x = 2\n {5}keep\(\)\n```/);
  assert.match(message, /Replace 1 occurrence/);
  assert.match(prepared.invocationMessage, /edit_file a\.py/);
});

test("a diff with backtick fences inside gets a longer fence", () => {
  assert.equal(fenced("```\ncode\n```", "diff"), "````diff\n```\ncode\n```\n````");
});

test("indentation and runs of spaces survive a dialog that collapses whitespace", () => {
  assert.equal(keepWhitespace("-    x  =\t1\n a"), "-\u00a0\u00a0\u00a0\u00a0x\u00a0\u00a0=\u00a0\u00a0\u00a0\u00a01\n\u00a0a");
  assert.equal(keepWhitespace("one space"), "one space");
});

test("a bash confirmation shows command, folder, foreground/timeout and sandbox", async () => {
  const bash: ToolInfo = { name: "bash", description: "Run.", readOnly: false, inputSchema: {} };
  const preview = previewOf({ title: "Run: make  test", diff: null, paths: [], cwd: "/w/sub", background: false, timeoutMs: 60000, sandbox: "read-only" });
  const prepared = await prepareInvocation(bash, { command: "make  test" }, async () => preview, new ConfirmedCalls());
  const message = (prepared.confirmation?.message ?? "").replace(/\u00a0/g, " ");
  assert.match(message, /```text\nCommand:\n {4}make {2}test\nFolder: \/w\/sub\nRuns: in the foreground, stopped after 60 s\nSandbox: read-only/);
});

test("nothing to confirm when the preview says policy allows it or refuses it; then no preApproved either", async () => {
  const confirmed = new ConfirmedCalls();
  const allowed = await prepareInvocation(writer, { path: "a.py" }, async () => previewOf({ wouldAsk: false }), confirmed);
  assert.equal(allowed.confirmation, undefined);
  const error = { code: "FS_NOT_OBSERVED", message: "read a.py first", recovery: "read_file it" };
  const refused = await prepareInvocation(writer, { path: "a.py" }, async () => previewOf({ wouldAsk: false, error }), confirmed);
  assert.equal(refused.confirmation, undefined);
  const sent: CallParams[] = [];
  await invokeLmTool(async (p) => (sent.push(p), ok("x")), writer, { path: "a.py" }, confirmed);
  assert.equal(sent[0].preApproved, undefined);
});

test("when the preview fails the confirmation shows the arguments with their whitespace", async () => {
  const prepared = await prepareInvocation(
    writer,
    { path: "a.py", new_string: "  two  spaces\n\tand a tab" },
    async () => {
      throw new Error("the toolhost server is stopped");
    },
    new ConfirmedCalls(),
  );
  const message = prepared.confirmation?.message ?? "";
  assert.match(message, /could not be previewed \(the toolhost server is stopped\)/);
  assert.match(message, /```json\n[^]*"new_string": " {2}two {2}spaces\\n\\tand a tab"/);
});

test("a reader is forwarded to toolhost/call without a client approval", async () => {
  const sent: CallParams[] = [];
  const parts = await invokeLmTool(async (p) => (sent.push(p), ok("1\thello")), reader, { path: "a.py" });
  assert.deepEqual(parts, ["1\thello"]);
  assert.equal(sent[0].name, "read_file");
  assert.deepEqual(sent[0].arguments, { path: "a.py" });
  assert.equal(sent[0].session, "vscode-lm");
  assert.equal(sent[0].preApproved, undefined);
});

test("a writer the user confirmed carries preApproved once, so the server does not prompt twice", async () => {
  const confirmed = new ConfirmedCalls();
  await prepareInvocation(writer, { path: "a.py" }, async () => previewOf(), confirmed);
  const sent: CallParams[] = [];
  await invokeLmTool(async (p) => (sent.push(p), ok("edited")), writer, { path: "a.py" }, confirmed);
  assert.equal(sent[0].preApproved, true);
  assert.notEqual(sent[0].callId, undefined);
  // Another call with the same input was not confirmed: the server asks.
  await invokeLmTool(async (p) => (sent.push(p), ok("edited")), writer, { path: "a.py" }, confirmed);
  assert.equal(sent[1].preApproved, undefined);
});

test("errors and images become text the model can act on", () => {
  const error: CallResult = {
    callId: "c",
    isError: true,
    content: [{ type: "text", text: "FS_STALE_VERSION: changed; read it again" }],
    error: { code: "FS_STALE_VERSION", message: "FS_STALE_VERSION: changed; read it again", recovery: "read it again" },
    meta: meta(),
  };
  assert.deepEqual(resultParts(error), ["FS_STALE_VERSION: changed; read it again"]);
  const image: CallResult = { callId: "c", isError: false, content: [{ type: "image", mimeType: "image/png", data: "AAAA" }], meta: meta() };
  assert.deepEqual(resultParts(image), ["[image image/png, 3 bytes]"]);
  assert.deepEqual(resultParts({ callId: "c", isError: false, content: [], meta: meta() }), ["(no output)"]);
});
