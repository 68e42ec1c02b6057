// The toolhost/* messages, as the extension uses them. The types come from
// protocol.generated.ts (generated from schemas/protocol.json); METHODS is
// typed by the generated method union, so a misspelt or removed method fails tsc.

import {
  TOOLHOST_APPROVE,
  TOOLHOST_CALL,
  TOOLHOST_CHECKPOINTS,
  TOOLHOST_DID_CALL,
  TOOLHOST_JOB_UPDATE,
  TOOLHOST_LSP_REQUEST,
  TOOLHOST_PRESENT,
  TOOLHOST_PREVIEW,
  TOOLHOST_RESULT,
  TOOLHOST_REVERT,
  TOOLHOST_REVERT_SESSION,
  TOOLHOST_SESSION_CHANGES,
  TOOLHOST_SAVE_DOCUMENT,
  TOOLHOST_SECRET,
  TOOLHOST_STATUS,
  TOOLHOST_TOOLS,
  TOOLHOST_CONFIG_UNTRUSTED,
  TOOLHOST_TRUST_CONFIG,
  type ToolhostMethod,
} from "./protocol.generated";
export type { PreviewParams, PreviewResult } from "./protocol.generated";

export type {
  ApproveParams,
  ApproveResult,
  CallMeta,
  ConfigUntrustedParams,
  CallParams,
  CallResult,
  CheckpointFile,
  CheckpointInfo,
  CheckpointsParams,
  CheckpointsResult,
  DidCallParams,
  ErrorInfo,
  JobUpdateParams,
  LspRequestParams,
  LspRequestResult,
  PresentParams,
  RevertParams,
  RevertResult,
  RevertSessionParams,
  RevertSessionResult,
  SaveDocumentParams,
  SaveDocumentResult,
  SecretParams,
  SecretResult,
  SessionChangesParams,
  SessionChangesResult,
  StatusResult,
  ToolInfo,
  ToolsParams,
  ToolsResult,
  TrustConfigParams,
  TrustConfigResult,
  WorkspaceConfigInfo,
} from "./protocol.generated";

export const METHODS = {
  tools: TOOLHOST_TOOLS,
  call: TOOLHOST_CALL,
  result: TOOLHOST_RESULT,
  status: TOOLHOST_STATUS,
  approve: TOOLHOST_APPROVE,
  saveDocument: TOOLHOST_SAVE_DOCUMENT,
  secret: TOOLHOST_SECRET,
  didCall: TOOLHOST_DID_CALL,
  jobUpdate: TOOLHOST_JOB_UPDATE,
  present: TOOLHOST_PRESENT,
  preview: TOOLHOST_PREVIEW,
  lspRequest: TOOLHOST_LSP_REQUEST,
  checkpoints: TOOLHOST_CHECKPOINTS,
  revert: TOOLHOST_REVERT,
  sessionChanges: TOOLHOST_SESSION_CHANGES,
  revertSession: TOOLHOST_REVERT_SESSION,
  trustConfig: TOOLHOST_TRUST_CONFIG,
  configUntrusted: TOOLHOST_CONFIG_UNTRUSTED,
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
