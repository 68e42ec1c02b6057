// The toolhost/* messages the extension sends and answers. Checked against
// schemas/protocol.json by scripts/gen-protocol.mjs --check (method names and
// the property names of each type), so the two languages cannot drift.

export const METHODS = {
  tools: "toolhost/tools",
  call: "toolhost/call",
  result: "toolhost/result",
  status: "toolhost/status",
  approve: "toolhost/approve",
  saveDocument: "toolhost/saveDocument",
  didCall: "toolhost/didCall",
  jobUpdate: "toolhost/jobUpdate",
} as const;

export type Decision = "allow_once" | "allow_session" | "allow_always" | "deny";

export interface ApproveParams {
  callId: string;
  session: string;
  tool: string;
  readOnly: boolean;
  title: string;
  summary: string;
  arguments: Record<string, unknown>;
  paths: string[];
  diff?: string | null;
  risk: string;
  suggestedRules: string[];
}

export interface ApproveResult {
  decision: Decision;
  rule?: string;
  reason?: string;
}

export interface ToolInfo {
  name: string;
  description: string;
  readOnly: boolean;
  inputSchema: Record<string, unknown>;
}

export interface ToolsParams {
  surface?: "core" | "full" | "minimal";
  session?: string;
}

export interface ToolsResult {
  surface: string;
  surfaceHash: string;
  tools: ToolInfo[];
}

/** Set by the language-model tool path only: VS Code's own confirmation was shown and accepted. */
export interface ClientApproval {
  via: "vscode.lm";
  decision: "allow_once";
}

export interface CallParams {
  name: string;
  arguments: Record<string, unknown>;
  session?: string;
  callId?: string;
  clientApproval?: ClientApproval;
}

export interface ContentPart {
  type: "text" | "image";
  text?: string;
  mimeType?: string;
  data?: string;
}

export interface CallError {
  code: string;
  message: string;
  recovery?: string;
}

export interface CallResult {
  callId: string;
  isError: boolean;
  content: ContentPart[];
  error?: CallError | null;
  meta?: Record<string, unknown>;
}

export interface DidCallParams {
  callId: string;
  session: string;
  tool: string;
  decision?: string | null;
  rule?: string | null;
  isError: boolean;
  code?: string | null;
  durationMs: number;
  paths: string[];
}

export interface JobUpdateParams {
  jobId: string;
  session: string;
  status: string;
  exitCode?: number | null;
  newBytes?: number;
}

export interface SaveDocumentParams {
  uri: string;
}

export interface SaveDocumentResult {
  saved: boolean;
}
