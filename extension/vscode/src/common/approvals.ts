// The answer to `toolhost/approve`. A file change opens in VS Code's diff editor with the
// decision on that editor's title bar, so every changed line stays readable and
// scrollable while the user decides; a command (bash) is shown with its folder,
// background flag, timeout and sandbox. Pure logic over Host so every path is unit-tested.

import type { DecisionPrompt, Host } from "./host";
import type { ApproveParams, ApproveResult } from "./protocol";
import { applyUnifiedDiff } from "./unifiedDiff";

export const ALLOW_ONCE = "Allow once";
export const ALLOW_SESSION = "Allow for session";
export const ALWAYS_ALLOW = "Always allow...";
export const DENY = "Deny...";

/** The decisions, in the order they are offered everywhere (Deny always last). */
export const DECISIONS = [ALLOW_ONCE, ALLOW_SESSION, ALWAYS_ALLOW, DENY] as const;

/** The commands behind the decisions on an approval editor's title bar (package.json menus). */
export const DECISION_COMMANDS = ["toolhost.approval.allowOnce", "toolhost.approval.allowSession", "toolhost.approval.alwaysAllow", "toolhost.approval.deny"] as const;

/** How many times a cancelled input box may send the user back to the decision. */
const MAX_ROUNDS = 20;

/** What closing the prompt without a choice means: a deny the user did not word. */
export const DISMISSED: ApproveResult = { decision: "deny", dismissed: true };

function argument(params: ApproveParams, key: string): unknown {
  const args = params.arguments;
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>)[key] : undefined;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

const SANDBOXES: Record<string, string> = {
  "workspace-write": "workspace-write (may write inside the workspace only)",
  "read-only": "read-only (may not write files)",
  none: "none (not sandboxed: the command can write anywhere you can)",
};

/** The server's sandbox label (`workspace-write`, `read-only`, either with `+network`, or `none`) in words. */
function sandboxText(label: string): string {
  const [mode, extra] = label.split("+", 2);
  const base = SANDBOXES[mode] ?? mode;
  return extra === "network" ? `${base}, with network access` : base;
}

/** The lines that say exactly what a command will do: command, folder, background, timeout, sandbox. */
export function commandLines(params: Pick<ApproveParams, "cwd" | "background" | "timeoutMs" | "sandbox">, command: unknown): string[] {
  const lines: string[] = [];
  if (typeof command === "string") {
    lines.push("Command:", ...command.split("\n").map((line) => `    ${line}`));
  }
  if (params.cwd) {
    lines.push(`Folder: ${params.cwd}`);
  }
  if (params.background === true) {
    lines.push("Runs: in the background (the call returns at once, the job keeps running until it ends or is killed)");
  } else if (params.background === false) {
    lines.push(`Runs: in the foreground${params.timeoutMs != null ? `, stopped after ${seconds(params.timeoutMs)}` : ""}`);
  }
  if (params.sandbox) {
    lines.push(`Sandbox: ${sandboxText(params.sandbox)}`);
  }
  return lines;
}

function isCommand(params: ApproveParams): boolean {
  return params.cwd != null || params.background != null || typeof argument(params, "command") === "string";
}

export function approvalDetail(params: ApproveParams): string {
  const lines: string[] = [];
  if (params.summary) {
    lines.push(params.summary, "");
  }
  if (isCommand(params)) {
    lines.push(...commandLines(params, argument(params, "command")), "");
  }
  if (params.paths.length > 0) {
    lines.push("Paths:", ...params.paths.map((p) => `    ${p}`), "");
  }
  const from = params.client ? `${params.client}, session ${params.session}` : `session ${params.session}`;
  lines.push(`Risk: ${params.risk} · tool ${params.tool} · from ${from}`);
  return lines.join("\n");
}

/** The rule offered by "Always allow" / "Allow for session": the server's first suggestion. */
export function defaultRule(params: ApproveParams): string {
  return params.suggestedRules[0] ?? params.tool;
}

/** An edited rule is used as typed, trimmed; an empty rule is refused by the input box. */
export function validateRule(value: string): string | undefined {
  const rule = value.trim();
  if (rule === "") {
    return "A rule cannot be empty, e.g. bash(npm test) or Edit(src/**).";
  }
  if (!/^[A-Za-z_][\w-]*(\(.*\))?$/s.test(rule)) {
    return "A rule is Tool or Tool(spec), e.g. bash(npm:*) or Edit(docs/**).";
  }
  return undefined;
}

/** How many files a unified diff touches (its `+++ ` headers; a bare hunk list counts as one). */
function filesIn(diff: string): number {
  return Math.max(1, diff.split("\n").filter((line) => line.startsWith("+++ ")).length);
}

/** The prompt for this request: the diff editor for a change, a modal for anything else. */
export async function openPrompt(host: Host, params: ApproveParams): Promise<DecisionPrompt> {
  const title = `Approve? ${params.title}`;
  const detail = approvalDetail(params);
  const diff = params.diff ?? "";
  if (diff.trim() === "") {
    return { next: () => host.showModal(params.title, detail, DECISIONS), close: () => {} };
  }
  const path = params.paths[0] ?? params.tool;
  if (filesIn(diff) === 1) {
    const before = params.paths[0] !== undefined ? ((await host.readText(params.paths[0])) ?? "") : "";
    const after = applyUnifiedDiff(before, diff);
    if (after !== undefined) {
      return host.showApprovalDiff({ title, detail, path, before, after });
    }
    host.log(`approval ${params.callId}: the diff does not apply to ${path} as it is now; showing the patch text`);
  }
  // Several files, or a file that moved on: the patch itself, with the same decision buttons.
  return host.showApprovalDiff({ title, detail, path, patch: diff });
}

export async function askApproval(host: Host, params: ApproveParams, cancel?: AbortSignal): Promise<ApproveResult> {
  const prompt = await openPrompt(host, params);
  const onAbort = (): void => prompt.close();
  cancel?.addEventListener("abort", onAbort);
  try {
    return await decide(host, params, prompt);
  } finally {
    cancel?.removeEventListener("abort", onAbort);
    prompt.close();
  }
}

async function decide(host: Host, params: ApproveParams, prompt: DecisionPrompt): Promise<ApproveResult> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const choice = await prompt.next();
    host.log(`approval ${params.callId} (${params.tool}): ${choice ?? "dismissed"}`);
    switch (choice) {
      case ALLOW_ONCE:
        return { decision: "allow_once" };
      case ALLOW_SESSION:
        return { decision: "allow_session", rule: defaultRule(params) };
      case ALWAYS_ALLOW: {
        const edited = await host.showInputBox({
          title: "Always allow: the rule written to .toolhost.toml",
          prompt: "Edit the rule if needed: Tool or Tool(spec). Escape goes back to the decision.",
          value: defaultRule(params),
        });
        if (edited === undefined) {
          continue;
        }
        const problem = validateRule(edited);
        if (problem !== undefined) {
          host.showInfo(problem);
          continue;
        }
        return { decision: "allow_always", rule: edited.trim() };
      }
      case DENY: {
        const reason = await host.showInputBox({
          title: `Deny: ${params.title}`,
          prompt: "Why? Optional: the agent sees this reason. Escape goes back to the decision.",
          placeHolder: "e.g. use the other file",
        });
        if (reason === undefined) {
          continue;
        }
        const trimmed = reason.trim();
        return trimmed ? { decision: "deny", reason: trimmed } : { decision: "deny" };
      }
      default:
        // Escape on the modal, or the diff closed without a choice.
        return DISMISSED;
    }
  }
  return { decision: "deny", reason: "no decision after repeated prompts" };
}
