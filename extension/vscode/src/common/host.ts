// The thin wrapper over the `vscode` API that the logic in src/common uses.
// src/common never imports the `vscode` module itself: the extension passes a
// real Host (src/vscodeHost.ts) and the unit tests pass a scripted one, so
// approval decisions, rule editing, server resolution and LM-tool forwarding
// run under node's test runner without VS Code.

export interface InputBoxRequest {
  title?: string;
  prompt: string;
  value?: string;
  placeHolder?: string;
  /** Shows dots for what is typed (a password a command asks for). */
  password?: boolean;
}

export interface QuickPickEntry {
  label: string;
  description?: string;
  detail?: string;
}

/** A change waiting for the user's decision: the diff (before/after) or, when it cannot be
 * applied to the file as it is now, the patch text. */
export interface ApprovalDiff {
  /** The editor tab's title. */
  title: string;
  /** What the request says (summary, paths, risk, who asks): shown beside the diff, never over it. */
  detail: string;
  path: string;
  before?: string;
  after?: string;
  patch?: string;
}

/** A prompt that stays open while the user decides (and may come back to it). */
export interface DecisionPrompt {
  /** The next decision the user picked; undefined once the prompt was closed without one. */
  next(): Promise<string | undefined>;
  close(): void;
}

export interface Host {
  /** A modal warning dialog; resolves to the clicked item or undefined (Cancel/Escape). */
  showModal(message: string, detail: string, items: readonly string[]): Promise<string | undefined>;
  showInputBox(request: InputBoxRequest): Promise<string | undefined>;
  showQuickPick<T extends QuickPickEntry>(items: readonly T[], placeHolder: string): Promise<T | undefined>;
  showError(message: string, ...actions: string[]): Promise<string | undefined>;
  showInfo(message: string): void;
  /** Opens the change in VS Code's diff editor (or the patch text) with the decisions on its
   * title bar, where they cover none of it. */
  showApprovalDiff(request: ApprovalDiff): Promise<DecisionPrompt>;
  /** Reads a file's text from disk or the open buffer; undefined when it does not exist. */
  readText(path: string): Promise<string | undefined>;
  log(line: string): void;
}

/** Process-level facts server resolution needs (real fs/child_process in the extension). */
export interface SystemProbe {
  isExecutable(path: string): Promise<boolean>;
  /** Searches PATH like a shell would; undefined when not found. */
  which(command: string): Promise<string | undefined>;
  /** Runs a command briefly; resolves with exit code and output, never rejects. */
  run(command: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}
