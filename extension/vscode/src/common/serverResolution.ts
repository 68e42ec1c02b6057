// Finds the toolhost server to start, in the documented order, logging each
// step: the toolhost.server.path setting, the toolhost.server.python setting,
// the Python extension's active interpreter, python3 on PATH. A failure comes
// back as a message that names the exact fix.

import type { SystemProbe } from "./host";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which step found it, for the log and the status bar tooltip. */
  source: "setting toolhost.server.path" | "setting toolhost.server.python" | "Python extension" | "python3 on PATH";
}

export interface ResolutionInputs {
  serverPath: string;
  serverPython: string;
  /** The Python extension's active interpreter, or undefined when the extension is absent. */
  pythonExtensionInterpreter: () => Promise<string | undefined>;
  pythonExtensionInstalled: boolean;
}

export type Resolution = { ok: true; server: ServerCommand } | { ok: false; message: string; fix: string };

export const PYTHON_SERVE_ARGS = ["-m", "lsp_server", "serve"];
const IMPORT_PROBE = ["-c", "import lsp_server, sys; print(sys.version.split()[0])"];

async function probePython(probe: SystemProbe, python: string): Promise<string | undefined> {
  const result = await probe.run(python, IMPORT_PROBE);
  if (result.code === 0) {
    return undefined;
  }
  const why = (result.stderr.trim().split("\n").pop() ?? "").trim();
  return why || `exit code ${result.code ?? "none"}`;
}

export async function resolveServer(
  inputs: ResolutionInputs,
  probe: SystemProbe,
  log: (line: string) => void,
): Promise<Resolution> {
  const failures: string[] = [];

  // 1. An explicit toolhost executable: when set it must work (no silent fallback).
  const serverPath = inputs.serverPath.trim();
  if (serverPath !== "") {
    log(`server: step 1, toolhost.server.path = ${serverPath}`);
    if (await probe.isExecutable(serverPath)) {
      log(`server: using ${serverPath} serve`);
      return { ok: true, server: { command: serverPath, args: ["serve"], source: "setting toolhost.server.path" } };
    }
    return {
      ok: false,
      message: `toolhost.server.path is set to ${serverPath}, which is not an executable file.`,
      fix: "Point toolhost.server.path at the toolhost executable (e.g. .venv/bin/toolhost) or clear the setting.",
    };
  }
  log("server: step 1, toolhost.server.path is not set");

  // 2. An explicit interpreter: when set it must have toolhost installed.
  const serverPython = inputs.serverPython.trim();
  if (serverPython !== "") {
    log(`server: step 2, toolhost.server.python = ${serverPython}`);
    const problem = await probePython(probe, serverPython);
    if (problem === undefined) {
      log(`server: using ${serverPython} ${PYTHON_SERVE_ARGS.join(" ")}`);
      return { ok: true, server: { command: serverPython, args: [...PYTHON_SERVE_ARGS], source: "setting toolhost.server.python" } };
    }
    return {
      ok: false,
      message: `toolhost.server.python (${serverPython}) cannot import toolhost: ${problem}`,
      fix: `Run "${serverPython} -m pip install toolhost" or point toolhost.server.python at an interpreter that has it.`,
    };
  }
  log("server: step 2, toolhost.server.python is not set");

  // 3. The Python extension's interpreter, when that extension is installed.
  if (inputs.pythonExtensionInstalled) {
    const interpreter = await inputs.pythonExtensionInterpreter();
    if (interpreter === undefined) {
      log("server: step 3, the Python extension has no active interpreter");
      failures.push("the Python extension has no active interpreter");
    } else {
      log(`server: step 3, Python extension interpreter ${interpreter}`);
      const problem = await probePython(probe, interpreter);
      if (problem === undefined) {
        log(`server: using ${interpreter} ${PYTHON_SERVE_ARGS.join(" ")}`);
        return { ok: true, server: { command: interpreter, args: [...PYTHON_SERVE_ARGS], source: "Python extension" } };
      }
      log(`server: step 3 failed: ${problem}`);
      failures.push(`${interpreter} cannot import toolhost (${problem})`);
    }
  } else {
    log("server: step 3, the Python extension is not installed");
  }

  // 4. python3 on PATH.
  const python3 = await probe.which("python3");
  if (python3 === undefined) {
    log("server: step 4, no python3 on PATH");
    failures.push("no python3 on PATH");
  } else {
    log(`server: step 4, python3 on PATH = ${python3}`);
    const problem = await probePython(probe, python3);
    if (problem === undefined) {
      log(`server: using ${python3} ${PYTHON_SERVE_ARGS.join(" ")}`);
      return { ok: true, server: { command: python3, args: [...PYTHON_SERVE_ARGS], source: "python3 on PATH" } };
    }
    log(`server: step 4 failed: ${problem}`);
    failures.push(`${python3} cannot import toolhost (${problem})`);
  }

  return {
    ok: false,
    message: `Toolhost server not found: ${failures.join("; ")}.`,
    fix: 'Install it with "python3 -m pip install toolhost", or set toolhost.server.path to a toolhost executable, or toolhost.server.python to an interpreter that has it.',
  };
}
