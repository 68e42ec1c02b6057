// Activity lines, the job table and the status bar text: plain data in, text out.

import type { DidCallParams, JobUpdateParams } from "./protocol";

export function formatDidCall(params: DidCallParams, at: Date): string {
  const time = at.toISOString().slice(11, 19);
  const outcome = params.isError ? `error ${params.code ?? "?"}` : "ok";
  const decision = params.decision ? ` [${params.decision}${params.rule ? ` ${params.rule}` : ""}]` : "";
  const paths = params.paths.length > 0 ? ` ${params.paths.join(", ")}` : "";
  return `${time} ${params.session}/${params.callId} ${params.tool}${decision} ${outcome} ${params.durationMs.toFixed(1)}ms${paths}`;
}

export interface JobEntry {
  jobId: string;
  session: string;
  status: string;
  exitCode?: number | null;
  /** Output the job's session has not read yet (jobUpdate's newBytes). */
  unreadBytes: number;
  command?: string;
}

const FINISHED = new Set(["exited", "killed", "failed"]);

export function isRunning(job: JobEntry): boolean {
  return !FINISHED.has(job.status) && (job.exitCode === undefined || job.exitCode === null);
}

/** Background jobs as reported by toolhost/jobUpdate (the server is the source of truth). */
export class JobTable {
  private readonly jobs = new Map<string, JobEntry>();

  update(params: JobUpdateParams): JobEntry {
    const previous = this.jobs.get(params.jobId);
    const entry: JobEntry = {
      jobId: params.jobId,
      session: params.session,
      status: params.status,
      exitCode: params.exitCode ?? previous?.exitCode,
      unreadBytes: params.newBytes ?? previous?.unreadBytes ?? 0,
      command: previous?.command,
    };
    this.jobs.set(params.jobId, entry);
    return entry;
  }

  /** Replaces the table with the jobs of a toolhost/status result (the server's truth). */
  syncFromStatus(status: unknown): void {
    const rows = (status as { jobs?: unknown } | null)?.jobs;
    if (!Array.isArray(rows)) {
      return;
    }
    const previous = new Map(this.jobs);
    this.jobs.clear();
    for (const row of rows as Record<string, unknown>[]) {
      if (typeof row.jobId !== "string") {
        continue;
      }
      this.jobs.set(row.jobId, {
        jobId: row.jobId,
        session: String(row.session ?? "default"),
        status: String(row.status ?? "running"),
        exitCode: typeof row.exitCode === "number" ? row.exitCode : null,
        unreadBytes: previous.get(row.jobId)?.unreadBytes ?? 0,
        command: typeof row.command === "string" ? row.command : undefined,
      });
    }
  }

  all(): JobEntry[] {
    return [...this.jobs.values()];
  }

  running(): JobEntry[] {
    return this.all().filter(isRunning);
  }

  clear(): void {
    this.jobs.clear();
  }
}

export type ServerState = "starting" | "running" | "stopped" | "failed";

export interface StatusSummary {
  state: ServerState;
  /** Which server runs, in a word: "bundled", "server.path", "server.python", "Python env". */
  server?: string;
  runningJobs: number;
  languageServers: { name: string; state: string }[];
}

const ICONS: Record<ServerState, string> = {
  starting: "$(loading~spin)",
  running: "$(tools)",
  stopped: "$(debug-stop)",
  failed: "$(error)",
};

export function statusBarText(summary: StatusSummary): string {
  const parts = [`${ICONS[summary.state]} Toolhost${summary.server ? ` (${summary.server})` : ""}`];
  if (summary.state !== "running") {
    parts.push(summary.state);
  }
  if (summary.runningJobs > 0) {
    parts.push(`$(terminal) ${summary.runningJobs}`);
  }
  const ready = summary.languageServers.filter((s) => s.state === "ready").length;
  if (summary.languageServers.length > 0) {
    parts.push(`$(symbol-class) ${ready}/${summary.languageServers.length}`);
  }
  return parts.join(" ");
}

/** The status bar's word for where the server comes from (serverResolution's source). */
export function serverLabel(source: string | undefined): string | undefined {
  const labels: Record<string, string> = {
    bundled: "bundled",
    "setting toolhost.server.path": "server.path",
    "setting toolhost.server.python": "server.python",
    "Python extension": "Python env",
    "python3 on PATH": "python3",
  };
  return source === undefined ? undefined : (labels[source] ?? source);
}

export function statusBarTooltip(summary: StatusSummary, source: string | undefined): string {
  const lines = [`Toolhost server: ${summary.state}${source ? ` (from ${source})` : ""}`];
  lines.push(`Background jobs running: ${summary.runningJobs}`);
  if (summary.languageServers.length === 0) {
    lines.push("Language servers: none started");
  }
  for (const server of summary.languageServers) {
    lines.push(`Language server ${server.name}: ${server.state}`);
  }
  return lines.join("\n");
}

/** Reads the language servers out of a toolhost/status result, whatever its exact shape. */
export function languageServersOf(status: unknown): { name: string; state: string }[] {
  const raw = (status as { languageServers?: unknown } | null)?.languageServers;
  const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? Object.entries(raw).map(([k, v]) => ({ name: k, ...(v as object) })) : [];
  return list.map((item: Record<string, unknown>) => ({
    name: String(item.language ?? item.name ?? item.command ?? "?"),
    // Rows carry `indexing` (busy) rather than a state name.
    state: String(item.state ?? (item.indexing === true ? "indexing" : "ready")),
  }));
}
