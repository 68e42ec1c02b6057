// A scripted stand-in for the VS Code UI (a test double, not VS Code): it
// replays the answers a user would give and records what was shown.

import type { ApprovalDiff, DecisionPrompt, Host, InputBoxRequest, QuickPickEntry, SystemProbe } from "../common/host";
import type { CallMeta } from "../common/protocol";

/** The meta of a CallResult, as the server fills it. */
export function meta(tool = "read_file"): CallMeta {
  return { tool, readOnly: true, durationMs: 1, truncated: false, shownChars: 0, totalChars: 0, resultRef: null, approval: null, paths: [] };
}

export class ScriptedHost implements Host {
  readonly modals: { message: string; detail: string; items: readonly string[] }[] = [];
  readonly inputBoxes: InputBoxRequest[] = [];
  /** Approval editors opened (the diff or the patch), and how many were closed again. */
  readonly diffs: ApprovalDiff[] = [];
  closedPrompts = 0;
  readonly infos: string[] = [];
  readonly errors: string[] = [];
  readonly logs: string[] = [];

  /** `choices` answer the modal and the approval editor's title-bar decisions alike. */
  constructor(
    private readonly modalAnswers: (string | undefined)[] = [],
    private readonly inputAnswers: (string | undefined)[] = [],
    private readonly files: Record<string, string> = {},
  ) {}

  async showModal(message: string, detail: string, items: readonly string[]): Promise<string | undefined> {
    this.modals.push({ message, detail, items });
    return this.modalAnswers.shift();
  }
  async showInputBox(request: InputBoxRequest): Promise<string | undefined> {
    this.inputBoxes.push(request);
    return this.inputAnswers.shift();
  }
  async showQuickPick<T extends QuickPickEntry>(items: readonly T[]): Promise<T | undefined> {
    return items[0];
  }
  async showError(message: string): Promise<string | undefined> {
    this.errors.push(message);
    return undefined;
  }
  showInfo(message: string): void {
    this.infos.push(message);
  }
  async showApprovalDiff(request: ApprovalDiff): Promise<DecisionPrompt> {
    this.diffs.push(request);
    return {
      next: async () => this.modalAnswers.shift(),
      close: () => {
        this.closedPrompts += 1;
      },
    };
  }
  async readText(path: string): Promise<string | undefined> {
    return this.files[path];
  }
  log(line: string): void {
    this.logs.push(line);
  }
}

/** A scripted machine for server resolution: which files are executable, what each interpreter says. */
export class ScriptedProbe implements SystemProbe {
  readonly runs: string[] = [];
  constructor(
    private readonly executables: string[],
    private readonly path: Record<string, string>,
    private readonly interpreters: Record<string, { code: number; stderr?: string; stdout?: string }>,
  ) {}
  async isExecutable(file: string): Promise<boolean> {
    return this.executables.includes(file);
  }
  async which(command: string): Promise<string | undefined> {
    return this.path[command];
  }
  async run(command: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    this.runs.push([command, ...args].join(" "));
    const answer = this.interpreters[command] ?? { code: 127, stderr: `${command}: not found` };
    return { code: answer.code, stdout: answer.stdout ?? (answer.code === 0 ? "3.11.2\n" : ""), stderr: answer.stderr ?? "" };
  }
}
