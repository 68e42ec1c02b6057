import assert from "node:assert/strict";
import { test } from "node:test";

import { isEmptyAnswer, isProxyMethod, toLspDiagnosticReport, toLspHover, toLspLocations } from "../common/lspProxy";

const range = { start: { line: 10, character: 16 }, end: { line: 10, character: 26 } };
const uri = { toString: () => "file:///w/src/shapes.ts" };

test("locations and location links become LSP locations (the link's selection range)", () => {
  const link = { targetUri: uri, targetRange: { start: { line: 9, character: 0 }, end: { line: 12, character: 1 } }, targetSelectionRange: range };
  assert.deepEqual(toLspLocations([{ uri, range }, link]), [
    { uri: "file:///w/src/shapes.ts", range },
    { uri: "file:///w/src/shapes.ts", range },
  ]);
  assert.deepEqual(toLspLocations(undefined), []);
});

test("hover contents keep code blocks as MarkedStrings and markdown as markup", () => {
  assert.deepEqual(toLspHover([{ contents: [{ language: "typescript", value: "function makeCircle(): Circle" }, { value: "Builds a circle." }, "plain"] }]), {
    contents: [
      { language: "typescript", value: "function makeCircle(): Circle" },
      { kind: "markdown", value: "Builds a circle." },
      { kind: "markdown", value: "plain" },
    ],
  });
  assert.equal(toLspHover([]), null);
});

test("VS Code's severities (0 = error) become LSP's (1 = error), codes unwrapped", () => {
  const report = toLspDiagnosticReport([
    { range, severity: 0, message: "Type 'string' is not assignable to type 'number'.", source: "ts", code: 2322 },
    { range, severity: 1, message: "unused", code: { value: "no-unused" } },
  ]);
  assert.equal(report.kind, "full");
  assert.deepEqual(
    report.items.map((item) => [item.severity, item.code, item.source]),
    [
      [1, 2322, "ts"],
      [2, "no-unused", undefined],
    ],
  );
});

test("only the four proxied methods are answered; an empty definition is no answer", () => {
  assert.ok(isProxyMethod("textDocument/definition"));
  assert.ok(!isProxyMethod("textDocument/rename"));
  assert.ok(isEmptyAnswer("textDocument/definition", []));
  assert.ok(!isEmptyAnswer("textDocument/diagnostic", { kind: "full", items: [] }));
  assert.ok(isEmptyAnswer("textDocument/diagnostic", null));
  assert.ok(!isEmptyAnswer("textDocument/references", [{ uri: "file:///a", range }]));
});
