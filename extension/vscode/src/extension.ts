// Entry point: wires the server controller, the language-model tools and the
// commands together. The logic lives in src/common (unit-tested); this file
// only connects it to VS Code.

import * as path from "node:path";
import * as vscode from "vscode";

import { JOBS_SESSION, JobOutputs, jobActions, jobRows, KILL, killConfirmation } from "./common/jobActions";
import { ConfirmedCalls, invokeLmTool, prepareInvocation, toolFromLmName } from "./common/lmTools";
import { type CallParams, type CallResult, type CheckpointInfo, contentParts, type ToolInfo, type ToolsResult } from "./common/protocol";
import type { PreviewParams, PreviewResult } from "./common/protocol";
import { argumentSkeleton, formatCallResult, parseArguments, toolPickItem } from "./common/runTool";
import { type AgentRow, agentRows, formatRevertAllResult, formatSessionChanges, REVERT_ALL_CHOICE, revertAllConfirmation } from "./common/agentChanges";
import { checkpointRows, formatRevertResult, REVERT_CHOICE, revertConfirmation } from "./common/checkpoints";
import { ServerController, type ToolhostEvent } from "./serverController";
import { ApprovalEditors, PREVIEW_SCHEME, PreviewDocuments, VsCodeHost } from "./vscodeHost";
import { offerTrustOnNotice, trustWorkspaceConfigCommand } from "./vscodeConfigTrust";

/** The session of calls made by hand from the command palette. */
const COMMAND_SESSION = "vscode";

/** What other extensions (and the end-to-end test) can use. */
export interface ToolhostApi {
  call(name: string, args: Record<string, unknown>, session?: string): Promise<CallResult>;
  tools(surface?: "core" | "full" | "minimal"): Promise<ToolsResult>;
  onEvent(listener: (event: ToolhostEvent) => void): vscode.Disposable;
  /** toolhost/status of the running server. */
  status(): Promise<unknown>;
  /** toolhost/preview: what a call would do and whether it would ask, without running it. */
  preview(name: string, args: Record<string, unknown>, session?: string): Promise<PreviewResult>;
  readonly serverState: string;
  /** Resolves once the first server start finished (running or failed). */
  whenStarted(): Promise<string>;
}

interface ContributedTool {
  name: string;
  modelDescription: string;
  tags?: string[];
  inputSchema?: Record<string, unknown>;
}

function contributedTools(context: vscode.ExtensionContext): ToolInfo[] {
  const packageJson = context.extension.packageJSON as { contributes?: { languageModelTools?: ContributedTool[] } };
  const tools: ToolInfo[] = [];
  for (const entry of packageJson.contributes?.languageModelTools ?? []) {
    const name = toolFromLmName(entry.name);
    if (name !== undefined) {
      tools.push({
        name,
        description: entry.modelDescription,
        readOnly: entry.tags?.includes("readOnly") ?? false,
        inputSchema: entry.inputSchema ?? {},
      });
    }
  }
  return tools;
}

function registerLmTools(context: vscode.ExtensionContext, controller: ServerController, output: vscode.OutputChannel): void {
  if (typeof vscode.lm?.registerTool !== "function") {
    output.appendLine("language-model tools: this VS Code has no vscode.lm.registerTool; skipped");
    return;
  }
  const confirmed = new ConfirmedCalls();
  for (const tool of contributedTools(context)) {
    const lmTool: vscode.LanguageModelTool<Record<string, unknown>> = {
      async prepareInvocation(options, token) {
        const preview = (params: PreviewParams) => controller.preview(params, token);
        const prepared = await prepareInvocation(tool, options.input ?? {}, preview, confirmed);
        return {
          invocationMessage: prepared.invocationMessage,
          confirmationMessages: prepared.confirmation
            ? { title: prepared.confirmation.title, message: new vscode.MarkdownString(prepared.confirmation.message) }
            : undefined,
        };
      },
      async invoke(options, token) {
        const parts = await invokeLmTool((params: CallParams) => controller.call(params, token), tool, options.input ?? {}, confirmed);
        return new vscode.LanguageModelToolResult(parts.map((text) => new vscode.LanguageModelTextPart(text)));
      },
    };
    context.subscriptions.push(vscode.lm.registerTool(`toolhost_${tool.name}`, lmTool));
  }
  output.appendLine(`language-model tools: registered ${contributedTools(context).length}`);
}

async function runToolCommand(controller: ServerController, host: VsCodeHost, previews: PreviewDocuments): Promise<void> {
  let listing: ToolsResult;
  try {
    listing = await controller.tools("full");
  } catch (error) {
    void host.showError(`Toolhost: ${(error as Error).message}`);
    return;
  }
  const picked = await host.showQuickPick(
    listing.tools.map(toolPickItem),
    "Pick a toolhost tool to run",
  );
  if (picked === undefined) {
    return;
  }
  let text = argumentSkeleton(picked.tool);
  for (;;) {
    const typed = await host.showInputBox({
      title: `toolhost ${picked.tool.name}`,
      prompt: "Arguments as a JSON object",
      value: text,
    });
    if (typed === undefined) {
      return;
    }
    const parsed = parseArguments(typed);
    if (parsed.ok) {
      const result = await controller.call({ name: picked.tool.name, arguments: parsed.value, session: COMMAND_SESSION });
      const uri = previews.add(`${picked.tool.name}-result.md`, formatCallResult(picked.tool.name, parsed.value, result));
      await vscode.window.showTextDocument(uri, { preview: true });
      // After the result is shown: whoever follows the event sees the editor it opened.
      controller.emit({ kind: "runTool", tool: picked.tool.name, arguments: parsed.value, result });
      return;
    }
    host.showInfo(parsed.message);
    text = typed;
  }
}

async function showJobs(controller: ServerController, previews: PreviewDocuments, outputs: JobOutputs): Promise<void> {
  try {
    await controller.refreshStatus();
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
    return;
  }
  const jobs = controller.jobs.all();
  if (jobs.length === 0) {
    void vscode.window.showInformationMessage("Toolhost: no background jobs.");
    return;
  }
  const picked = await vscode.window.showQuickPick(jobRows(jobs), { placeHolder: "Background jobs: pick one to see its output or kill it" });
  if (picked === undefined) {
    return;
  }
  const job = picked.job;
  const action = await vscode.window.showQuickPick(jobActions(job), { placeHolder: `${job.jobId}${job.command ? `: ${job.command}` : ""}` });
  if (action?.action === "output") {
    const result = await controller.call({ name: "job_output", arguments: { job_id: job.jobId }, session: JOBS_SESSION });
    const text = contentParts(result.content).map((part) => part.text ?? "").join("\n");
    if (result.isError) {
      void vscode.window.showErrorMessage(`Toolhost: job_output ${job.jobId}: ${result.error?.message ?? text}`);
      return;
    }
    outputs.append(job.jobId, text);
    await vscode.window.showTextDocument(previews.add(`${job.jobId}-output.md`, outputs.document(job)), { preview: true });
  } else if (action?.action === "kill") {
    const { message, detail } = killConfirmation(job);
    if ((await vscode.window.showWarningMessage(message, { modal: true, detail }, KILL)) !== KILL) {
      return;
    }
    // The user just confirmed the kill: the server does not ask again (deny rules still apply).
    const args = { job_id: job.jobId, reason: "killed from VS Code (Show Jobs)" };
    const result = await controller.call({ name: "job_kill", arguments: args, session: job.session, preApproved: true });
    const text = contentParts(result.content).map((part) => part.text ?? "").join("\n");
    void vscode.window.showInformationMessage(`Toolhost: job_kill ${job.jobId}: ${result.isError ? (result.error?.message ?? text) : text}`);
  }
}

/** Toolhost: Show Activity — every call, newest first; picking one shows its result. */
async function showActivity(controller: ServerController, previews: PreviewDocuments, log: vscode.OutputChannel): Promise<void> {
  const logItem = { label: "$(output) Open the activity log", description: "one line per call", entry: undefined };
  const rows = controller.activityLog.groupedRows().map((row) => ("separator" in row ? { label: row.label, kind: vscode.QuickPickItemKind.Separator, entry: undefined } : row));
  const picked = await vscode.window.showQuickPick([...rows, logItem], {
    placeHolder: rows.length === 0 ? "No calls yet" : "Calls by agent, newest first: pick one to see its result",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked?.entry === undefined) {
    if (picked !== undefined) {
      log.show();
    }
    return;
  }
  const document = controller.activityLog.resultDocument(picked.entry);
  await vscode.window.showTextDocument(previews.add(`${picked.entry.call.tool}-${picked.entry.call.callId}.md`, document), { preview: true });
}

/** Toolhost: Revert a Call... — pick a checkpoint (newest first), confirm in a modal that
 * lists what will change, revert, and show the result (conflicts with their diffs). */
async function revertCallCommand(controller: ServerController, previews: PreviewDocuments, callId?: string): Promise<void> {
  let listed: CheckpointInfo[];
  try {
    listed = (await controller.checkpoints({ limit: 200 })).checkpoints;
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
    return;
  }
  let checkpoint = callId === undefined ? undefined : listed.find((c) => c.callId === callId);
  if (checkpoint === undefined) {
    if (listed.length === 0) {
      void vscode.window.showInformationMessage("Toolhost: no checkpoints yet (no call changed a file).");
      return;
    }
    const picked = await vscode.window.showQuickPick(checkpointRows(listed), {
      placeHolder: "Revert this call: pick a call that changed files (newest first)",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    checkpoint = picked?.checkpoint;
  }
  if (checkpoint === undefined) {
    return;
  }
  const { message, detail } = revertConfirmation(checkpoint);
  if ((await vscode.window.showWarningMessage(message, { modal: true, detail }, REVERT_CHOICE)) !== REVERT_CHOICE) {
    return;
  }
  try {
    const result = await controller.revert({ callId: checkpoint.callId, session: "vscode" });
    const uri = previews.add(`revert-${checkpoint.callId}.txt`, formatRevertResult(result));
    await vscode.window.showTextDocument(uri, { preview: true });
    if (result.conflicts.length > 0) {
      void vscode.window.showWarningMessage(`Toolhost: ${result.conflicts.length} file(s) changed since the call were left alone.`);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
  }
}

/** Toolhost: Review an Agent's Changes... / Revert All of an Agent's Changes... — pick a
 * session (its agent named, the newest first), then show one diff of everything it
 * changed, or confirm and revert each of its calls, newest first. */
async function pickAgent(controller: ServerController, placeHolder: string): Promise<AgentRow | undefined> {
  let listed: CheckpointInfo[];
  try {
    listed = (await controller.checkpoints({ limit: 1000 })).checkpoints;
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
    return undefined;
  }
  if (listed.length === 0) {
    void vscode.window.showInformationMessage("Toolhost: no checkpoints yet (no agent changed a file).");
    return undefined;
  }
  return vscode.window.showQuickPick(agentRows(listed), { placeHolder, matchOnDescription: true, matchOnDetail: true });
}

async function reviewAgentCommand(controller: ServerController, previews: PreviewDocuments): Promise<void> {
  const row = await pickAgent(controller, "Review an agent's changes: pick an agent (session)");
  if (row === undefined) {
    return;
  }
  try {
    const result = await controller.sessionChanges({ session: row.session });
    const uri = previews.add(`changes-${row.session}.diff`, formatSessionChanges(result));
    await vscode.window.showTextDocument(uri, { preview: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
  }
}

async function revertAgentCommand(controller: ServerController, previews: PreviewDocuments): Promise<void> {
  const row = await pickAgent(controller, "Revert all of an agent's changes: pick an agent (session)");
  if (row === undefined) {
    return;
  }
  const { message, detail } = revertAllConfirmation(row);
  if ((await vscode.window.showWarningMessage(message, { modal: true, detail }, REVERT_ALL_CHOICE)) !== REVERT_ALL_CHOICE) {
    return;
  }
  try {
    const result = await controller.revertSession({ session: row.session, by: "vscode", includeShared: false });
    await vscode.window.showTextDocument(previews.add(`revert-${row.session}.txt`, formatRevertAllResult(result)), { preview: true });
    if (result.conflicts.length > 0) {
      void vscode.window.showWarningMessage(`Toolhost: ${result.conflicts.length} file(s) were left alone (see the result).`);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`Toolhost: ${(error as Error).message}`);
  }
}

async function openPolicy(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (folder === undefined) {
    void vscode.window.showInformationMessage("Toolhost: open a folder first; the policy file is <folder>/.toolhost.toml.");
    return;
  }
  const file = vscode.Uri.file(path.join(folder.uri.fsPath, ".toolhost.toml"));
  try {
    await vscode.workspace.fs.stat(file);
    await vscode.window.showTextDocument(file);
  } catch {
    // Not there yet: an unsaved buffer at that path; saving it creates the file.
    const document = await vscode.workspace.openTextDocument(file.with({ scheme: "untitled" }));
    const editor = await vscode.window.showTextDocument(document);
    await editor.edit((edit) =>
      edit.insert(new vscode.Position(0, 0), '[policy]\nmode = "default"\nallow = []\nask = []\ndeny = []\n'),
    );
  }
}

export function activate(context: vscode.ExtensionContext): ToolhostApi {
  const output = vscode.window.createOutputChannel("Toolhost", { log: true });
  const activity = vscode.window.createOutputChannel("Toolhost Activity");
  const previews = new PreviewDocuments();
  const approvals = new ApprovalEditors((line) => output.appendLine(line));
  const jobOutputs = new JobOutputs();
  const host = new VsCodeHost(output, approvals);
  const controller = new ServerController(context, host, output, activity);
  context.subscriptions.push(
    output,
    activity,
    previews,
    approvals,
    controller,
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, previews),
    vscode.commands.registerCommand("toolhost.restartServer", () => controller.restart()),
    vscode.commands.registerCommand("toolhost.showActivity", () => showActivity(controller, previews, activity)),
    vscode.commands.registerCommand("toolhost.showLog", () => output.show()),
    vscode.commands.registerCommand("toolhost.showJobs", () => showJobs(controller, previews, jobOutputs)),
    vscode.commands.registerCommand("toolhost.runTool", () => runToolCommand(controller, host, previews)),
    vscode.commands.registerCommand("toolhost.openPolicy", () => openPolicy()),
    vscode.commands.registerCommand("toolhost.revertCall", (callId?: string) => revertCallCommand(controller, previews, callId)),
    vscode.commands.registerCommand("toolhost.reviewAgentChanges", () => reviewAgentCommand(controller, previews)),
    vscode.commands.registerCommand("toolhost.revertAgentChanges", () => revertAgentCommand(controller, previews)),
    vscode.commands.registerCommand("toolhost.trustWorkspaceConfig", () => trustWorkspaceConfigCommand(controller, previews)),
    offerTrustOnNotice(controller, previews, (line) => output.appendLine(line)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.appendLine("workspace trusted: restarting the server out of readOnly mode");
      void controller.restart();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("toolhost")) {
        void controller.settingsChanged();
      }
    }),
  );
  registerLmTools(context, controller, output);
  // Activation does not wait for the server (its first start can take seconds).
  const started = controller.start().then(() => controller.serverState);
  return {
    whenStarted: () => started,
    call: (name, args, session = COMMAND_SESSION) => controller.call({ name, arguments: args, session }),
    tools: (surface = "full") => controller.tools(surface),
    onEvent: (listener) => controller.onEvent(listener),
    status: () => controller.status(),
    preview: (name, args, session = COMMAND_SESSION) => controller.preview({ name, arguments: args, session }),
    get serverState() {
      return controller.serverState;
    },
  };
}

export function deactivate(): void {
  // The controller is in context.subscriptions: VS Code disposes it (stopping the server).
}
