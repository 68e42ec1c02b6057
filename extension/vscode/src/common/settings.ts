// Settings are declared once, in package.json contributes.configuration. Every
// toolhost.<section>.<key> setting that is not client-only is sent to the
// server as initializationOptions.toolhost.<section>.<key> -- but only when the
// user actually set it, so that the workspace .toolhost.toml and the user's
// config file still apply where the user said nothing in VS Code.
//
// A setting that loosens policy (sandbox, mode, allow rules, roots, the server
// command ...) is declared with scope "machine": VS Code ignores it in
// workspace and folder settings, and this module reads only its user value as
// well, so that a `.vscode/settings.json` (which an agent can write) never
// widens what the agent may do.

/** Settings the extension itself uses; never sent to the server. */
export const CLIENT_ONLY_PREFIXES = ["toolhost.server.", "toolhost.trace."];

/** Scopes that VS Code reads from user settings only. */
const USER_ONLY_SCOPES = new Set(["machine", "application"]);

export interface SettingValues {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type InitializationOptions = { toolhost: Record<string, unknown> };

type PackageJson = { contributes?: { configuration?: unknown } };

function declaredProperties(packageJson: PackageJson): [string, { scope?: unknown }][] {
  const configuration = packageJson.contributes?.configuration;
  const blocks = Array.isArray(configuration) ? configuration : [configuration];
  const found: [string, { scope?: unknown }][] = [];
  for (const block of blocks) {
    const properties = (block as { properties?: Record<string, { scope?: unknown }> } | undefined)?.properties ?? {};
    found.push(...Object.entries(properties).filter(([key]) => key.startsWith("toolhost.")));
  }
  return found;
}

/** Every toolhost.* key a package.json declares (client-only ones included). */
export function declaredSettingKeys(packageJson: PackageJson): Set<string> {
  return new Set(declaredProperties(packageJson).map(([key]) => key));
}

/** The server-bound keys of a package.json's contributes.configuration. */
export function serverSettingKeys(packageJson: PackageJson): string[] {
  return declaredProperties(packageJson)
    .map(([key]) => key)
    .filter((key) => !CLIENT_ONLY_PREFIXES.some((p) => key.startsWith(p)));
}

/** The keys only user settings may set (those that loosen policy or choose what runs). */
export function userOnlySettingKeys(packageJson: PackageJson): Set<string> {
  return new Set(
    declaredProperties(packageJson)
      .filter(([, spec]) => typeof spec.scope === "string" && USER_ONLY_SCOPES.has(spec.scope))
      .map(([key]) => key),
  );
}

/** The value that applies: the user's alone for a user-only key or in an untrusted workspace. */
export function effectiveValue(values: SettingValues | undefined, trusted: boolean, userOnly: boolean): unknown {
  if (values === undefined) {
    return undefined;
  }
  if (!trusted || userOnly) {
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

/** The toolhost section as the server sees it: the declared keys the user set, nested. */
export function buildSection(
  keys: readonly string[],
  inspect: (key: string) => SettingValues | undefined,
  workspaceTrusted: boolean,
  userOnly: ReadonlySet<string>,
): Record<string, unknown> {
  const toolhost: Record<string, unknown> = {};
  for (const key of keys) {
    const value = effectiveValue(inspect(key), workspaceTrusted, userOnly.has(key));
    if (value !== undefined) {
      setPath(toolhost, key.split(".").slice(1), value);
    }
  }
  if (!workspaceTrusted) {
    setPath(toolhost, ["policy", "mode"], "readOnly");
  }
  return toolhost;
}

export function buildInitializationOptions(
  keys: readonly string[],
  inspect: (key: string) => SettingValues | undefined,
  workspaceTrusted: boolean,
  userOnly: ReadonlySet<string> = new Set(),
): InitializationOptions {
  const toolhost = buildSection(keys, inspect, workspaceTrusted, userOnly);
  toolhost.workspaceTrusted = workspaceTrusted;
  return { toolhost };
}

/**
 * The answer to the server's workspace/configuration items: section `toolhost` (or a part
 * of it) from the declared settings only, never VS Code's own merge, which would carry
 * undeclared keys and objects such as `"toolhost.shell": {"sandbox": "off"}` from a
 * workspace's settings file. Other sections: null (the server asks for none).
 */
export function answerConfiguration(sections: readonly (string | undefined)[], section: Record<string, unknown>): unknown[] {
  return sections.map((name) => {
    if (name === "toolhost") {
      return section;
    }
    if (name === undefined || !name.startsWith("toolhost.")) {
      return null;
    }
    let node: unknown = section;
    for (const part of name.split(".").slice(1)) {
      node = typeof node === "object" && node !== null && !Array.isArray(node) ? (node as Record<string, unknown>)[part] : undefined;
    }
    return node ?? null;
  });
}

/** Keys a workspace's or folder's settings tried to set although only user settings may. */
export function ignoredWorkspaceKeys(
  userOnly: ReadonlySet<string>,
  declared: ReadonlySet<string>,
  inspect: (key: string) => SettingValues | undefined,
  rawWorkspaceKeys: readonly string[] = [],
): string[] {
  const found = new Set<string>();
  for (const key of userOnly) {
    const values = inspect(key);
    if (values?.workspaceValue !== undefined || values?.workspaceFolderValue !== undefined) {
      found.add(key);
    }
  }
  // VS Code drops machine-scoped values of workspace settings before inspect() sees them;
  // the keys in the settings files themselves say what was tried. A key that is not a
  // declared setting (an object such as "toolhost.shell", a server key VS Code does not
  // offer) is never sent either.
  for (const key of rawWorkspaceKeys) {
    if ((key === "toolhost" || key.startsWith("toolhost.")) && (userOnly.has(key) || !declared.has(key))) {
      found.add(key);
    }
  }
  return [...found].sort();
}

/** The "toolhost..." keys a settings.json (JSON with comments) sets, by a plain scan. */
export function settingsFileKeys(text: string): string[] {
  const withoutComments = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  return [...withoutComments.matchAll(/"(toolhost(?:\.[\w-]+)*)"\s*:/g)].map((match) => match[1]);
}
