// Finds the toolhost server to start, in the documented order, logging each
// step: the toolhost.server.path setting, the toolhost.server.python setting,
// then the server this package carries (bundled/libs, started with the Python
// extension's interpreter or a python3 >= 3.11 on PATH). A development build
// without a bundle looks for an interpreter that has toolhost installed instead.
// A failure comes back as one message that names the exact fix. With toolhost.server.warm
// every command found gets `--warm` after `serve` (docs/WARM.md).

import * as path from "node:path";

import type { SystemProbe } from "./host";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which step found it, for the log and the status bar tooltip. */
  source: "setting toolhost.server.path" | "setting toolhost.server.python" | "bundled" | "Python extension" | "python3 on PATH";
  /** Where it runs from, in words, for the status bar tooltip and the log. */
  detail?: string;
}

/** What bundled/bundle.json says about the server the package carries. */
export interface Bundle {
  /** bundled/tool/toolhost_serve.py */
  launcher: string;
  /** The Python versions ("3.11", ...) it has builds for. */
  pythons: string[];
  /** The version of the bundled toolhost. */
  version: string;
}

export interface ResolutionInputs {
  serverPath: string;
  serverPython: string;
  /** toolhost.server.warm: hand the start to a warm toolhost process (`serve --warm`). */
  warm: boolean;
  /** The Python extension's active interpreter, or undefined when the extension is absent. */
  pythonExtensionInterpreter: () => Promise<string | undefined>;
  pythonExtensionInstalled: boolean;
  /** The server this package carries; undefined in a development build. */
  bundle?: Bundle;
  /** The workspace folders: an interpreter inside one is never started on its own. */
  workspaceFolders?: string[];
}

/**
 * The workspace folder holding `file`, if any. The Python extension's interpreter is often
 * the project's .venv, whose files (bin/python, a .pth in site-packages) an agent working
 * in the workspace can rewrite: started as the server, it would run outside the sandbox.
 * Such an interpreter is used only when the user names it in toolhost.server.python.
 */
export function workspaceFolderOf(file: string, folders: readonly string[] = []): string | undefined {
  const resolved = path.resolve(file);
  return folders.find((folder) => {
    const root = path.resolve(folder);
    return resolved === root || resolved.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  });
}

/** The Python extension's interpreter, unless it lies in a workspace folder (logged). */
async function extensionInterpreter(inputs: ResolutionInputs, step: number, log: (line: string) => void): Promise<string | undefined> {
  const interpreter = await inputs.pythonExtensionInterpreter();
  if (interpreter === undefined) {
    return undefined;
  }
  const folder = workspaceFolderOf(interpreter, inputs.workspaceFolders);
  if (folder !== undefined) {
    log(
      `server: step ${step}, the Python extension's interpreter ${interpreter} is inside the workspace ${folder}, where an agent can change it: not started on its own (name it in the user setting toolhost.server.python to use it)`,
    );
    return undefined;
  }
  return interpreter;
}

export type Resolution = { ok: true; server: ServerCommand } | { ok: false; message: string; fix: string };

export const PYTHON_SERVE_ARGS = ["-m", "lsp_server", "serve"];
const IMPORT_PROBE = ["-c", "import lsp_server, sys; print(sys.version.split()[0])"];
const VERSION_PROBE = ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"];
export const MINIMUM_PYTHON = "3.11";
/** The wheel of the distribution toolhost-runtime (`./run dist` builds it); "toolhost" on PyPI is
 * an unrelated project. */
const WHEEL = "toolhost_runtime-VERSION-py3-none-any.whl";

function minor(version: string): number[] {
  return version.split(".").slice(0, 2).map(Number);
}

function older(a: string, b: string): boolean {
  const [x, y] = [minor(a), minor(b)];
  return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
}

/** The bundled server with the first usable interpreter: the Python extension's, then
 * python3, python3.N on PATH. */
async function resolveBundled(
  inputs: ResolutionInputs,
  bundle: Bundle,
  probe: SystemProbe,
  log: (line: string) => void,
): Promise<Resolution> {
  const candidates: { python: string; from: string }[] = [];
  if (inputs.pythonExtensionInstalled) {
    const interpreter = await extensionInterpreter(inputs, 3, log);
    if (interpreter !== undefined) {
      candidates.push({ python: interpreter, from: "the Python extension's interpreter" });
    } else {
      log("server: step 3, no interpreter of the Python extension to use");
    }
  } else {
    log("server: step 3, the Python extension is not installed");
  }
  for (const name of ["python3", ...[...bundle.pythons].reverse().map((v) => `python${v}`)]) {
    const found = await probe.which(name);
    if (found !== undefined && !candidates.some((c) => c.python === found)) {
      candidates.push({ python: found, from: `${name} on PATH` });
    }
  }
  const problems: string[] = [];
  for (const { python, from } of candidates) {
    const result = await probe.run(python, VERSION_PROBE);
    const version = result.stdout.trim();
    if (result.code !== 0 || !/^\d+\.\d+/.test(version)) {
      log(`server: step 3, ${python} (${from}) does not run: ${result.stderr.trim()}`);
      problems.push(`${python} does not run`);
      continue;
    }
    const short = minor(version).join(".");
    if (older(version, MINIMUM_PYTHON)) {
      log(`server: step 3, ${python} (${from}) is Python ${version}: too old`);
      problems.push(`${python} is Python ${version} (too old)`);
      continue;
    }
    if (!bundle.pythons.includes(short)) {
      log(`server: step 3, ${python} (${from}) is Python ${version}: the package has no build for it`);
      problems.push(`${python} is Python ${version} (this package has builds for ${bundle.pythons.join(", ")})`);
      continue;
    }
    log(`server: using the bundled server ${bundle.version} with ${python} (${from}, Python ${version})`);
    return {
      ok: true,
      server: {
        command: python,
        args: ["-I", bundle.launcher, "serve"],
        source: "bundled",
        detail: `bundled toolhost ${bundle.version}, Python ${version} at ${python}`,
      },
    };
  }
  const found = problems.length === 0 ? "no Python found (neither the Python extension's interpreter nor python3 on PATH)" : problems.join("; ");
  return {
    ok: false,
    message: `the bundled server needs Python ${bundle.pythons[0]} to ${bundle.pythons[bundle.pythons.length - 1]}: ${found}.`,
    fix: `Install Python ${MINIMUM_PYTHON} or newer as python3 (e.g. "sudo apt install python3" or python.org) or select one in the Python extension, then run "Toolhost: Restart Server"; or set toolhost.server.path to an installed toolhost.`,
  };
}

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
  const resolution = await findServer(inputs, probe, log);
  if (!resolution.ok || !inputs.warm) {
    return resolution;
  }
  // Every command found ends with `serve`.
  const { server } = resolution;
  const args = [...server.args, "--warm"];
  log(`server: toolhost.server.warm is on: ${server.command} ${args.join(" ")}`);
  return { ok: true, server: { ...server, args } };
}

async function findServer(
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
      fix: `Run "${serverPython} -m pip install /path/to/${WHEEL}" (the wheel of toolhost-runtime, which "./run dist" builds) or point toolhost.server.python at an interpreter that has it.`,
    };
  }
  log("server: step 2, toolhost.server.python is not set");

  // 3. The server this package carries, with a Python the machine has.
  if (inputs.bundle !== undefined) {
    return resolveBundled(inputs, inputs.bundle, probe, log);
  }
  log("server: step 3, this is a development build without a bundled server");

  // 4. (development build) The Python extension's interpreter, when it has toolhost.
  if (inputs.pythonExtensionInstalled) {
    const interpreter = await extensionInterpreter(inputs, 4, log);
    if (interpreter === undefined) {
      log("server: step 4, no interpreter of the Python extension to use");
      failures.push("the Python extension has no active interpreter outside the workspace");
    } else {
      log(`server: step 4, Python extension interpreter ${interpreter}`);
      const problem = await probePython(probe, interpreter);
      if (problem === undefined) {
        log(`server: using ${interpreter} ${PYTHON_SERVE_ARGS.join(" ")}`);
        return { ok: true, server: { command: interpreter, args: [...PYTHON_SERVE_ARGS], source: "Python extension" } };
      }
      log(`server: step 4 failed: ${problem}`);
      failures.push(`${interpreter} cannot import toolhost (${problem})`);
    }
  } else {
    log("server: step 4, the Python extension is not installed");
  }

  // 5. (development build) python3 on PATH, when it has toolhost.
  const python3 = await probe.which("python3");
  if (python3 === undefined) {
    log("server: step 5, no python3 on PATH");
    failures.push("no python3 on PATH");
  } else {
    log(`server: step 5, python3 on PATH = ${python3}`);
    const problem = await probePython(probe, python3);
    if (problem === undefined) {
      log(`server: using ${python3} ${PYTHON_SERVE_ARGS.join(" ")}`);
      return { ok: true, server: { command: python3, args: [...PYTHON_SERVE_ARGS], source: "python3 on PATH" } };
    }
    log(`server: step 5 failed: ${problem}`);
    failures.push(`${python3} cannot import toolhost (${problem})`);
  }

  return {
    ok: false,
    message: `Toolhost server not found: ${failures.join("; ")}.`,
    fix: `Install the wheel of toolhost-runtime ("./run dist" builds it) with "python3 -m pip install /path/to/${WHEEL}", or set toolhost.server.path to a toolhost executable, or toolhost.server.python to an interpreter that has it.`,
  };
}
