import assert from "node:assert/strict";
import { test } from "node:test";

import { applyUnifiedDiff } from "../common/unifiedDiff";

test("applies hunks in the middle and keeps the rest", () => {
  const before = "1\n2\n3\n4\n5\n6\n7\n8\n";
  const diff = "--- a/f\n+++ b/f\n@@ -3,3 +3,4 @@\n 3\n-4\n+four\n+4.5\n 5\n";
  assert.equal(applyUnifiedDiff(before, diff), "1\n2\n3\nfour\n4.5\n5\n6\n7\n8\n");
});

test("creates a file from /dev/null", () => {
  const diff = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n";
  assert.equal(applyUnifiedDiff("", diff), "hello\nworld\n");
});

test("honours no newline at end of file", () => {
  const diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n";
  assert.equal(applyUnifiedDiff("old", diff), "new");
});

test("keeps CRLF lines of the original", () => {
  const diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
  assert.equal(applyUnifiedDiff("a\r\nb\r\n", diff), "a\r\nc\n");
});

test("refuses a patch that does not match", () => {
  assert.equal(applyUnifiedDiff("x\n", "@@ -1 +1 @@\n-y\n+z\n"), undefined);
  assert.equal(applyUnifiedDiff("x\n", "no hunks here"), undefined);
});

test("uses only the first file of a multi-file patch", () => {
  const diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n";
  assert.equal(applyUnifiedDiff("a\n", diff), "b\n");
});
