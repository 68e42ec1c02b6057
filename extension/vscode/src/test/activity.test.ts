import assert from "node:assert/strict";
import { test } from "node:test";

import { formatDidCall, JobTable, languageServersOf, statusBarText } from "../common/activity";
import { argumentSkeleton, formatCallResult, parseArguments } from "../common/runTool";
import { meta } from "./scriptedHost";

test("activity line names tool, decision, outcome and paths", () => {
  const line = formatDidCall(
    { callId: "c-1", session: "default", tool: "edit_file", decision: "allow_once", rule: null, code: null, isError: false, durationMs: 3.14, paths: ["/w/a.py"] },
    new Date("2026-01-02T03:04:05Z"),
  );
  assert.equal(line, "03:04:05 default/c-1 edit_file [allow_once] ok 3.1ms /w/a.py");
});

test("job table tracks running jobs and their unread output", () => {
  const jobs = new JobTable();
  jobs.update({ jobId: "j1", session: "s", status: "running", newBytes: 10 });
  jobs.update({ jobId: "j1", session: "s", status: "running", newBytes: 15 });
  jobs.update({ jobId: "j2", session: "s", status: "exited", exitCode: 0 });
  assert.deepEqual(jobs.running().map((j) => [j.jobId, j.unreadBytes]), [["j1", 15]]);
  jobs.update({ jobId: "j1", session: "s", status: "killed", exitCode: -9 });
  assert.equal(jobs.running().length, 0);
  jobs.syncFromStatus({ jobs: [{ jobId: "j3", session: "t", command: "sleep 9", status: "running", exitCode: null }] });
  assert.deepEqual(jobs.all().map((j) => [j.jobId, j.command, j.status]), [["j3", "sleep 9", "running"]]);
});

test("status bar shows state, jobs and language servers", () => {
  assert.equal(statusBarText({ state: "running", runningJobs: 0, languageServers: [] }), "$(tools) Toolhost");
  assert.equal(
    statusBarText({ state: "running", runningJobs: 2, languageServers: [{ name: "python", state: "ready" }, { name: "go", state: "starting" }] }),
    "$(tools) Toolhost $(terminal) 2 $(symbol-class) 1/2",
  );
  assert.match(statusBarText({ state: "failed", runningJobs: 0, languageServers: [] }), /failed/);
  assert.deepEqual(languageServersOf({ languageServers: [{ language: "python", pid: 7, indexing: false }] }), [{ name: "python", state: "ready" }]);
  assert.deepEqual(languageServersOf({ languageServers: [{ language: "go", indexing: true }] }), [{ name: "go", state: "indexing" }]);
  assert.deepEqual(languageServersOf({ languageServers: { go: { state: "off" } } }), [{ name: "go", state: "off" }]);
  assert.deepEqual(languageServersOf(null), []);
});

test("run tool: skeleton of required arguments, JSON parsing, readable result", () => {
  const tool = {
    name: "edit_file",
    description: "",
    readOnly: false,
    inputSchema: { properties: { path: { type: "string" }, count: { type: "integer" }, flag: { type: "boolean", default: true } }, required: ["path", "count", "flag"] },
  };
  assert.equal(argumentSkeleton(tool), '{"path":"","count":0,"flag":true}');
  assert.deepEqual(parseArguments('{"a": 1}'), { ok: true, value: { a: 1 } });
  assert.deepEqual(parseArguments(""), { ok: true, value: {} });
  assert.equal(parseArguments("[1]").ok, false);
  assert.equal(parseArguments("{").ok, false);
  const text = formatCallResult("read_file", { path: "a" }, { callId: "c-9", isError: false, content: [{ type: "text", text: "1\thi" }], meta: meta() });
  assert.match(text, /^# toolhost read_file: ok\n/);
  assert.match(text, /- \*\*Arguments:\*\* `\{"path":"a"\}`/);
  assert.match(text, /- \*\*Call:\*\* c-9, 1\.0 ms/);
  assert.match(text, /```text\n1\thi\n```/);
  // The meta is folded into the header: no one-line JSON dump.
  assert.doesNotMatch(text, /# meta|"durationMs"/);
});

test("a truncated or approved result says so in its header, and how to get the rest", () => {
  const text = formatCallResult(
    "grep",
    { pattern: "x".repeat(200) },
    {
      callId: "c-2",
      isError: false,
      content: [{ type: "text", text: "a```b" }],
      meta: { ...meta("grep"), truncated: true, shownChars: 10, totalChars: 99, resultRef: "r-7", approval: { decision: "allow_once", rule: null }, paths: ["/w/a"] },
    },
  );
  assert.match(text, /- \*\*Arguments:\*\*\n\n```json\n\{\n {2}"pattern"/);
  assert.match(text, /- \*\*Shown:\*\* 10 of 99 characters; the whole text: toolhost\/result with resultRef `r-7`/);
  assert.match(text, /- \*\*Approval:\*\* allow_once/);
  assert.match(text, /- \*\*Paths:\*\* \/w\/a/);
  assert.match(text, /```text\na```b\n```/);
});

test("an error result shows its code, message and recovery", () => {
  const text = formatCallResult("edit_file", undefined, {
    callId: "c-3",
    isError: true,
    content: [{ type: "text", text: "stale" }],
    error: { code: "FS_STALE_VERSION", message: "stale", recovery: "read it again" },
    meta: meta("edit_file"),
  });
  assert.match(text, /^# toolhost edit_file: error FS_STALE_VERSION\n/);
  assert.match(text, /\nstale\n\n\*\*Recovery:\*\* read it again\n/);
});
