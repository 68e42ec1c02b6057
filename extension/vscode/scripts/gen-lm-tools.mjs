// Writes contributes.languageModelTools of package.json from schemas/tools.json
// (the full surface): one VS Code language-model tool per toolhost tool.
//   node scripts/gen-lm-tools.mjs            rewrite package.json
//   node scripts/gen-lm-tools.mjs --check    exit 1 when package.json is out of date
//   --tools FILE / --package FILE            other inputs (the unit tests use fixtures)
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const extensionRoot = resolve(here, "..");

export const LM_TOOL_PREFIX = "toolhost_";

function option(argv, name, fallback) {
  const index = argv.indexOf(name);
  return index >= 0 && index + 1 < argv.length ? argv[index + 1] : fallback;
}

/**
 * The full-surface tool entries out of schemas/tools.json: `surfaces.full.tools` names the
 * tools, `tools` holds their entries ({name, readOnly, description, inputSchema}).
 */
export function fullSurfaceTools(document) {
  const names = document.surfaces?.full?.tools;
  if (!Array.isArray(names) || !Array.isArray(document.tools)) {
    throw new Error("schemas/tools.json: expected surfaces.full.tools (names) and tools (entries)");
  }
  const byName = new Map(document.tools.map((tool) => [tool.name, tool]));
  return names.map((name) => {
    const tool = byName.get(name);
    if (tool === undefined) {
      throw new Error(`schemas/tools.json: surfaces.full names ${name}, which tools does not list`);
    }
    return tool;
  });
}

function firstSentence(text) {
  const line = text.split("\n")[0].trim();
  const match = /^(.*?[.!?])(\s|$)/.exec(line);
  return (match ? match[1] : line).slice(0, 200);
}

export function languageModelTools(tools) {
  return [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((tool) => ({
      name: LM_TOOL_PREFIX + tool.name,
      displayName: `toolhost ${tool.name}`,
      toolReferenceName: LM_TOOL_PREFIX + tool.name,
      canBeReferencedInPrompt: true,
      userDescription: firstSentence(tool.description),
      modelDescription: tool.description,
      tags: ["toolhost", tool.readOnly ? "readOnly" : "writes"],
      inputSchema: tool.inputSchema,
    }));
}

export function render(packageJson) {
  return JSON.stringify(packageJson, null, 2) + "\n";
}

export function generate(packageText, toolsText) {
  const packageJson = JSON.parse(packageText);
  packageJson.contributes ??= {};
  packageJson.contributes.languageModelTools = languageModelTools(fullSurfaceTools(JSON.parse(toolsText)));
  return render(packageJson);
}

function main(argv) {
  const toolsFile = option(argv, "--tools", resolve(extensionRoot, "../../schemas/tools.json"));
  const packageFile = option(argv, "--package", resolve(extensionRoot, "package.json"));
  const current = readFileSync(packageFile, "utf8");
  const wanted = generate(current, readFileSync(toolsFile, "utf8"));
  if (argv.includes("--check")) {
    if (current !== wanted) {
      console.error(`${packageFile}: contributes.languageModelTools is out of date with ${toolsFile}; run: node extension/vscode/scripts/gen-lm-tools.mjs`);
      return 1;
    }
    console.log(`${packageFile}: languageModelTools up to date`);
    return 0;
  }
  if (current !== wanted) {
    writeFileSync(packageFile, wanted);
    console.log(`${packageFile}: languageModelTools written`);
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
