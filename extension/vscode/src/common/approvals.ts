// The approval dialog for `toolhost/approve`: one modal, then the follow-up
// input boxes. Pure logic over Host so every decision path is unit-tested.

import type { Host } from "./host";
import type { ApproveParams, ApproveResult } from "./protocol";
import { applyUnifiedDiff } from "./unifiedDiff";

export const ALLOW_ONCE = "Allow once";
export const ALLOW_SESSION = "Allow for session";
export const ALWAYS_ALLOW = "Always allow...";
export const SHOW_DIFF = "Show diff";
export const DENY = "Deny";

/** How many times "Show diff" / a cancelled input box may send the user back to the modal. */
const MAX_ROUNDS = 20;

export function approvalButtons(params: ApproveParams): string[] {
  const buttons = [ALLOW_ONCE, ALLOW_SESSION, ALWAYS_ALLOW];
  if (params.diff) {
    buttons.push(SHOW_DIFF);
  }
  buttons.push(DENY);
  return buttons;
}

export function approvalDetail(params: ApproveParams): string {
  const lines: string[] = [];
  if (params.summary) {
    lines.push(params.summary);
  }
  if (params.paths.length > 0) {
    lines.push("", "Paths:", ...params.paths.map((p) => `  ${p}`));
  }
  lines.push("", `Risk: ${params.risk}`, `Tool: ${params.tool} (session ${params.session})`);
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

export async function askApproval(host: Host, params: ApproveParams): Promise<ApproveResult> {
  const buttons = approvalButtons(params);
  const detail = approvalDetail(params);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const choice = await host.showModal(params.title, detail, buttons);
    host.log(`approval ${params.callId} (${params.tool}): ${choice ?? "dismissed"}`);
    switch (choice) {
      case ALLOW_ONCE:
        return { decision: "allow_once" };
      case ALLOW_SESSION:
        return { decision: "allow_session", rule: defaultRule(params) };
      case ALWAYS_ALLOW: {
        const edited = await host.showInputBox({
          title: "Always allow: the rule written to .toolhost.toml",
          prompt: "Edit the rule if needed. Tool or Tool(spec); Escape goes back.",
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
      case SHOW_DIFF:
        await showProposedDiff(host, params);
        continue;
      case DENY: {
        const reason = await host.showInputBox({
          title: "Deny",
          prompt: "Why? (optional: the agent sees this reason)",
          placeHolder: "e.g. use the other file",
        });
        const trimmed = reason?.trim();
        return trimmed ? { decision: "deny", reason: trimmed } : { decision: "deny" };
      }
      default:
        // Cancel or Escape: the safe answer.
        return { decision: "deny", reason: "dismissed in the editor" };
    }
  }
  return { decision: "deny", reason: "no decision after repeated prompts" };
}

/** Opens the diff editor on the proposed change; falls back to the raw diff text. */
export async function showProposedDiff(host: Host, params: ApproveParams): Promise<void> {
  const diff = params.diff ?? "";
  const path = params.paths[0] ?? params.tool;
  const before = params.paths[0] !== undefined ? ((await host.readText(params.paths[0])) ?? "") : "";
  const after = applyUnifiedDiff(before, diff);
  if (after === undefined) {
    host.log(`diff for ${path} does not apply to the file on disk; showing the patch text`);
    await host.showDocument(diff, "diff");
    return;
  }
  await host.showDiff(`${params.title} (proposed)`, before, after, path);
}
