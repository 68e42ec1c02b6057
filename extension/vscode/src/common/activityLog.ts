// The Activity list: every finished call (toolhost/didCall) as a row that can show the
// call's result. The results this editor has are the ones of the calls it made itself
// (Run Tool..., its language-model tools, the extension API); a row of another client's
// call says so instead of showing nothing.

import type { QuickPickEntry } from "./host";
import type { CallParams, CallResult, DidCallParams } from "./protocol";
import { formatCallResult } from "./runTool";

/** Rows and results kept (oldest dropped first). */
const MAX_ROWS = 500;
const MAX_RESULTS = 200;

export interface ActivityEntry {
  call: DidCallParams;
  at: Date;
}

export interface ActivityRow extends QuickPickEntry {
  entry: ActivityEntry;
}

/** A group's title in the list (a quick pick separator). */
export interface ActivitySeparator {
  label: string;
  separator: true;
}

interface KeptResult {
  args?: Record<string, unknown>;
  result: CallResult;
}

function dropOldest<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done === true) {
      return;
    }
    map.delete(oldest.value);
  }
}

export class ActivityLog {
  private readonly entries: ActivityEntry[] = [];
  private readonly results = new Map<string, KeptResult>();

  record(call: DidCallParams, at: Date): void {
    this.entries.push({ call, at });
    if (this.entries.length > MAX_ROWS) {
      this.entries.shift();
    }
  }

  /** The rows grouped by session (its agent named), the group of the newest call first,
   * each group after a separator line that names it. */
  groupedRows(): (ActivityRow | ActivitySeparator)[] {
    const groups = new Map<string, ActivityRow[]>();
    for (const row of this.rows()) {
      const group = groups.get(row.entry.call.session) ?? [];
      group.push(row);
      groups.set(row.entry.call.session, group);
    }
    const out: (ActivityRow | ActivitySeparator)[] = [];
    for (const [session, rows] of groups) {
      const agent = rows.find((row) => row.entry.call.agent)?.entry.call.agent;
      out.push({ label: agent ? `${agent} · session ${session}` : `session ${session}`, separator: true });
      out.push(...rows);
    }
    return out;
  }

  /** The result of a call this editor made (its didCall may come before or after it). */
  keep(params: CallParams, result: CallResult): void {
    const args = typeof params.arguments === "object" && params.arguments !== null ? (params.arguments as Record<string, unknown>) : undefined;
    this.results.set(result.callId, { args, result });
    dropOldest(this.results, MAX_RESULTS);
  }

  /** Newest first, as the Activity list shows them. */
  rows(): ActivityRow[] {
    return [...this.entries].reverse().map((entry) => {
      const call = entry.call;
      const outcome = call.isError ? `error ${call.code ?? "?"}` : "ok";
      const decision = call.decision ? ` · ${call.decision}${call.rule ? ` ${call.rule}` : ""}` : "";
      return {
        label: `${call.isError ? "$(error)" : "$(pass)"} ${call.tool}`,
        description: `${outcome}${decision} · ${call.durationMs.toFixed(1)} ms · ${call.session}/${call.callId} · ${entry.at.toISOString().slice(11, 19)}`,
        detail: call.paths.length > 0 ? call.paths.join(", ") : undefined,
        entry,
      };
    });
  }

  /** The row's result as a Markdown document, or what there is to know when it is not here. */
  resultDocument(entry: ActivityEntry): string {
    const call = entry.call;
    const kept = this.results.get(call.callId);
    if (kept !== undefined) {
      return formatCallResult(call.tool, kept.args, kept.result);
    }
    const outcome = call.isError ? `error ${call.code ?? "?"}` : "ok";
    return [
      `# toolhost ${call.tool}: ${outcome}`,
      "",
      `- **Call:** ${call.callId}, ${call.durationMs.toFixed(1)} ms, session ${call.session}`,
      ...(call.paths.length > 0 ? [`- **Paths:** ${call.paths.join(", ")}`] : []),
      ...(call.decision ? [`- **Approval:** ${call.decision}${call.rule ? ` (rule \`${call.rule}\`)` : ""}`] : []),
      "",
      "The result text is not in this editor: another client made this call (an MCP client or another",
      "editor attached to the same server). VS Code keeps the results of the calls it made itself:",
      "Toolhost: Run Tool..., its language-model tools and other extensions using its API.",
      "",
    ].join("\n");
  }
}
