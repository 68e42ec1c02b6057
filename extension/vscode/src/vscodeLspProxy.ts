// Answers toolhost/lspRequest with VS Code's own language features (the built-in
// TypeScript support, Pylance, ...): the agent's lsp_* questions are answered by the warm
// servers the user already runs, with their interpreter and tsconfig. A document no tab
// shows is opened in a background tab for the question (VS Code's language features check
// only what tabs show) and that tab is closed again; no answer means handled = false, and
// toolhost asks its own server.

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

// Diagnostics of a document just shown arrive a moment later. The server waits 30 s for the
// whole answer (lsp.editorTimeoutSeconds).
const DIAGNOSTICS_WAIT_MS = 10_000;
// A project still loading: how long to wait for it, and how often to look.
const LOADING_WAIT_MS = 25_000;
const LOADING_PAUSE_MS = 500;
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

/** Resolves at the first diagnostics change for `uri` (true), or after `timeoutMs` (false). */
function firstDiagnostics(uri: vscode.Uri, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      subscription.dispose();
      resolve(false);
    }, timeoutMs);
    const subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((changed) => changed.toString() === uri.toString())) {
        clearTimeout(timer);
        subscription.dispose();
        resolve(true);
      }
    });
  });
}

/** The document's diagnostics, or undefined when nothing checked it: none yet, wait
 * (bounded) for its server to report (syntax checks come first, often empty, then the
 * project's). A clean file costs the whole wait. */
async function diagnosticsOf(uri: vscode.Uri): Promise<readonly vscode.Diagnostic[] | undefined> {
  const deadline = Date.now() + DIAGNOSTICS_WAIT_MS;
  let reported = false;
  while (vscode.languages.getDiagnostics(uri).length === 0 && Date.now() < deadline) {
    reported = (await firstDiagnostics(uri, deadline - Date.now())) || reported;
  }
  const found = vscode.languages.getDiagnostics(uri);
  return found.length > 0 || reported ? found : undefined;
}

function tabOf(uri: vscode.Uri): vscode.Tab | undefined {
  const wanted = uri.toString();
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      if (input instanceof vscode.TabInputText && input.uri.toString() === wanted) {
        return tab;
      }
      if (input instanceof vscode.TabInputTextDiff && input.modified.toString() === wanted) {
        return tab;
      }
    }
  }
  return undefined;
}

// Questions in flight per document shown in a background tab of ours: the last one closes it.
const borrowedTabs = new Map<string, number>();

/** Runs `body` while a tab shows the document: the user's own, or one opened in the
 * background (not focused, not replacing the preview tab) and closed afterwards. */
async function withTab<T>(uri: vscode.Uri, body: (opened: boolean) => Promise<T>): Promise<T> {
  const key = uri.toString();
  if (!borrowedTabs.has(key) && tabOf(uri) !== undefined) {
    return body(false);
  }
  const opened = !borrowedTabs.has(key);
  borrowedTabs.set(key, (borrowedTabs.get(key) ?? 0) + 1);
  try {
    if (opened) {
      await vscode.commands.executeCommand("vscode.open", uri, { background: true, preview: false, preserveFocus: true });
    }
    return await body(opened);
  } finally {
    const left = (borrowedTabs.get(key) ?? 1) - 1;
    if (left > 0) {
      borrowedTabs.set(key, left);
    } else {
      borrowedTabs.delete(key);
      const tab = tabOf(uri);
      if (tab !== undefined && !tab.isDirty) {
        await vscode.window.tabGroups.close(tab, true);
      }
    }
  }
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
    default: {
      // Nothing checked the document (no extension for its language): no answer, not "no problems".
      const found = await diagnosticsOf(uri);
      return found === undefined ? null : toLspDiagnosticReport(found as readonly DiagnosticLike[]);
    }
  }
}

/** Waits (bounded) while the document's server is still loading its project. VS Code's
 * TypeScript support answers from a syntax-only server until then (a definition points at
 * the import) and marks its hovers "(loading...)"; other servers never say so, and a
 * position without a hover cannot tell: both cost one hover. */
async function projectLoaded(uri: vscode.Uri, at: vscode.Position): Promise<void> {
  const deadline = Date.now() + LOADING_WAIT_MS;
  while (Date.now() < deadline) {
    const hovers = await vscode.commands.executeCommand<{ contents: HoverPart[] }[]>("vscode.executeHoverProvider", uri, at);
    const text = JSON.stringify(toLspHover(hovers) ?? "");
    if (!text.includes("(loading...)")) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, LOADING_PAUSE_MS));
  }
}

async function askUntilStable(method: string, params: TextDocumentParams, uri: vscode.Uri): Promise<unknown> {
  let result = await ask(method, params, uri);
  // A project that is still loading gives partial answers; one that repeats is whole.
  for (let attempt = 0; attempt < STABLE_ASKS; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, STABLE_PAUSE_MS));
    const again = await ask(method, params, uri);
    const same = JSON.stringify(again) === JSON.stringify(result);
    result = again;
    if (same) {
      break;
    }
  }
  return result;
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
  let result: unknown;
  if (request.method === "textDocument/diagnostic") {
    result = await withTab(uri, () => ask(request.method, params, uri));
  } else if (wasOpen) {
    result = await ask(request.method, params, uri);
  } else {
    await projectLoaded(uri, position(params));
    result = await askUntilStable(request.method, params, uri);
  }
  if (isEmptyAnswer(request.method, result)) {
    return { handled: false };
  }
  return { handled: true, result, server: providerName(document.languageId) };
}
