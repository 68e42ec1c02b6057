// Forwarding of VS Code language-model tools to toolhost/call. The tools are
// contributed in package.json (generated from schemas/tools.json) under the
// name toolhost_<tool>; prepareInvocation gives VS Code's confirmation for
// writers, and the call then carries preApproved so the server does not ask a
// second time (deny rules and readOnly mode still apply on the server). Only
// this path sets preApproved: Run Tool... and other callers get the server's prompt.

import { type CallParams, type CallResult, contentParts, type ToolInfo } from "./protocol";

export const LM_TOOL_PREFIX = "toolhost_";
export const LM_SESSION = "vscode-lm";

export function lmToolName(tool: string): string {
  return LM_TOOL_PREFIX + tool;
}

export function toolFromLmName(name: string): string | undefined {
  return name.startsWith(LM_TOOL_PREFIX) ? name.slice(LM_TOOL_PREFIX.length) : undefined;
}

export interface Confirmation {
  title: string;
  message: string;
}

function describeInput(input: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    let text = typeof value === "string" ? value : JSON.stringify(value);
    if (text.length > 200) {
      text = `${text.slice(0, 200)}… (${text.length} chars)`;
    }
    parts.push(`${key}: ${text}`);
  }
  return parts.join("\n");
}

export interface Invocation {
  /** What VS Code shows before the call; undefined for read-only tools (no prompt). */
  confirmation?: Confirmation;
  invocationMessage: string;
}

export function prepareInvocation(tool: ToolInfo, input: Record<string, unknown>): Invocation {
  const target = typeof input.path === "string" ? ` ${input.path}` : typeof input.command === "string" ? `: ${input.command}` : "";
  const invocationMessage = `toolhost ${tool.name}${target}`;
  if (tool.readOnly) {
    return { invocationMessage };
  }
  return {
    invocationMessage,
    confirmation: {
      title: `Run toolhost ${tool.name}?`,
      message: `${tool.name} changes the workspace or runs a command.\n\n${describeInput(input)}`,
    },
  };
}

let callCounter = 0;

export function callParams(tool: ToolInfo, input: Record<string, unknown>): CallParams {
  callCounter += 1;
  const params: CallParams = {
    name: tool.name,
    arguments: input,
    session: LM_SESSION,
    callId: `vscode-lm-${Date.now().toString(36)}-${callCounter}`,
  };
  if (!tool.readOnly) {
    // The user just confirmed in VS Code's own dialog (prepareInvocation).
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

export async function invokeLmTool(send: CallSender, tool: ToolInfo, input: Record<string, unknown>): Promise<string[]> {
  return resultParts(await send(callParams(tool, input)));
}
