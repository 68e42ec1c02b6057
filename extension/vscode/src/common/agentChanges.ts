// "Review an Agent's Changes" and "Revert All of an Agent's Changes": the checkpoints grouped
// by session (each with its agent's name), the confirmation that says what reverting all
// of them does, and the results as text. Plain data in, text out (unit-tested).

import type { CheckpointInfo, RevertSessionResult, SessionChangesResult } from "./protocol";

export interface AgentRow {
  label: string;
  description: string;
  detail: string;
  session: string;
  agent: string | null;
  calls: number;
}

/** One row per session, the one with the newest checkpoint first. */
export function agentRows(checkpoints: readonly CheckpointInfo[]): AgentRow[] {
  const bySession = new Map<string, CheckpointInfo[]>();
  for (const checkpoint of checkpoints) {
    const list = bySession.get(checkpoint.session) ?? [];
    list.push(checkpoint);
    bySession.set(checkpoint.session, list);
  }
  const rows: AgentRow[] = [];
  for (const [session, calls] of bySession) {
    const agent = calls.find((c) => c.agent)?.agent ?? null;
    const files = new Set(calls.flatMap((c) => c.files.map((f) => f.path)));
    const tools = [...new Set(calls.map((c) => c.tool))].join(", ");
    rows.push({
      label: `$(person) ${agent ?? session}`,
      description: `session ${session} · ${calls.length} call(s) · ${files.size} file(s)`,
      detail: `${tools}: ${[...files].slice(0, 8).join(", ")}${files.size > 8 ? ", …" : ""}`,
      session,
      agent,
      calls: calls.length,
    });
  }
  return rows;
}

export const REVERT_ALL_CHOICE = "Revert all of them";

/** The modal confirmation of reverting every call of one session. */
export function revertAllConfirmation(row: AgentRow): { message: string; detail: string } {
  const who = row.agent ? `${row.agent} (session ${row.session})` : `session ${row.session}`;
  return {
    message: `Revert all ${row.calls} call(s) of ${who}?`,
    detail: [
      "Each call is reverted, newest first, as \"Revert a Call\" does.",
      "Files changed since by someone else, or that another agent may also have changed while a command ran, are left alone and listed.",
      "Each revert is itself a checkpoint: it can be reverted to redo.",
    ].join("\n"),
  };
}

/** The review as a diff document: a header line per fact, then the diff. */
export function formatSessionChanges(result: SessionChangesResult): string {
  const files = result.files.map((f) => `# ${f.change} ${f.path}${f.notStored ? " (not stored)" : ""}`);
  return [`# ${result.text}`, `# calls, oldest first: ${result.calls.join(", ") || "none"}`, ...files, result.diff].join("\n");
}

export function formatRevertAllResult(result: RevertSessionResult): string {
  const parts = [result.text];
  for (const conflict of result.conflicts) {
    if (conflict.diff) {
      parts.push("", `changed since: ${conflict.path} (${conflict.reason})`, conflict.diff.trimEnd());
    }
  }
  return parts.join("\n") + "\n";
}
