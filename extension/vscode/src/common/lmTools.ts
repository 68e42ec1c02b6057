// Forwarding of VS Code language-model tools to toolhost/call. The tools are
// contributed in package.json (generated from schemas/tools.json) under the
// name toolhost_<tool>. prepareInvocation asks the server for a toolhost/preview
// (the same dispatch up to the approval step, nothing written) and puts the real
// diff, or the command with its folder, background flag, timeout and sandbox, into
// VS Code's confirmation. A call the user confirmed there carries preApproved so the
// server does not ask a second time (deny rules and readOnly mode still apply on the
// server). Only this path sets preApproved: Run Tool... and other callers get the
// server's own prompt.

import { commandLines } from "./approvals";
import { fenced, keepWhitespace } from "./markdown";
import { type CallParams, type CallResult, contentParts, type PreviewParams, type PreviewResult, type ToolInfo } from "./protocol";

export const LM_TOOL_PREFIX = "toolhost_";
export const LM_SESSION = "vscode-lm";

/** Lines of a diff put into VS Code's confirmation; the rest is counted, not shown. */
const CONFIRMATION_DIFF_LINES = 400;

export function lmToolName(tool: string): string {
  return LM_TOOL_PREFIX + tool;
}

export function toolFromLmName(name: string): string | undefined {
  return name.startsWith(LM_TOOL_PREFIX) ? name.slice(LM_TOOL_PREFIX.length) : undefined;
}

export interface Confirmation {
  title: string;
  /** Markdown: code blocks keep the diff's and the command's whitespace. */
  message: string;
}

export interface Invocation {
  /** What VS Code shows before the call; undefined when nothing needs confirming. */
  confirmation?: Confirmation;
  invocationMessage: string;
}

export type PreviewSender = (params: PreviewParams) => Promise<PreviewResult>;

function shownDiff(diff: string): string {
  const lines = diff.replace(/\n$/, "").split("\n");
  const shown = lines.slice(0, CONFIRMATION_DIFF_LINES).map(keepWhitespace);
  const block = fenced(shown.join("\n"), "diff");
  const rest = lines.length - shown.length;
  return rest > 0 ? `${block}\n\n… and ${rest} more lines of the diff, not shown here.` : block;
}

/** The confirmation text for a previewed call: what it is, then the real change or command. */
export function confirmationMessage(preview: PreviewResult, input: Record<string, unknown>): string {
  // The change comes last: a plain dialog runs the text after a code block into its last line.
  const parts: string[] = [];
  if (preview.summary) {
    parts.push(preview.summary);
  }
  const where = preview.paths.map((p) => `\`${p}\``).join(", ");
  parts.push(`Risk: ${preview.risk}${where ? ` · ${where}` : ""}`);
  const command = commandLines(preview, input.command);
  if (command.length > 0) {
    parts.push(fenced(keepWhitespace(command.join("\n")), "text"));
  }
  if (preview.diff) {
    parts.push(shownDiff(preview.diff));
  }
  return parts.join("\n\n");
}

/** The arguments as they are (whitespace kept): used only when the preview is unavailable. */
function rawArguments(input: Record<string, unknown>): string {
  return fenced(JSON.stringify(input, null, 2), "json");
}

function confirmationKey(tool: string, input: Record<string, unknown>): string {
  return `${tool}\u0000${JSON.stringify(input)}`;
}

/** Calls the user confirmed in VS Code's dialog, until they are invoked. */
export class ConfirmedCalls {
  private readonly keys = new Map<string, number>();

  remember(tool: string, input: Record<string, unknown>): void {
    const key = confirmationKey(tool, input);
    this.keys.set(key, (this.keys.get(key) ?? 0) + 1);
  }

  /** True once for each remembered call. */
  take(tool: string, input: Record<string, unknown>): boolean {
    const key = confirmationKey(tool, input);
    const count = this.keys.get(key) ?? 0;
    if (count <= 1) {
      this.keys.delete(key);
    } else {
      this.keys.set(key, count - 1);
    }
    return count > 0;
  }
}

export async function prepareInvocation(
  tool: ToolInfo,
  input: Record<string, unknown>,
  preview: PreviewSender,
  confirmed: ConfirmedCalls,
): Promise<Invocation> {
  const target = typeof input.path === "string" ? ` ${input.path}` : typeof input.command === "string" ? `: ${input.command}` : "";
  const invocationMessage = `toolhost ${tool.name}${target}`;
  if (tool.readOnly) {
    return { invocationMessage };
  }
  let previewed: PreviewResult;
  try {
    previewed = await preview({ name: tool.name, arguments: input, session: LM_SESSION });
  } catch (error) {
    confirmed.remember(tool.name, input);
    const why = error instanceof Error ? error.message : String(error);
    return {
      invocationMessage,
      confirmation: {
        title: `Run toolhost ${tool.name}?`,
        message: `The change could not be previewed (${why}). The arguments:\n\n${rawArguments(input)}`,
      },
    };
  }
  if (previewed.error || !previewed.wouldAsk) {
    // Refused (the call returns that error to the model) or allowed by policy: nothing to confirm.
    return { invocationMessage };
  }
  confirmed.remember(tool.name, input);
  return { invocationMessage, confirmation: { title: previewed.title, message: confirmationMessage(previewed, input) } };
}

let callCounter = 0;

export function callParams(tool: ToolInfo, input: Record<string, unknown>, confirmed?: ConfirmedCalls): CallParams {
  callCounter += 1;
  const params: CallParams = {
    name: tool.name,
    arguments: input,
    session: LM_SESSION,
    callId: `vscode-lm-${Date.now().toString(36)}-${callCounter}`,
  };
  if (!tool.readOnly && confirmed?.take(tool.name, input) === true) {
    // The user just confirmed this call in VS Code's own dialog (prepareInvocation).
    params.preApproved = true;
  }
  return params;
}

/** The text parts a model gets back; errors are text too, so the model can act on them. */
export function resultParts(result: CallResult): string[] {
  const parts: string[] = [];
  if (result.isError && result.error) {
    parts.push(`${result.error.message}`);
  }
  for (const part of contentParts(result.content)) {
    if (part.type === "text" && part.text !== undefined) {
      if (!(result.isError && result.error && part.text === result.error.message)) {
        parts.push(part.text);
      }
    } else if (part.type === "image") {
      const bytes = Math.floor(((part.data ?? "").length * 3) / 4);
      parts.push(`[image ${part.mimeType ?? "?"}, ${bytes} bytes]`);
    }
  }
  if (parts.length === 0) {
    parts.push(result.isError ? "the call failed without a message" : "(no output)");
  }
  return parts;
}

export type CallSender = (params: CallParams) => Promise<CallResult>;

export async function invokeLmTool(
  send: CallSender,
  tool: ToolInfo,
  input: Record<string, unknown>,
  confirmed?: ConfirmedCalls,
): Promise<string[]> {
  return resultParts(await send(callParams(tool, input, confirmed)));
}
