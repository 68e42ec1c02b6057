// "Toolhost: Run Tool...": a starting JSON for the picked tool, parsing what the
// user typed, and the result as a readable document.

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

export function formatCallResult(tool: string, args: Record<string, unknown>, result: CallResult): string {
  const lines = [`# toolhost ${tool} ${JSON.stringify(args)}`];
  lines.push(`# callId ${result.callId}: ${result.isError ? `ERROR ${result.error?.code ?? ""}` : "ok"}`);
  if (result.isError && result.error) {
    lines.push(result.error.message);
    if (result.error.recovery) {
      lines.push(`recovery: ${result.error.recovery}`);
    }
  }
  for (const part of contentParts(result.content)) {
    if (part.type === "text" && part.text !== undefined) {
      if (!(result.isError && part.text === result.error?.message)) {
        lines.push(part.text);
      }
    } else if (part.type === "image") {
      lines.push(`[image ${part.mimeType ?? "?"}]`);
    }
  }
  if (result.meta) {
    lines.push("", `# meta ${JSON.stringify(result.meta)}`);
  }
  return lines.join("\n") + "\n";
}
