// "Toolhost: Run Tool...": a starting JSON for the picked tool, parsing what the
// user typed, and the result as a readable Markdown document.

import { fenced } from "./markdown";
import { type CallResult, contentParts, type ToolInfo } from "./protocol";

interface SchemaProperty {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
}

function placeholder(property: SchemaProperty): unknown {
  if (property.default !== undefined) {
    return property.default;
  }
  if (property.enum && property.enum.length > 0) {
    return property.enum[0];
  }
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  switch (type) {
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "";
  }
}

/** The parameter names, required ones first (as the schema lists them), then the optional ones
 * alphabetically, each marked with `?`: "path, limit?, offset?". */
export function parameterSummary(tool: ToolInfo): string {
  const schema = tool.inputSchema as { properties?: Record<string, SchemaProperty>; required?: string[] };
  const required = schema.required ?? [];
  const optional = Object.keys(schema.properties ?? {})
    .filter((name) => !required.includes(name))
    .sort();
  return [...required, ...optional.map((name) => `${name}?`)].join(", ");
}

/** One row of the Run Tool... picker: the name, read-only or writes with the parameters, and
 * the description's first sentence. */
export function toolPickItem(tool: ToolInfo): { label: string; description: string; detail: string; tool: ToolInfo } {
  const parameters = parameterSummary(tool);
  const mark = tool.readOnly ? "read-only" : "writes";
  return { label: tool.name, description: parameters ? `${mark} · ${parameters}` : mark, detail: firstSentence(tool.description), tool };
}

/** Up to the first full stop that ends a sentence (not the one in "e.g."). */
export function firstSentence(text: string): string {
  const line = text.split("\n")[0].trim();
  const match = /^(.*?(?<!\be\.g|\bi\.e)[.!?])(\s+(?=[A-Z`])|$)/.exec(line);
  return match ? match[1] : line;
}

/** JSON with the tool's required properties filled with placeholders. */
export function argumentSkeleton(tool: ToolInfo): string {
  const schema = tool.inputSchema as { properties?: Record<string, SchemaProperty>; required?: string[] };
  const skeleton: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    skeleton[name] = placeholder(schema.properties?.[name] ?? {});
  }
  return JSON.stringify(skeleton);
}

export type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

export function parseArguments(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (error) {
    return { ok: false, message: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, message: "The arguments must be a JSON object, e.g. {\"path\": \"README.md\"}." };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** Long strings (a write_file's content) are clipped in the header; the call had them whole. */
function clipped(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = typeof value === "string" && value.length > 160 ? `${value.slice(0, 120)}… (${value.length} characters)` : value;
  }
  return out;
}

function argumentsLine(whole: Record<string, unknown>): string {
  const args = clipped(whole);
  const compact = JSON.stringify(args);
  if (compact.length <= 100 && !compact.includes("`")) {
    return `- **Arguments:** \`${compact}\``;
  }
  return `- **Arguments:**\n\n${fenced(JSON.stringify(args, null, 2), "json")}\n`;
}

/** The meta as a few readable lines (never a one-line JSON dump). */
function metaLines(result: CallResult): string[] {
  const meta = result.meta;
  const lines = [`- **Call:** ${result.callId}${meta ? `, ${meta.durationMs.toFixed(1)} ms` : ""}`];
  if (meta === undefined || meta === null) {
    return lines;
  }
  if (meta.paths.length > 0) {
    lines.push(`- **Paths:** ${meta.paths.join(", ")}`);
  }
  const approval = meta.approval as { decision?: string; rule?: string | null } | null;
  if (approval?.decision) {
    lines.push(`- **Approval:** ${approval.decision}${approval.rule ? ` (rule \`${approval.rule}\`)` : ""}`);
  }
  if (meta.truncated) {
    const rest = meta.resultRef ? `; the whole text: toolhost/result with resultRef \`${meta.resultRef}\`` : "";
    lines.push(`- **Shown:** ${meta.shownChars} of ${meta.totalChars} characters${rest}`);
  }
  return lines;
}

/** A call's result as a Markdown document: a short header, then the output as it came. */
export function formatCallResult(tool: string, args: Record<string, unknown> | undefined, result: CallResult): string {
  const outcome = result.isError ? `error ${result.error?.code ?? ""}`.trim() : "ok";
  const lines = [`# toolhost ${tool}: ${outcome}`, ""];
  if (args !== undefined) {
    lines.push(argumentsLine(args));
  }
  lines.push(...metaLines(result), "");
  if (result.isError && result.error) {
    lines.push(result.error.message, "");
    if (result.error.recovery && !result.error.message.includes(result.error.recovery)) {
      lines.push(`**Recovery:** ${result.error.recovery}`, "");
    }
  }
  const texts: string[] = [];
  for (const part of contentParts(result.content)) {
    if (part.type === "text" && part.text !== undefined) {
      if (!(result.isError && part.text === result.error?.message)) {
        texts.push(part.text);
      }
    } else if (part.type === "image") {
      texts.push(`[image ${part.mimeType ?? "?"}]`);
    }
  }
  if (texts.length > 0) {
    lines.push(fenced(texts.join("\n"), "text"));
  } else if (!result.isError) {
    lines.push("(no output)");
  }
  return lines.join("\n") + "\n";
}
