import assert from "node:assert/strict";
import { test } from "node:test";

import { invokeLmTool, lmToolName, prepareInvocation, resultParts, toolFromLmName } from "../common/lmTools";
import type { CallParams, CallResult, ToolInfo } from "../common/protocol";
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

test("read-only tools get no confirmation; writers get VS Code's confirmation with the input", () => {
  assert.equal(prepareInvocation(reader, { path: "a.py" }).confirmation, undefined);
  const prepared = prepareInvocation(writer, { path: "a.py", old_string: "x", new_string: "y" });
  assert.equal(prepared.confirmation?.title, "Run toolhost edit_file?");
  assert.match(prepared.confirmation?.message ?? "", /path: a\.py/);
  assert.match(prepared.invocationMessage, /edit_file a\.py/);
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

test("a writer carries preApproved so the server does not prompt twice", async () => {
  const sent: CallParams[] = [];
  await invokeLmTool(async (p) => (sent.push(p), ok("edited")), writer, { path: "a.py" });
  assert.equal(sent[0].preApproved, true);
  assert.notEqual(sent[0].callId, undefined);
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
