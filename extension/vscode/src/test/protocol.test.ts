import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { METHODS } from "../common/protocol";
import { TOOLHOST_METHODS } from "../common/protocol.generated";

const root = resolve(__dirname, "../..");

test("the extension knows every toolhost/* method of schemas/protocol.json, and no other", () => {
  assert.deepEqual(new Set(Object.values(METHODS)), new Set(TOOLHOST_METHODS.map((m) => m.method)));
});

test("the generated types match schemas/protocol.json (what --check enforces)", async () => {
  const generator = (await import(pathToFileURL(resolve(root, "scripts/gen-protocol.mjs")).href)) as {
    generate(text: string): string;
    typeOf(schema: unknown): string;
  };
  const schema = readFileSync(resolve(root, "../../schemas/protocol.json"), "utf8");
  assert.equal(generator.generate(schema), readFileSync(resolve(root, "src/common/protocol.generated.ts"), "utf8"));
  assert.equal(generator.typeOf({ anyOf: [{ type: "string" }, { type: "null" }] }), "string | null");
  assert.equal(generator.typeOf({ type: "array", items: { enum: ["a", "b"] } }), '("a" | "b")[]');
  assert.equal(generator.typeOf({ type: "object", additionalProperties: { type: "string" } }), "Record<string, string>");
  assert.equal(generator.typeOf({}), "unknown");
});
