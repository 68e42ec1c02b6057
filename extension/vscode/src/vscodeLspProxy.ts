// Answers toolhost/lspRequest with VS Code's own language features (the built-in
// TypeScript support, Pylance, ...): the agent's lsp_* questions are answered by the warm
// servers the user already runs, with their interpreter and tsconfig. A document that is
// not open is opened in the background; no answer means handled = false, and toolhost
// asks its own server.

import * as vscode from "vscode";

import {
  type DiagnosticLike,
  type HoverPart,
  isEmptyAnswer,
  isProxyMethod,
  type LocationLike,
  type LspPosition,
  providerName,
  toLspDiagnosticReport,
  toLspHover,
  toLspLocations,
} from "./common/lspProxy";
import type { LspRequestParams, LspRequestResult } from "./common/protocol";

// Diagnostics of a document just opened arrive a moment later.
const DIAGNOSTICS_WAIT_MS = 5_000;
// Bound on waiting for a just-opened document's server to load its project (the server
// waits 30 s for the whole answer: lsp.editorTimeoutSeconds).
const READY_WAIT_MS = 10_000;
// Asks again (at most, and how far apart) until two answers agree, for a just-opened document.
const STABLE_ASKS = 4;
const STABLE_PAUSE_MS = 1_000;

interface TextDocumentParams {
  textDocument?: { uri?: string };
  position?: LspPosition;
  context?: { includeDeclaration?: boolean };
}

function position(params: TextDocumentParams): vscode.Position {
  const at = params.position ?? { line: 0, character: 0 };
  return new vscode.Position(at.line, at.character);
}

function sameLocation(a: { uri: string; range: { start: LspPosition } }, b: { uri: string; range: { start: LspPosition } }): boolean {
  return a.uri === b.uri && a.range.start.line === b.range.start.line && a.range.start.character === b.range.start.character;
}

/** Resolves at the first diagnostics change for `uri`, or after `timeoutMs`. */
function firstDiagnostics(uri: vscode.Uri, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      subscription.dispose();
      resolve();
    }, timeoutMs);
    const subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((changed) => changed.toString() === uri.toString())) {
        clearTimeout(timer);
        subscription.dispose();
        resolve();
      }
    });
  });
}

/** The document's diagnostics; none yet: wait (bounded) for the server to report some
 * (syntax checks come first, often empty, then the project's). A clean file costs the
 * whole wait. */
async function diagnosticsOf(uri: vscode.Uri): Promise<readonly vscode.Diagnostic[]> {
  const deadline = Date.now() + DIAGNOSTICS_WAIT_MS;
  while (vscode.languages.getDiagnostics(uri).length === 0 && Date.now() < deadline) {
    await firstDiagnostics(uri, deadline - Date.now());
  }
  return vscode.languages.getDiagnostics(uri);
}

/** VS Code checks only documents shown in an editor (its TypeScript support computes no
 * diagnostics for one opened in the background): no diagnostics for such a document is no
 * answer, not "no problems". */
function shownInAnEditor(uri: vscode.Uri): boolean {
  return vscode.window.visibleTextEditors.some((editor) => editor.document.uri.toString() === uri.toString());
}

/** Opening a document in the background starts its language's extensions; their providers
 * are registered once activation finishes, so wait for it before asking. */
async function activateLanguage(languageId: string): Promise<void> {
  const event = `onLanguage:${languageId}`;
  const pending = vscode.extensions.all.filter((extension) => {
    const events = (extension.packageJSON as { activationEvents?: string[] }).activationEvents ?? [];
    return !extension.isActive && events.includes(event);
  });
  await Promise.all(pending.map((extension) => Promise.resolve(extension.activate()).catch(() => undefined)));
}

async function ask(method: string, params: TextDocumentParams, uri: vscode.Uri): Promise<unknown> {
  switch (method) {
    case "textDocument/definition": {
      const found = await vscode.commands.executeCommand<LocationLike[]>("vscode.executeDefinitionProvider", uri, position(params));
      return toLspLocations(found);
    }
    case "textDocument/references": {
      const found = toLspLocations(await vscode.commands.executeCommand<LocationLike[]>("vscode.executeReferenceProvider", uri, position(params)));
      if (params.context?.includeDeclaration !== false) {
        return found;
      }
      const declarations = toLspLocations(await vscode.commands.executeCommand<LocationLike[]>("vscode.executeDefinitionProvider", uri, position(params)));
      return found.filter((location) => !declarations.some((declaration) => sameLocation(location, declaration)));
    }
    case "textDocument/hover": {
      const hovers = await vscode.commands.executeCommand<{ contents: HoverPart[] }[]>("vscode.executeHoverProvider", uri, position(params));
      return toLspHover(hovers);
    }
    default:
      return toLspDiagnosticReport((await diagnosticsOf(uri)) as readonly DiagnosticLike[]);
  }
}

export async function answerLspRequest(request: LspRequestParams): Promise<LspRequestResult> {
  const params = (request.params ?? {}) as TextDocumentParams;
  const text = params.textDocument?.uri;
  if (!isProxyMethod(request.method) || typeof text !== "string") {
    return { handled: false };
  }
  const uri = vscode.Uri.parse(text);
  const wasOpen = vscode.workspace.textDocuments.some((open) => open.uri.toString() === uri.toString());
  const document = await vscode.workspace.openTextDocument(uri);
  if (document.languageId === "plaintext") {
    return { handled: false };
  }
  await activateLanguage(document.languageId);
  if (!wasOpen && request.method !== "textDocument/diagnostic") {
    // A server still loading the project answers in part (TypeScript points at the import
    // instead of the definition): its first diagnostics for the document say it is loaded.
    await firstDiagnostics(uri, READY_WAIT_MS);
  }
  let result = await ask(request.method, params, uri);
  if (!wasOpen && request.method !== "textDocument/diagnostic") {
    // A project that is still loading gives partial answers; one that repeats is whole.
    for (let attempt = 0; attempt < STABLE_ASKS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, STABLE_PAUSE_MS));
      const again = await ask(request.method, params, uri);
      const same = JSON.stringify(again) === JSON.stringify(result);
      result = again;
      if (same) {
        break;
      }
    }
  }
  if (isEmptyAnswer(request.method, result)) {
    return { handled: false };
  }
  if (request.method === "textDocument/diagnostic" && !shownInAnEditor(uri) && vscode.languages.getDiagnostics(uri).length === 0) {
    return { handled: false };
  }
  return { handled: true, result, server: providerName(document.languageId) };
}
