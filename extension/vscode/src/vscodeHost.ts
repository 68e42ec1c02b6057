// The real Host and SystemProbe: the only place the common logic meets the
// vscode API, node's fs and child_process.

import { execFile } from "node:child_process";
import { constants as fsConstants, promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

import { DECISION_COMMANDS, DECISIONS } from "./common/approvals";
import type { ApprovalDiff, DecisionPrompt, Host, InputBoxRequest, QuickPickEntry, SystemProbe } from "./common/host";
import { keepWhitespace } from "./common/markdown";

export const PREVIEW_SCHEME = "toolhost-preview";
/** The documents of a pending approval: package.json puts the decisions on their title bar. */
export const APPROVAL_SCHEME = "toolhost-approval";

/** In-memory documents for diffs and results (read-only views). */
export class PreviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private counter = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly scheme = PREVIEW_SCHEME) {}

  add(name: string, text: string): vscode.Uri {
    this.counter += 1;
    const uri = vscode.Uri.from({ scheme: this.scheme, path: `/${this.counter}/${name}` });
    this.texts.set(uri.toString(), text);
    // Keep memory bounded: previews are short-lived.
    if (this.texts.size > 50) {
      const oldest = this.texts.keys().next().value;
      if (oldest !== undefined) {
        this.texts.delete(oldest);
      }
    }
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The URIs an editor tab shows (both sides of a diff). */
function tabUris(tab: vscode.Tab): string[] {
  const input = tab.input;
  if (input instanceof vscode.TabInputTextDiff) {
    return [input.original.toString(), input.modified.toString()];
  }
  return input instanceof vscode.TabInputText ? [input.uri.toString()] : [];
}

/** One open approval editor: the decisions clicked on its title bar, in order. */
class PendingDecision implements DecisionPrompt {
  private readonly choices: string[] = [];
  private waiting: ((choice: string | undefined) => void) | undefined;
  private closed = false;

  constructor(
    readonly uris: string[],
    private readonly onClose: (pending: PendingDecision) => void,
  ) {}

  push(choice: string): void {
    if (this.waiting !== undefined) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve(choice);
    } else {
      this.choices.push(choice);
    }
  }

  next(): Promise<string | undefined> {
    const queued = this.choices.shift();
    if (queued !== undefined || this.closed) {
      return Promise.resolve(queued);
    }
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** The tab went away (the user closed it) or the decision is made. */
  close(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.waiting?.(undefined);
    this.waiting = undefined;
    this.onClose(this);
  }
}

/**
 * Approval editors: the proposed change in VS Code's diff editor (read-only documents of
 * APPROVAL_SCHEME), the decisions as that editor's title-bar actions, the request's
 * details in a status bar item. Closing the tab is a dismissal.
 */
export class ApprovalEditors implements vscode.Disposable {
  private readonly documents = new PreviewDocuments(APPROVAL_SCHEME);
  private readonly pending = new Map<string, PendingDecision>();
  private readonly status = vscode.window.createStatusBarItem("toolhost.approval", vscode.StatusBarAlignment.Left, 11);
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly log: (line: string) => void) {
    this.status.name = "Toolhost approval";
    this.subscriptions = [
      this.documents,
      this.status,
      vscode.workspace.registerTextDocumentContentProvider(APPROVAL_SCHEME, this.documents),
      vscode.window.tabGroups.onDidChangeTabs((change) => {
        change.closed.forEach((tab) => this.closedByUser(tab));
      }),
      ...DECISION_COMMANDS.map((command, index) =>
        vscode.commands.registerCommand(command, (uri?: vscode.Uri) => this.choose(DECISIONS[index], uri)),
      ),
    ];
  }

  async open(request: ApprovalDiff): Promise<DecisionPrompt> {
    const name = path.basename(request.path);
    const options = { preview: false };
    let uris: vscode.Uri[];
    if (request.patch !== undefined) {
      uris = [this.documents.add(`${name}.diff`, request.patch)];
    } else {
      uris = [this.documents.add(`current/${name}`, request.before ?? ""), this.documents.add(`proposed/${name}`, request.after ?? "")];
    }
    const pending = new PendingDecision(
      uris.map((uri) => uri.toString()),
      (done) => this.forget(done),
    );
    pending.uris.forEach((uri) => this.pending.set(uri, pending));
    this.status.text = `$(shield) Toolhost: ${request.title} — decide on the diff's title bar`;
    this.status.tooltip = new vscode.MarkdownString().appendCodeblock(request.detail, "text");
    this.status.show();
    if (uris.length === 1) {
      await vscode.window.showTextDocument(uris[0], options);
    } else {
      await vscode.commands.executeCommand("vscode.diff", uris[0], uris[1], request.title, options);
    }
    return pending;
  }

  /** A title-bar action: the URI of its editor, or the active tab when run from elsewhere. */
  private choose(choice: string, uri?: vscode.Uri): void {
    const active = vscode.window.tabGroups.activeTabGroup.activeTab;
    const keys = uri instanceof vscode.Uri ? [uri.toString()] : active !== undefined ? tabUris(active) : [];
    const pending = keys.map((key) => this.pending.get(key)).find((p) => p !== undefined);
    if (pending === undefined) {
      void vscode.window.showInformationMessage("Toolhost: this editor has no pending approval (it was answered or timed out).");
      return;
    }
    pending.push(choice);
  }

  private closedByUser(tab: vscode.Tab): void {
    const pending = tabUris(tab)
      .map((uri) => this.pending.get(uri))
      .find((p) => p !== undefined);
    if (pending !== undefined) {
      this.log(`approval editor "${tab.label}" closed without a decision: dismissed`);
      pending.close();
    } else if (tab.label.startsWith("Approve?")) {
      this.log(`approval editor "${tab.label}" closed: no pending approval for ${tabUris(tab).join(", ") || tab.input?.constructor?.name}`);
    }
  }

  private forget(done: PendingDecision): void {
    done.uris.forEach((uri) => this.pending.delete(uri));
    if (this.pending.size === 0) {
      this.status.hide();
    }
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => tabUris(tab).some((uri) => done.uris.includes(uri)));
    if (tabs.length > 0) {
      void vscode.window.tabGroups.close(tabs, true);
    }
  }

  dispose(): void {
    [...new Set(this.pending.values())].forEach((pending) => pending.close());
    this.subscriptions.forEach((subscription) => subscription.dispose());
  }
}

export class VsCodeHost implements Host {
  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly approvals: ApprovalEditors,
  ) {}

  async showModal(message: string, detail: string, items: readonly string[]): Promise<string | undefined> {
    return vscode.window.showWarningMessage(message, { modal: true, detail: keepWhitespace(detail) }, ...items);
  }

  async showInputBox(request: InputBoxRequest): Promise<string | undefined> {
    return vscode.window.showInputBox({
      title: request.title,
      prompt: request.prompt,
      value: request.value,
      placeHolder: request.placeHolder,
      password: request.password,
      ignoreFocusOut: true,
    });
  }

  async showQuickPick<T extends QuickPickEntry>(items: readonly T[], placeHolder: string): Promise<T | undefined> {
    return vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true });
  }

  async showError(message: string, ...actions: string[]): Promise<string | undefined> {
    return vscode.window.showErrorMessage(message, ...actions);
  }

  showInfo(message: string): void {
    void vscode.window.showInformationMessage(message);
  }

  showApprovalDiff(request: ApprovalDiff): Promise<DecisionPrompt> {
    return this.approvals.open(request);
  }

  async readText(filePath: string): Promise<string | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === filePath);
    if (open !== undefined) {
      return open.getText();
    }
    try {
      return await fs.readFile(filePath, "utf8");
    } catch {
      return undefined;
    }
  }

  log(line: string): void {
    this.output.appendLine(line);
  }
}

export class NodeProbe implements SystemProbe {
  async isExecutable(file: string): Promise<boolean> {
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile()) {
        return false;
      }
      await fs.access(file, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  }

  async which(command: string): Promise<string | undefined> {
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      if (dir === "") {
        continue;
      }
      const candidate = path.join(dir, command);
      if (await this.isExecutable(candidate)) {
        return candidate;
      }
    }
    return undefined;
  }

  run(command: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(command, [...args], { timeout: 20_000, windowsHide: true }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, stdout: String(stdout), stderr: error && !stderr ? error.message : String(stderr) });
      });
    });
  }
}
