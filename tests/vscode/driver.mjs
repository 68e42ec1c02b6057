// Drives real VS Code (code-server in headless Debian chromium) through the
// toolhost scenario like a person would: command palette, quick picks, input
// boxes, modal dialogs. Observations come from the probe extension's JSON lines
// log; the pytest side checks the files on disk afterwards.
//   node driver.mjs '{"url": ..., "log": ..., "artifacts": ..., "playwright": ..., "chromium": ...}'
// Prints one JSON object: {"steps": [...], "error"?: "..."}.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const config = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const { chromium } = require(config.playwright);

const STEP_TIMEOUT = 30_000;
const steps = [];

function note(name, extra = {}) {
  steps.push({ name, ...extra });
  process.stderr.write(`driver: ${name}\n`);
}

function observations() {
  if (!existsSync(config.log)) {
    return [];
  }
  return readFileSync(config.log, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** Waits until an observation satisfies the predicate (the log only grows). */
async function waitFor(what, predicate, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const found = observations().find(predicate);
    if (found) {
      return found;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; observations: ${JSON.stringify(observations()).slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function openPalette(page) {
  const input = page.locator(".quick-input-widget input");
  for (let attempt = 0; attempt < 5; attempt++) {
    // F1 is swallowed while a previous quick input is still closing or focus is in transit.
    await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: 5_000 }).catch(() => {});
    await page.keyboard.press("F1");
    try {
      await input.waitFor({ state: "visible", timeout: 3_000 });
      return input;
    } catch {
      await page.keyboard.press("Escape");
    }
  }
  throw new Error("the command palette did not open (F1)");
}

async function runCommand(page, title) {
  // The palette can close again right after opening (focus moving to a new editor or a
  // notification): retry the open-and-type part, never the Enter.
  for (let attempt = 0; ; attempt++) {
    try {
      const input = await openPalette(page);
      await input.fill(`>${title}`, { timeout: 5_000 });
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
      await row.waitFor({ state: "visible", timeout: 10_000 });
      break;
    } catch (error) {
      if (attempt >= 3) {
        throw error;
      }
      await page.keyboard.press("Escape");
    }
  }
  await page.keyboard.press("Enter");
}

/** Toolhost: Run Tool... -> pick the tool -> type the JSON arguments. */
async function runTool(page, tool, args) {
  await runCommand(page, "Toolhost: Run Tool...");
  const input = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ state: "visible" });
  await input.fill(tool);
  const first = page.locator(".quick-input-list .monaco-list-row").first();
  await first.waitFor({ state: "visible" });
  const label = await first.getAttribute("aria-label");
  if (!label || !label.startsWith(tool)) {
    throw new Error(`quick pick shows ${label} first, not ${tool}`);
  }
  await page.keyboard.press("Enter");
  // The arguments input box replaces the list (same widget, title changes).
  await page.locator(".quick-input-widget .quick-input-title", { hasText: `toolhost ${tool}` }).waitFor({ state: "visible" });
  await input.fill(JSON.stringify(args));
  await page.keyboard.press("Enter");
}

async function dialog(page) {
  const box = page.locator(".monaco-dialog-box");
  await box.waitFor({ state: "visible" });
  return box;
}

const failures = [];

/** One part of the scenario; a failure is recorded (with a screenshot) and the next part runs. */
async function section(page, name, body) {
  try {
    await body();
  } catch (error) {
    failures.push({ section: name, error: String(error && error.stack ? error.stack : error) });
    process.stderr.write(`driver: FAILED ${name}: ${error}\n`);
    await page.screenshot({ path: join(config.artifacts, `failure-${name}.png`) }).catch(() => {});
    // Leave no dialog or quick input open for the next part.
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("Escape").catch(() => {});
    }
  }
}

function onDisk() {
  return readFileSync(join(config.workspace, "hello.txt"), "utf8");
}

function runToolResult(tool, predicate = () => true) {
  return (o) => o.kind === "toolhost" && o.event.kind === "runTool" && o.event.tool === tool && predicate(o.event);
}

/** Restricted mode: the server runs readOnly, a write is refused without any prompt. */
async function untrustedScenario(page) {
  await section(page, "untrusted", async () => {
    const trust = await waitFor("the probe's trust report", (o) => o.kind === "trust");
    note("workspace trust", { trusted: trust.trusted });
    await runTool(page, "edit_file", { path: "hello.txt", old_string: "hello", new_string: "HELLO" });
    const refused = await waitFor("edit_file refused", runToolResult("edit_file"));
    await page.screenshot({ path: join(config.artifacts, "untrusted-refused.png") });
    note("untrusted edit", { result: refused.event.result, onDisk: onDisk() });
  });
}

/** The agent's lsp_* questions, answered by VS Code's own TypeScript support. */
async function lspProxyScenario(page) {
  await section(page, "lspproxy", async () => {
    await runCommand(page, "Toolhost E2E: LSP Check");
    // The first answer waits for VS Code's TypeScript server to load the project.
    const check = await waitFor("the lsp_* answers", (o) => o.kind === "lspCheck", 180_000);
    await page.screenshot({ path: join(config.artifacts, "lsp-proxy.png") });
    note("lsp answers", { results: check.results, processes: check.processes, extensionHostPid: check.extensionHostPid });
  });
}

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-default-apps",
      "--disable-sync",
      "--no-first-run",
      "--no-default-browser-check",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(STEP_TIMEOUT);
  try {
    await page.goto(config.url);
    await page.locator(".monaco-workbench").waitFor({ state: "visible" });
    note("workbench loaded");
    await waitFor("the toolhost extension to activate", (o) => o.kind === "toolhostActivated");
    // The server's first start imports its dependencies: slow on a loaded machine.
    const started = await waitFor("the toolhost server to start", (o) => o.kind === "toolhostStarted", 120_000);
    note("extension activated", { serverState: started.serverState });
    if (started.serverState !== "running") {
      throw new Error(`server state after the first start: ${started.serverState}`);
    }

    // 1. A read-only call from the command palette round-trips.
    await section(page, "read", async () => {
      await runTool(page, "read_file", { path: "hello.txt" });
      const read = await waitFor("read_file result", runToolResult("read_file"));
      note("run tool read_file", { result: read.event.result });
    });

    if (config.scenario === "untrusted") {
      await untrustedScenario(page);
      return;
    }
    if (config.scenario === "lspproxy") {
      await lspProxyScenario(page);
      return;
    }

    // 2. An edit needing approval: the modal appears, "Allow once" is clicked.
    await section(page, "allow", async () => {
      await runTool(page, "edit_file", { path: "hello.txt", old_string: "hello", new_string: "HELLO" });
      const box = await dialog(page);
      const message = await box.locator(".dialog-message-text").innerText();
      const detail = await box.locator(".dialog-message-detail").innerText();
      const buttons = await box.locator(".monaco-button").allInnerTexts();
      await page.screenshot({ path: join(config.artifacts, "approval-modal.png") });
      note("approval modal shown", { message, detail, buttons });
      // "Show diff" opens VS Code's diff editor on the proposed change, then asks again.
      await box.getByRole("button", { name: "Show diff", exact: true }).click();
      const diffEditor = page.locator(".monaco-diff-editor");
      await diffEditor.first().waitFor({ state: "visible" });
      const again = await dialog(page);
      await page.screenshot({ path: join(config.artifacts, "approval-diff.png") });
      note("diff shown", { tab: await page.locator(".tab.active").first().innerText() });
      await again.getByRole("button", { name: "Allow once", exact: true }).click();
      const allowed = await waitFor("edit_file allowed", runToolResult("edit_file", (e) => e.arguments.new_string === "HELLO"));
      note("allow once", { result: allowed.event.result, onDisk: onDisk() });
    });

    // 3. The same again, denied with a reason.
    await section(page, "deny", async () => {
      await runTool(page, "edit_file", { path: "hello.txt", old_string: "HELLO", new_string: "DENIED" });
      const box = await dialog(page);
      await page.screenshot({ path: join(config.artifacts, "approval-modal-deny.png") });
      await box.getByRole("button", { name: "Deny", exact: true }).click();
      await page.locator(".quick-input-widget .quick-input-title", { hasText: "Deny" }).waitFor({ state: "visible" });
      await page.locator(".quick-input-widget input").fill("not in this test");
      await page.keyboard.press("Enter");
      const denied = await waitFor("edit_file denied", runToolResult("edit_file", (e) => e.arguments.new_string === "DENIED"));
      note("deny", { result: denied.event.result, onDisk: onDisk() });
    });

    // 3b. Always allow: the rule box shows the server's first suggested rule; the edited rule is sent.
    await section(page, "always", async () => {
      await runTool(page, "edit_file", { path: "hello.txt", old_string: "HELLO", new_string: "HI" });
      const box = await dialog(page);
      await box.getByRole("button", { name: "Always allow...", exact: true }).click();
      await page.locator(".quick-input-widget .quick-input-title", { hasText: "Always allow" }).waitFor({ state: "visible" });
      const input = page.locator(".quick-input-widget input");
      const offered = await input.inputValue();
      await page.screenshot({ path: join(config.artifacts, "approval-always-rule.png") });
      await input.fill("Edit(*.txt)");
      await page.keyboard.press("Enter");
      const allowed = await waitFor("edit_file always allowed", runToolResult("edit_file", (e) => e.arguments.new_string === "HI"));
      const policyFile = join(config.workspace, ".toolhost.toml");
      note("always allow", {
        offered,
        result: allowed.event.result,
        onDisk: onDisk(),
        policy: existsSync(policyFile) ? readFileSync(policyFile, "utf8") : null,
      });
    });

    // 4. Language-model tools: listed by vscode.lm.tools, invoked with vscode.lm.invokeTool.
    await section(page, "lm-tools", async () => {
      await runCommand(page, "Toolhost E2E: LM Check");
      const listed = await waitFor("vscode.lm.tools", (o) => o.kind === "lmTools");
      const lmRead = await waitFor("invokeTool read_file", (o) => o.kind === "lmInvoke" && o.tool === "toolhost_read_file");
      note("lm tools", { names: listed.names, read: lmRead });
    });

    // 5. A writer through invokeTool: VS Code's own confirmation, then no second (toolhost) prompt.
    await section(page, "lm-edit", async () => {
      await runCommand(page, "Toolhost E2E: LM Edit");
      const box = await dialog(page);
      const confirmation = {
        message: await box.locator(".dialog-message-text").innerText(),
        buttons: await box.locator(".monaco-button").allInnerTexts(),
      };
      await page.screenshot({ path: join(config.artifacts, "lm-tool-confirmation.png") });
      const yes = confirmation.buttons.map((b) => b.trim()).find((b) => /^(Yes|Continue|Allow)$/.test(b)) ?? "Yes";
      await box.getByRole("button", { name: yes, exact: true }).click();
      const lmEdit = await waitFor("invokeTool edit_file", (o) => o.kind === "lmInvoke" && o.tool === "toolhost_edit_file");
      note("lm edit", { confirmation, result: lmEdit, onDisk: onDisk() });
    });

    // 6. The status bar item, then Restart Server: the server stops and comes back.
    await section(page, "restart", async () => {
      const item = page.locator(".statusbar-item", { hasText: "Toolhost" }).first();
      await item.waitFor({ state: "visible" });
      note("status bar", { text: await item.innerText() });
      const running = () => observations().filter((o) => o.kind === "toolhost" && o.event.kind === "state" && o.event.state === "running").length;
      const before = running();
      await runCommand(page, "Toolhost: Restart Server");
      await waitFor("the server to run again", () => running() > before, 120_000);
      note("restarted", { stopped: observations().some((o) => o.kind === "toolhost" && o.event.kind === "state" && o.event.state === "stopped") });
    });
  } finally {
    await browser.close();
  }
}

main().then(
  () => {
    process.stdout.write(JSON.stringify({ steps, failures, observations: observations() }) + "\n");
  },
  (error) => {
    const fatal = String(error && error.stack ? error.stack : error);
    process.stdout.write(JSON.stringify({ steps, failures, observations: observations(), error: fatal }) + "\n");
    process.exitCode = 1;
  },
);
