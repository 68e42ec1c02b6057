// Settings are declared once, in package.json contributes.configuration. Every
// toolhost.<section>.<key> setting that is not client-only is sent to the
// server as initializationOptions.toolhost.<section>.<key> -- but only when the
// user actually set it, so that the workspace .toolhost.toml and the user's
// config file still apply where the user said nothing in VS Code.

/** Settings the extension itself uses; never sent to the server. */
export const CLIENT_ONLY_PREFIXES = ["toolhost.server.", "toolhost.trace."];

export interface SettingValues {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type InitializationOptions = { toolhost: Record<string, unknown> };

/** The server-bound keys of a package.json's contributes.configuration. */
export function serverSettingKeys(packageJson: { contributes?: { configuration?: unknown } }): string[] {
  const configuration = packageJson.contributes?.configuration;
  const blocks = Array.isArray(configuration) ? configuration : [configuration];
  const keys: string[] = [];
  for (const block of blocks) {
    const properties = (block as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    for (const key of Object.keys(properties)) {
      if (key.startsWith("toolhost.") && !CLIENT_ONLY_PREFIXES.some((p) => key.startsWith(p))) {
        keys.push(key);
      }
    }
  }
  return keys;
}

function explicitValue(values: SettingValues | undefined, trusted: boolean): unknown {
  if (values === undefined) {
    return undefined;
  }
  if (!trusted) {
    // A repository must not configure its own permissions: user settings only.
    return values.globalValue;
  }
  return values.workspaceFolderValue ?? values.workspaceValue ?? values.globalValue;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      node[part] = {};
    }
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

export function buildInitializationOptions(
  keys: readonly string[],
  inspect: (key: string) => SettingValues | undefined,
  workspaceTrusted: boolean,
): InitializationOptions {
  const toolhost: Record<string, unknown> = {};
  for (const key of keys) {
    const value = explicitValue(inspect(key), workspaceTrusted);
    if (value !== undefined) {
      setPath(toolhost, key.split(".").slice(1), value);
    }
  }
  if (!workspaceTrusted) {
    setPath(toolhost, ["policy", "mode"], "readOnly");
  }
  toolhost.workspaceTrusted = workspaceTrusted;
  return { toolhost };
}
