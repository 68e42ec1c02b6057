// The editor side of a workspace .toolhost.toml awaiting review: the server's
// toolhost/configUntrusted becomes a notification (Review / Trust this content), and the
// command "Toolhost: Review and Trust Workspace Config..." offers the same for any file
// toolhost/status lists as untrusted. The logic is in src/common/configTrust.ts.

import * as fs from "node:fs/promises";
import * as vscode from "vscode";

import { reviewAndTrust, type TrustUi, untrustedFromStatus } from "./common/configTrust";
import type { ConfigUntrustedParams } from "./common/protocol";
import type { ServerController } from "./serverController";
import type { PreviewDocuments } from "./vscodeHost";

function trustUi(previews: PreviewDocuments): TrustUi {
  return {
    notify: async (message, ...actions) => vscode.window.showWarningMessage(message, ...actions),
    showContent: async (title, text) => {
      const document = await vscode.workspace.openTextDocument(previews.add(title.replace(/[/\\]/g, "_"), text));
      await vscode.languages.setTextDocumentLanguage(document, "toml").then(undefined, () => document);
      await vscode.window.showTextDocument(document, { preview: false });
    },
    readBytes: async (file) => fs.readFile(file).catch(() => undefined),
    info: (message) => void vscode.window.showInformationMessage(message),
  };
}

/** Offers review and trust for each toolhost/configUntrusted the server sends (once per content). */
export function offerTrustOnNotice(controller: ServerController, previews: PreviewDocuments, log: (line: string) => void): vscode.Disposable {
  const offered = new Set<string>();
  return controller.onEvent((event) => {
    if (event.kind !== "configUntrusted" || offered.has(`${event.params.path}\n${event.params.sha256}`)) {
      return;
    }
    offered.add(`${event.params.path}\n${event.params.sha256}`);
    reviewAndTrust(trustUi(previews), event.params, (request) => controller.trustConfig(request)).catch((error: unknown) =>
      log(`review of ${event.params.path} failed: ${String(error)}`),
    );
  });
}

/** Command toolhost.trustWorkspaceConfig: pick an untrusted workspace config, review, trust. */
export async function trustWorkspaceConfigCommand(controller: ServerController, previews: PreviewDocuments): Promise<void> {
  let untrusted: ConfigUntrustedParams[];
  try {
    untrusted = untrustedFromStatus(await controller.status());
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
    return;
  }
  if (untrusted.length === 0) {
    void vscode.window.showInformationMessage("Toolhost: no workspace .toolhost.toml is waiting for review.");
    return;
  }
  const picked =
    untrusted.length === 1
      ? untrusted[0]
      : (
          await vscode.window.showQuickPick(
            untrusted.map((entry) => ({ label: entry.path, description: entry.reason, detail: entry.ignored.join(", "), entry })),
            { placeHolder: "Which workspace config to review" },
          )
        )?.entry;
  if (picked !== undefined) {
    await reviewAndTrust(trustUi(previews), picked, (request) => controller.trustConfig(request), false);
  }
}
