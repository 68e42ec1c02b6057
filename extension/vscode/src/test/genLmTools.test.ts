import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const root = resolve(__dirname, "../..");
const fixture = readFileSync(resolve(root, "src/test/fixtures/tools.sample.json"), "utf8");

interface Generator {
  generate(packageText: string, toolsText: string): string;
}

async function generator(): Promise<Generator> {
  return (await import(pathToFileURL(resolve(root, "scripts/gen-lm-tools.mjs")).href)) as Generator;
}

test("every full-surface tool becomes a language-model tool with its schema", async () => {
  const { generate } = await generator();
  const pkg = JSON.parse(generate('{"name": "x", "contributes": {}}', fixture));
  const tools = pkg.contributes.languageModelTools;
  assert.deepEqual(tools.map((t: { name: string }) => t.name), ["toolhost_edit_file", "toolhost_read_file"]);
  const read = tools[1];
  assert.equal(read.modelDescription, "Read a text file of the workspace. Returns numbered lines.");
  assert.equal(read.userDescription, "Read a text file of the workspace.");
  assert.deepEqual(read.tags, ["toolhost", "readOnly"]);
  assert.deepEqual(read.inputSchema, JSON.parse(fixture).tools[0].inputSchema);
  // VS Code rejects canBeReferencedInPrompt without toolReferenceName.
  assert.equal(read.toolReferenceName, "toolhost_read_file");
  for (const tool of tools) {
    assert.match(tool.name, /^(?!copilot_|vscode_)[\w-]+$/);
  }
});

test("generation is stable: a second pass changes nothing (what --check relies on)", async () => {
  const { generate } = await generator();
  const once = generate('{"name": "x"}', fixture);
  assert.equal(generate(once, fixture), once);
});

test("package.json's languageModelTools are generated from the real schemas/tools.json", async () => {
  const { generate } = await generator();
  const packageText = readFileSync(resolve(root, "package.json"), "utf8");
  const tools = readFileSync(resolve(root, "../../schemas/tools.json"), "utf8");
  assert.equal(generate(packageText, tools), packageText, "run: node extension/vscode/scripts/gen-lm-tools.mjs");
  const full = JSON.parse(tools).surfaces.full.tools as string[];
  const contributed = JSON.parse(packageText).contributes.languageModelTools.map((t: { name: string }) => t.name);
  assert.deepEqual(contributed, full.map((name) => `toolhost_${name}`).sort());
});
