import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

import type { ToolInfo } from "../common/protocol";
import { firstSentence, parameterSummary, toolPickItem } from "../common/runTool";

// The contract as generated (schemas/tools.json), from the extension folder where npm test runs.
const contract = JSON.parse(readFileSync(resolve("../../schemas/tools.json"), "utf8")) as { tools: ToolInfo[] };
const byName = new Map(contract.tools.map((tool) => [tool.name, tool]));

test("Run Tool... shows one row a tool: its mark and parameters, not the whole description", () => {
  const edit = toolPickItem(byName.get("edit_file")!);
  assert.equal(edit.label, "edit_file");
  assert.equal(edit.description, "writes · path, old_string, new_string, replace_all?");
  assert.ok(!edit.detail.includes("\n") && edit.detail.length < byName.get("edit_file")!.description.length);
  const read = toolPickItem(byName.get("read_file")!);
  assert.match(read.description, /^read-only · path, .*limit\?, offset\?$/);
  assert.equal(read.detail, "Read a text file from the workspace.");
  assert.equal(toolPickItem(byName.get("get_goal")!).description, "read-only");
  assert.equal(toolPickItem(byName.get("todo_write")!).description, "read-only · todos");
});

test("parameters: required ones in the schema's order, then optional ones alphabetically", () => {
  const tool: ToolInfo = {
    name: "t",
    description: "T.",
    readOnly: true,
    inputSchema: { required: ["b", "a"], properties: { z: {}, a: {}, b: {}, c: {} } },
  };
  assert.equal(parameterSummary(tool), "b, a, c?, z?");
});

test("the first sentence keeps e.g. inside it", () => {
  assert.equal(firstSentence("Find files (e.g. src). More here."), "Find files (e.g. src).");
});
