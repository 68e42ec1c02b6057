import assert from "node:assert/strict";
import { test } from "node:test";

import type { JobEntry } from "../common/activity";
import { JobOutputs, jobActions, killConfirmation } from "../common/jobActions";

const running: JobEntry = { jobId: "bash-1", session: "default", status: "running", exitCode: null, unreadBytes: 0, command: "npm run dev" };

test("a running job offers its output and a kill; a finished one only its output", () => {
  assert.deepEqual(jobActions(running).map((item) => item.action), ["output", "kill"]);
  assert.deepEqual(jobActions({ ...running, status: "exited", exitCode: 0 }).map((item) => item.action), ["output"]);
});

test("the kill confirmation names the job and its command", () => {
  const { message, detail } = killConfirmation(running);
  assert.equal(message, "Kill background job bash-1?");
  assert.match(detail, /Command: npm run dev/);
  assert.match(detail, /SIGTERM, then SIGKILL/);
});

test("job output read in several looks is shown whole, with the latest status", () => {
  const outputs = new JobOutputs();
  assert.match(outputs.document(running), /\(no output yet\)/);
  outputs.append("bash-1", "line 1\nline 2\n[status: running]");
  outputs.append("bash-1", "(no new output)\n[status: running]");
  outputs.append("bash-1", "line 3\n[status: exited 0]");
  const shown = outputs.document(running);
  assert.match(shown, /^# Job bash-1: \[status: exited 0\]/);
  assert.match(shown, /```text\nline 1\nline 2\nline 3\n```/);
  assert.match(shown, /- \*\*Command:\*\* `npm run dev`/);
});
