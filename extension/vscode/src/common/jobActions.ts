// Show Jobs: each background job offers its output and, while it runs, a kill that asks
// first. The output is read with job_output in the editor's own session, so the agent's
// unread output stays unread; what this editor read before is kept and shown whole.

import { isRunning, type JobEntry } from "./activity";
import type { QuickPickEntry } from "./host";
import { fenced } from "./markdown";

/** The session the editor reads job output in (cursors are per session). */
export const JOBS_SESSION = "vscode-jobs";
export const KILL = "Kill";
/** Output kept per job, in characters (the start is dropped first). */
const MAX_KEPT = 1_000_000;

export type JobAction = "output" | "kill";

export interface JobRow extends QuickPickEntry {
  job: JobEntry;
}

export interface JobActionItem extends QuickPickEntry {
  action: JobAction;
}

export function jobRows(jobs: readonly JobEntry[]): JobRow[] {
  return jobs.map((job) => ({
    label: `${isRunning(job) ? "$(sync~spin)" : "$(check)"} ${job.jobId}`,
    description: `${job.session} · ${job.status}${job.exitCode != null ? ` · exit ${job.exitCode}` : ""}${job.command ? ` · ${job.command}` : ""}`,
    detail: isRunning(job) ? "Running: show its output or kill it" : "Finished: show its output",
    job,
  }));
}

export function jobActions(job: JobEntry): JobActionItem[] {
  const items: JobActionItem[] = [{ label: "$(output) Show output", description: "job_output, read in the editor's own session", action: "output" }];
  if (isRunning(job)) {
    items.push({ label: "$(close) Kill...", description: "job_kill, asks first", action: "kill" });
  }
  return items;
}

export function killConfirmation(job: JobEntry): { message: string; detail: string } {
  return {
    message: `Kill background job ${job.jobId}?`,
    detail: [
      ...(job.command ? [`Command: ${job.command}`] : []),
      `Session: ${job.session}`,
      "",
      "Its whole process group gets SIGTERM, then SIGKILL. Its output stays readable.",
    ].join("\n"),
  };
}

/** The output read so far, per job; the last job_output status line is the job's state. */
export class JobOutputs {
  private readonly texts = new Map<string, string>();
  private readonly statuses = new Map<string, string>();

  /** Adds one job_output result: new output lines, then its `[status: ...]` line. */
  append(jobId: string, read: string): void {
    const lines = read.replace(/\n$/, "").split("\n");
    if (lines.length > 0 && /^\[status: .*\]$/.test(lines[lines.length - 1])) {
      this.statuses.set(jobId, lines.pop() as string);
    }
    const fresh = lines.filter((line) => line !== "(no new output)").join("\n");
    if (fresh === "") {
      return;
    }
    const previous = this.texts.get(jobId);
    const text = previous === undefined ? fresh : `${previous}\n${fresh}`;
    this.texts.set(jobId, text.length > MAX_KEPT ? text.slice(text.length - MAX_KEPT) : text);
  }

  document(job: JobEntry): string {
    const text = this.texts.get(job.jobId);
    return [
      `# Job ${job.jobId}: ${this.statuses.get(job.jobId) ?? job.status}`,
      "",
      ...(job.command ? [`- **Command:** \`${job.command.replace(/`/g, "'")}\``] : []),
      `- **Session:** ${job.session}`,
      "",
      text === undefined ? "(no output yet)" : fenced(text, "text"),
      "",
    ].join("\n");
  }
}
