// The real Host and SystemProbe: the only place the common logic meets the
// vscode API, node's fs and child_process.

import { execFile } from "node:child_process";
import { constants as fsConstants, promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

import type { Host, InputBoxRequest, QuickPickEntry, SystemProbe } from "./common/host";

export const PREVIEW_SCHEME = "toolhost-preview";

/** In-memory documents for diffs and results (read-only views). */
export class PreviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private counter = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  add(name: string, text: string): vscode.Uri {
    this.counter += 1;
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${this.counter}/${name}` });
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

export class VsCodeHost implements Host {
  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly previews: PreviewDocuments,
  ) {}

  async showModal(message: string, detail: string, items: readonly string[]): Promise<string | undefined> {
    return vscode.window.showWarningMessage(message, { modal: true, detail }, ...items);
  }

  async showInputBox(request: InputBoxRequest): Promise<string | undefined> {
    return vscode.window.showInputBox({
      title: request.title,
      prompt: request.prompt,
      value: request.value,
      placeHolder: request.placeHolder,
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

  async showDiff(title: string, before: string, after: string, filePath: string): Promise<void> {
    const name = path.basename(filePath);
    const left = this.previews.add(`current/${name}`, before);
    const right = this.previews.add(`proposed/${name}`, after);
    await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
  }

  async showDocument(content: string, language: string): Promise<void> {
    const document = await vscode.workspace.openTextDocument({ content, language });
    await vscode.window.showTextDocument(document, { preview: true });
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
