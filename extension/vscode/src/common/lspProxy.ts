// toolhost/lspRequest answered by the editor's own language features: the pure part.
// VS Code's execute*Provider commands return vscode objects; these functions turn their
// plain shapes into standard LSP JSON (positions in UTF-16, as both count), so the server
// formats the answer exactly as it formats its own servers'. src/vscodeLspProxy.ts calls
// the vscode API.

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface LspLocation {
  uri: string;
  range: LspRange;
}

/** The parts of a vscode.Location or vscode.LocationLink this module reads. */
export interface LocationLike {
  uri?: { toString(): string };
  range?: LspRange;
  targetUri?: { toString(): string };
  targetSelectionRange?: LspRange;
  targetRange?: LspRange;
}

/** The standard LSP requests the server sends (codeintel.md, protocol.md). */
export const LSP_PROXY_METHODS = [
  "textDocument/definition",
  "textDocument/references",
  "textDocument/hover",
  "textDocument/diagnostic",
] as const;
export type LspProxyMethod = (typeof LSP_PROXY_METHODS)[number];

export function isProxyMethod(method: string): method is LspProxyMethod {
  return (LSP_PROXY_METHODS as readonly string[]).includes(method);
}

function plainRange(range: LspRange): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

export function toLspLocations(items: readonly LocationLike[] | undefined): LspLocation[] {
  const found: LspLocation[] = [];
  for (const item of items ?? []) {
    const uri = item.targetUri ?? item.uri;
    const range = item.targetSelectionRange ?? item.targetRange ?? item.range;
    if (uri !== undefined && range !== undefined) {
      found.push({ uri: uri.toString(), range: plainRange(range) });
    }
  }
  return found;
}

/** A vscode.MarkdownString, a MarkedString ({language, value}) or a plain string. */
export type HoverPart = string | { value: string; language?: string };

export function toLspHover(hovers: readonly { contents: readonly HoverPart[] }[] | undefined): { contents: { kind?: string; language?: string; value: string }[] } | null {
  const contents: { kind?: string; language?: string; value: string }[] = [];
  for (const hover of hovers ?? []) {
    for (const part of hover.contents) {
      if (typeof part === "string") {
        contents.push({ kind: "markdown", value: part });
      } else if (part.language !== undefined) {
        contents.push({ language: part.language, value: part.value });
      } else {
        contents.push({ kind: "markdown", value: part.value });
      }
    }
  }
  return contents.length > 0 ? { contents } : null;
}

/** The parts of a vscode.Diagnostic this module reads (severity: VS Code's 0-3). */
export interface DiagnosticLike {
  range: LspRange;
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

/** VS Code counts severity Error = 0 .. Hint = 3; LSP counts Error = 1 .. Hint = 4. */
export function toLspDiagnosticReport(diagnostics: readonly DiagnosticLike[]): {
  kind: "full";
  items: Record<string, unknown>[];
} {
  return {
    kind: "full",
    items: diagnostics.map((d) => ({
      range: plainRange(d.range),
      severity: d.severity + 1,
      message: d.message,
      ...(d.source ? { source: d.source } : {}),
      ...(d.code !== undefined ? { code: typeof d.code === "object" ? d.code.value : d.code } : {}),
    })),
  };
}

/** How the provenance line names VS Code's answer: it does not say which extension gave it. */
export function providerName(languageId: string): string {
  return `VS Code ${languageId} language features`;
}

/** No answer: definitions and references with nothing in them (no provider for the file),
 * or diagnostics that nothing computed (null). An empty diagnostics report is an answer. */
export function isEmptyAnswer(method: LspProxyMethod, result: unknown): boolean {
  if (method === "textDocument/diagnostic") {
    return result === null;
  }
  return result === null || (Array.isArray(result) && result.length === 0);
}
