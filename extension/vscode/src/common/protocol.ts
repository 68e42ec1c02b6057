// The toolhost/* messages, as the extension uses them. The types come from
// protocol.generated.ts (generated from schemas/protocol.json); METHODS is
// typed by the generated method union, so a misspelt or removed method fails tsc.

import type { ToolhostMethod } from "./protocol.generated";

export type {
  ApproveParams,
  ApproveResult,
  CallMeta,
  CallParams,
  CallResult,
  CheckpointFile,
  CheckpointInfo,
  CheckpointsParams,
  CheckpointsResult,
  DidCallParams,
  ErrorInfo,
  JobUpdateParams,
  PresentParams,
  RevertParams,
  RevertResult,
  SaveDocumentParams,
  SaveDocumentResult,
  StatusResult,
  ToolInfo,
  ToolsParams,
  ToolsResult,
} from "./protocol.generated";

export const METHODS = {
  tools: "toolhost/tools",
  call: "toolhost/call",
  result: "toolhost/result",
  status: "toolhost/status",
  checkpoints: "toolhost/checkpoints",
  revert: "toolhost/revert",
  approve: "toolhost/approve",
  saveDocument: "toolhost/saveDocument",
  didCall: "toolhost/didCall",
  jobUpdate: "toolhost/jobUpdate",
  present: "toolhost/present",
} as const satisfies Record<string, ToolhostMethod>;

/** One element of CallResult.content (the schema leaves it open: MCP-style parts). */
export interface ContentPart {
  type: "text" | "image" | string;
  text?: string;
  mimeType?: string;
  data?: string;
}

export function contentParts(content: readonly unknown[]): ContentPart[] {
  return content.filter((part): part is ContentPart => typeof part === "object" && part !== null && "type" in part);
}
