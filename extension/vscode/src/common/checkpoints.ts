// "Revert this call": the checkpoints as quick-pick rows, the confirmation that says what
// will change, and the revert's result as text. Plain data in, text out (unit-tested).

import type { CheckpointFile, CheckpointInfo, RevertResult } from "./protocol";

const UNDO: Record<CheckpointFile["change"], string> = {
  created: "removed",
  deleted: "restored",
  modified: "put back",
  moved: "moved back",
};

export interface CheckpointRow {
  label: string;
  description: string;
  detail: string;
  checkpoint: CheckpointInfo;
}

function fileLine(file: CheckpointFile): string {
  const from = file.fromPath ? ` (from ${file.fromPath})` : "";
  const stored = file.notStored ? " (not stored: cannot be restored)" : "";
  return `${file.change} ${file.path}${from}${stored}`;
}

export function checkpointRows(checkpoints: readonly CheckpointInfo[], now: Date = new Date()): CheckpointRow[] {
  return checkpoints.map((checkpoint) => {
    const at = new Date(checkpoint.time * 1000);
    const time = at.toDateString() === now.toDateString() ? at.toTimeString().slice(0, 8) : at.toISOString().slice(0, 16).replace("T", " ");
    return {
      label: `$(discard) ${checkpoint.callId}`,
      description: `${time} · ${checkpoint.tool} · ${checkpoint.session}${checkpoint.label ? ` · ${checkpoint.label}` : ""}`,
      detail: checkpoint.files.map(fileLine).join(", "),
      checkpoint,
    };
  });
}

/** The modal confirmation: a question and, as its detail, every file and what happens to it. */
export function revertConfirmation(checkpoint: CheckpointInfo): { message: string; detail: string } {
  const lines = checkpoint.files.map((file) => `${fileLine(file)} → ${UNDO[file.change]}`);
  lines.push("", "Files changed since by someone else are left alone and listed as conflicts.");
  const what = checkpoint.label ? `: ${checkpoint.label}` : "";
  return { message: `Revert call ${checkpoint.callId} (${checkpoint.tool}${what})? It will change:`, detail: lines.join("\n") };
}

export const REVERT_CHOICE = "Revert this call";

/** The result as a document: the summary, then each conflict's diff of what changed since. */
export function formatRevertResult(result: RevertResult): string {
  const parts = [result.text];
  for (const conflict of result.conflicts) {
    if (conflict.diff) {
      parts.push("", `changed since the call: ${conflict.path} (${conflict.reason})`, conflict.diff.trimEnd());
    }
  }
  return parts.join("\n") + "\n";
}
