// Starts, stops and restarts the toolhost server (vscode-languageclient over
// stdio) and answers its requests to the editor: toolhost/approve and
// toolhost/saveDocument; forwards its notifications to the activity view,
// the job table and the status bar.

import * as vscode from "vscode";
import {
  type ClientCapabilities,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from "vscode-languageclient/node";

import * as fs from "node:fs";
import * as path from "node:path";

import { formatDidCall, JobTable, languageServersOf, serverLabel, type ServerState, statusBarText, statusBarTooltip } from "./common/activity";
import { ActivityLog } from "./common/activityLog";
import { askApproval } from "./common/approvals";
import type { Host } from "./common/host";
import { askSecret } from "./common/secrets";
import {
  type ApproveParams,
  type ApproveResult,
  type CallParams,
  type CallResult,
  type CheckpointsParams,
  type CheckpointsResult,
  type ConfigUntrustedParams,
  type DidCallParams,
  type JobUpdateParams,
  type LspRequestParams,
  type LspRequestResult,
  METHODS,
  type PresentParams,
  type RevertParams,
  type RevertResult,
  type RevertSessionParams,
  type RevertSessionResult,
  type SessionChangesParams,
  type SessionChangesResult,
  type SaveDocumentParams,
  type SaveDocumentResult,
  type SecretParams,
  type SecretResult,
  type ToolsResult,
  type TrustConfigParams,
  type TrustConfigResult,
} from "./common/protocol";
import type { PreviewParams, PreviewResult } from "./common/protocol";
import { type Bundle, resolveServer, type ServerCommand } from "./common/serverResolution";
import {
  answerConfiguration,
  buildSection,
  declaredSettingKeys,
  effectiveValue,
  ignoredWorkspaceKeys,
  type SettingValues,
  serverSettingKeys,
  settingsFileKeys,
  userOnlySettingKeys,
} from "./common/settings";
import { NodeProbe } from "./vscodeHost";
import { answerLspRequest } from "./vscodeLspProxy";

/** Declares what this client can do in initialize: capabilities.experimental.toolhost. */
class ToolhostCapabilities implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    experimental.toolhost = { approvals: true, saveDocument: true, lspProxy: true, preApproved: true, secrets: true };
    capabilities.experimental = experimental;
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: "static" };
  }
  clear(): void {}
}

export type ToolhostEvent =
  | { kind: "state"; state: ServerState; detail?: string }
  | { kind: "approval"; params: ApproveParams; result: ApproveResult }
  | { kind: "secret"; params: SecretParams; answered: boolean }
  | { kind: "didCall"; params: DidCallParams }
  | { kind: "jobUpdate"; params: JobUpdateParams }
  | { kind: "present"; params: PresentParams }
  | { kind: "runTool"; tool: string; arguments: Record<string, unknown>; result: CallResult }
  | { kind: "ignoredSettings"; keys: string[] }
  | { kind: "configUntrusted"; params: ConfigUntrustedParams }
  | { kind: "trustConfig"; params: TrustConfigParams; result: TrustConfigResult };

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: ServerState = "stopped";
  private source: string | undefined;
  private sourceDetail: string | undefined;
  private languageServers: { name: string; state: string }[] = [];
  readonly jobs = new JobTable();
  /** The Activity list's rows and the results of this editor's own calls. */
  readonly activityLog = new ActivityLog();
  private readonly listeners = new Set<(event: ToolhostEvent) => void>();
  private readonly statusItem: vscode.StatusBarItem;
  private statusRefresh: NodeJS.Timeout | undefined;
  /** The settings the running server was started with (JSON), to restart only on a real change. */
  private startedWith: string | undefined;
  /** Workspace settings already reported as ignored (told once per key). */
  private readonly reportedIgnored = new Set<string>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly host: Host,
    private readonly output: vscode.LogOutputChannel,
    private readonly activity: vscode.OutputChannel,
  ) {
    this.statusItem = vscode.window.createStatusBarItem("toolhost.status", vscode.StatusBarAlignment.Left, 10);
    this.statusItem.name = "Toolhost";
    this.statusItem.command = "toolhost.showJobs";
    this.updateStatusBar();
    this.statusItem.show();
  }

  onEvent(listener: (event: ToolhostEvent) => void): vscode.Disposable {
    this.listeners.add(listener);
    return new vscode.Disposable(() => this.listeners.delete(listener));
  }

  emit(event: ToolhostEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.output.appendLine(`listener failed: ${String(error)}`);
      }
    }
  }

  get serverState(): ServerState {
    return this.state;
  }

  private setState(state: ServerState, detail?: string): void {
    this.state = state;
    this.output.appendLine(`server state: ${state}${detail ? ` (${detail})` : ""}`);
    this.updateStatusBar();
    this.emit({ kind: "state", state, detail });
  }

  private updateStatusBar(): void {
    const summary = {
      state: this.state,
      server: serverLabel(this.source),
      runningJobs: this.jobs.running().length,
      languageServers: this.languageServers,
    };
    this.statusItem.text = statusBarText(summary);
    const from = this.source === undefined ? undefined : `${this.source}${this.sourceDetail ? `: ${this.sourceDetail}` : ""}`;
    this.statusItem.tooltip = statusBarTooltip(summary, from);
  }

  /** The server this package carries (bundled/bundle.json), if it carries one. */
  private bundle(): Bundle | undefined {
    const root = path.join(this.context.extensionPath, "bundled");
    try {
      const record = JSON.parse(fs.readFileSync(path.join(root, "bundle.json"), "utf8")) as { python: string; abi: string[]; wheel: string };
      const version = /^toolhost-([^-]+)-/.exec(record.wheel)?.[1] ?? "?";
      const pythons = [record.python, ...record.abi].sort((a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]));
      return { launcher: path.join(root, "tool", "toolhost_serve.py"), pythons, version };
    } catch {
      return undefined;
    }
  }

  private async resolve(): Promise<ServerCommand | undefined> {
    const config = vscode.workspace.getConfiguration("toolhost");
    const trusted = vscode.workspace.isTrusted;
    const userOnly = userOnlySettingKeys(this.packageJson());
    // The command that runs comes from the user's own settings only (scope "machine"), and in
    // an untrusted workspace every server setting does.
    const pick = <T>(key: string, fallback: T): T => {
      const values = config.inspect<T>(key);
      return (effectiveValue(values, trusted, userOnly.has(`toolhost.${key}`)) as T | undefined) ?? fallback;
    };
    const pythonExtension = vscode.extensions.getExtension("ms-python.python");
    const resolution = await resolveServer(
      {
        serverPath: pick("server.path", ""),
        serverPython: pick("server.python", ""),
        warm: pick("server.warm", false),
        pythonExtensionInstalled: pythonExtension !== undefined,
        bundle: this.bundle(),
        workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath),
        pythonExtensionInterpreter: async () => {
          try {
            const api = (await pythonExtension?.activate()) as
              | { environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } } }
              | undefined;
            return api?.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri).path;
          } catch (error) {
            this.output.appendLine(`server: the Python extension's API failed: ${String(error)}`);
            return undefined;
          }
        },
      },
      new NodeProbe(),
      (line) => this.output.appendLine(line),
    );
    if (!resolution.ok) {
      this.setState("failed", resolution.message);
      void this.host.showError(`Toolhost: ${resolution.message} Fix: ${resolution.fix}`, "Open Settings", "Show Log").then((action) => {
        if (action === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "toolhost.server");
        } else if (action === "Show Log") {
          this.output.show();
        }
      });
      return undefined;
    }
    this.source = resolution.server.source;
    this.sourceDetail = resolution.server.detail;
    return resolution.server;
  }

  async start(): Promise<void> {
    if (this.client !== undefined) {
      return;
    }
    this.setState("starting");
    const server = await this.resolve();
    if (server === undefined) {
      return;
    }
    const section = this.serverSection();
    const initializationOptions = { toolhost: { ...section, workspaceTrusted: vscode.workspace.isTrusted } };
    this.startedWith = this.settingsSnapshot(section);
    this.output.appendLine(`initializationOptions: ${JSON.stringify(initializationOptions)}`);
    void this.reportIgnoredSettings();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = { command: server.command, args: server.args, options: { cwd } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.output,
      initializationOptions,
      middleware: {
        workspace: {
          // VS Code's own answer would merge workspace settings files, undeclared keys and
          // all; the server gets the same declared, user-scoped values as at start.
          configuration: (params) => answerConfiguration(params.items.map((item) => item.section), this.serverSection()),
        },
      },
      // A broken server should be visible, not restarted forever in silence.
      connectionOptions: { maxRestartCount: 2 },
    };
    const client = new LanguageClient("toolhost", "Toolhost", serverOptions, clientOptions);
    client.registerFeature(new ToolhostCapabilities());
    client.onRequest(METHODS.approve, async (params: ApproveParams, token: vscode.CancellationToken): Promise<ApproveResult> => {
      // The server gave up waiting (its approval timeout): close the prompt.
      const abandoned = new AbortController();
      token.onCancellationRequested(() => abandoned.abort());
      const result = await askApproval(this.host, params, abandoned.signal);
      this.emit({ kind: "approval", params, result });
      return result;
    });
    client.onRequest(METHODS.secret, async (params: SecretParams): Promise<SecretResult> => {
      const result = await askSecret(this.host, params);
      // What was asked and whether it was answered: never the answer itself.
      this.emit({ kind: "secret", params, answered: result.cancelled !== true });
      return result;
    });
    client.onRequest(METHODS.lspRequest, async (params: LspRequestParams): Promise<LspRequestResult> => {
      try {
        return await answerLspRequest(params);
      } catch (error) {
        this.output.appendLine(`toolhost/lspRequest ${params.method} failed: ${String(error)}`);
        return { handled: false };
      }
    });
    client.onRequest(METHODS.saveDocument, async (params: SaveDocumentParams): Promise<SaveDocumentResult> => {
      const uri = vscode.Uri.parse(params.uri);
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (document === undefined) {
        return { saved: false };
      }
      return { saved: document.isDirty ? await document.save() : true };
    });
    client.onNotification(METHODS.didCall, (params: DidCallParams) => {
      this.activity.appendLine(formatDidCall(params, new Date()));
      this.activityLog.record(params, new Date());
      this.emit({ kind: "didCall", params });
      this.scheduleStatusRefresh();
    });
    client.onNotification(METHODS.jobUpdate, (params: JobUpdateParams) => {
      const job = this.jobs.update(params);
      this.activity.appendLine(`job ${job.jobId} (${job.session}): ${job.status}${job.exitCode != null ? ` exit ${job.exitCode}` : ""}`);
      this.emit({ kind: "jobUpdate", params });
      this.updateStatusBar();
      this.scheduleStatusRefresh();
    });
    client.onNotification(METHODS.present, (params: PresentParams) => {
      // The agent declared its deliverables: list them and offer to open the first.
      const names = params.files.map((file) => file.path);
      this.activity.appendLine(`deliverables (${params.session}): ${names.join(", ")}`);
      this.emit({ kind: "present", params });
      const first = params.files[0];
      if (first !== undefined) {
        void vscode.window
          .showInformationMessage(`toolhost: the agent presented ${names.join(", ")}`, "Open")
          .then((choice) => {
            if (choice === "Open") {
              void vscode.window.showTextDocument(vscode.Uri.parse(first.uri));
            }
          });
      }
    });
    client.onNotification(METHODS.configUntrusted, (params: ConfigUntrustedParams) => {
      // A workspace .toolhost.toml whose loosening settings wait for the user's review.
      this.output.appendLine(`${params.path}: ignored until reviewed (${params.reason}): ${params.ignored.join(", ")}`);
      this.emit({ kind: "configUntrusted", params });
    });
    client.onDidChangeState((change) => {
      // vscode-languageclient State: 1 Stopped, 2 Running, 3 Starting.
      if (change.newState === 1 && this.state === "running") {
        this.setState("stopped");
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      const message = error instanceof Error ? error.message : String(error);
      this.setState("failed", message);
      void this.host.showError(
        `Toolhost: the server (${server.command} ${server.args.join(" ")}) failed to start: ${message}. See the Toolhost output for its log.`,
      );
      return;
    }
    this.setState("running", `${server.source}: ${server.command} ${server.args.join(" ")}`);
    this.scheduleStatusRefresh();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`server stop: ${String(error)}`);
      }
    }
    this.jobs.clear();
    this.languageServers = [];
    this.setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private packageJson(): { contributes?: { configuration?: unknown } } {
    return this.context.extension.packageJSON as { contributes?: { configuration?: unknown } };
  }

  /** The toolhost section the server gets: declared keys, user-only ones from user settings. */
  private serverSection(): Record<string, unknown> {
    const packageJson = this.packageJson();
    const config = vscode.workspace.getConfiguration();
    const inspect = (key: string): SettingValues | undefined => config.inspect(key);
    return buildSection(serverSettingKeys(packageJson), inspect, vscode.workspace.isTrusted, userOnlySettingKeys(packageJson));
  }

  /** What a start depends on: the server section and the settings that choose the server. */
  private settingsSnapshot(section: Record<string, unknown>): string {
    const config = vscode.workspace.getConfiguration("toolhost");
    const server = ["server.path", "server.python", "server.warm"].map((key) => config.inspect(key)?.globalValue);
    return JSON.stringify({ section, server, trusted: vscode.workspace.isTrusted });
  }

  /** A toolhost setting changed: restart when what the server gets changed, else only say
   * which workspace values were ignored (so that writing .vscode/settings.json does not even
   * restart the server). */
  async settingsChanged(): Promise<void> {
    void this.reportIgnoredSettings();
    if (this.client !== undefined && this.startedWith === this.settingsSnapshot(this.serverSection())) {
      this.output.appendLine("toolhost settings changed, but not what the server gets: no restart");
      return;
    }
    this.output.appendLine("toolhost settings changed: restarting the server");
    await this.restart();
  }

  /** Tells the user once per key that a workspace or folder setting was ignored. */
  private async reportIgnoredSettings(): Promise<void> {
    const packageJson = this.packageJson();
    const config = vscode.workspace.getConfiguration();
    const files = (vscode.workspace.workspaceFolders ?? []).map((folder) => vscode.Uri.joinPath(folder.uri, ".vscode", "settings.json"));
    if (vscode.workspace.workspaceFile?.scheme === "file") {
      files.push(vscode.workspace.workspaceFile);
    }
    const rawKeys: string[] = [];
    for (const file of files) {
      try {
        rawKeys.push(...settingsFileKeys(new TextDecoder().decode(await vscode.workspace.fs.readFile(file))));
      } catch {
        // no such file
      }
    }
    const ignored = ignoredWorkspaceKeys(userOnlySettingKeys(packageJson), declaredSettingKeys(packageJson), (key) => config.inspect(key), rawKeys).filter(
      (key) => !this.reportedIgnored.has(key),
    );
    if (ignored.length === 0) {
      return;
    }
    ignored.forEach((key) => this.reportedIgnored.add(key));
    this.output.appendLine(`workspace settings ignored (user settings only): ${ignored.join(", ")}`);
    this.emit({ kind: "ignoredSettings", keys: ignored });
    const choice = await vscode.window.showWarningMessage(
      `Toolhost ignored ${ignored.join(", ")} in this workspace's settings: set ${ignored.length > 1 ? "them" : "it"} in your user settings (a workspace must not loosen toolhost's rules).`,
      "Open User Settings",
    );
    if (choice === "Open User Settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", ignored[0]);
    }
  }

  private requireClient(): LanguageClient {
    if (this.client === undefined || this.state !== "running") {
      throw new Error(`the toolhost server is ${this.state}; run "Toolhost: Restart Server" or see the Toolhost output`);
    }
    return this.client;
  }

  /**
   * One request with its params sent by name. vscode-jsonrpc sends every extra argument as a
   * positional param, so an `undefined` token would turn the params into an array.
   */
  private request<R>(method: string, params: object, token?: vscode.CancellationToken): Promise<R> {
    const client = this.requireClient();
    return token === undefined ? client.sendRequest<R>(method, params) : client.sendRequest<R>(method, params, token);
  }

  async call(params: CallParams, token?: vscode.CancellationToken): Promise<CallResult> {
    const result = await this.request<CallResult>(METHODS.call, params, token);
    this.activityLog.keep(params, result);
    return result;
  }

  async preview(params: PreviewParams, token?: vscode.CancellationToken): Promise<PreviewResult> {
    return this.request<PreviewResult>(METHODS.preview, params, token);
  }

  async tools(surface: "core" | "full" | "minimal" = "full"): Promise<ToolsResult> {
    return this.request<ToolsResult>(METHODS.tools, { surface });
  }

  async checkpoints(params: CheckpointsParams): Promise<CheckpointsResult> {
    return this.request<CheckpointsResult>(METHODS.checkpoints, params);
  }

  async revert(params: RevertParams): Promise<RevertResult> {
    return this.request<RevertResult>(METHODS.revert, params);
  }

  async sessionChanges(params: SessionChangesParams): Promise<SessionChangesResult> {
    return this.request<SessionChangesResult>(METHODS.sessionChanges, params);
  }

  async revertSession(params: RevertSessionParams): Promise<RevertSessionResult> {
    return this.request<RevertSessionResult>(METHODS.revertSession, params);
  }

  /** Records the user's approval of exactly this content (sha256) of a workspace config. */
  async trustConfig(params: TrustConfigParams): Promise<TrustConfigResult> {
    const result = await this.request<TrustConfigResult>(METHODS.trustConfig, params);
    this.emit({ kind: "trustConfig", params, result });
    return result;
  }

  async status(): Promise<unknown> {
    return this.request<unknown>(METHODS.status, {});
  }

  /** Syncs jobs and language servers from toolhost/status now (Show Jobs uses it). */
  async refreshStatus(): Promise<void> {
    const status = await this.status();
    this.languageServers = languageServersOf(status);
    this.jobs.syncFromStatus(status);
    this.updateStatusBar();
  }

  private scheduleStatusRefresh(): void {
    if (this.statusRefresh !== undefined) {
      return;
    }
    this.statusRefresh = setTimeout(() => {
      this.statusRefresh = undefined;
      if (this.state !== "running") {
        return;
      }
      this.status().then(
        (status) => {
          this.languageServers = languageServersOf(status);
          this.jobs.syncFromStatus(status);
          this.updateStatusBar();
        },
        (error: unknown) => this.output.appendLine(`toolhost/status failed: ${String(error)}`),
      );
    }, 500);
  }

  dispose(): void {
    if (this.statusRefresh !== undefined) {
      clearTimeout(this.statusRefresh);
    }
    this.statusItem.dispose();
    void this.stop();
  }
}
