// Drives real VS Code (code-server in headless Debian chromium) through the
// toolhost scenario like a person would: command palette, quick picks, input
// boxes, modal dialogs. Observations come from the probe extension's JSON lines
// log; the pytest side checks the files on disk afterwards.
//   node driver.mjs '{"url": ..., "log": ..., "artifacts": ..., "playwright": ..., "chromium": ...}'
// Prints one JSON object: {"steps": [...], "error"?: "..."}.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const config = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const { chromium } = require(config.playwright);

const STEP_TIMEOUT = 60_000;
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

function onDisk(name = "hello.txt") {
  return readFileSync(join(config.workspace, name), "utf8");
}

/** long.txt (line 1..line 200, written by the test) with five changed places: a 61-line diff. */
const CHANGED_AT = [8, 9, 10, 50, 51, 95, 96, 140, 141, 189, 190, 191];
const CHANGED_LINES = CHANGED_AT.map((n) => `LINE ${n} (changed)`);
const LONG_NEW = Array.from({ length: 200 }, (_, i) => (CHANGED_AT.includes(i + 1) ? `LINE ${i + 1} (changed)` : `line ${i + 1}`)).join("\n") + "\n";

/** The approval's diff editor for `name`, once it is the active editor (the previous
 * approval's editor has closed first: they carry the same title). */
async function approvalEditor(page, name) {
  // The approval's own tab: an earlier editor on the same file may still be the active one
  // for a moment while the approval opens.
  const tab = page.locator(".tab.active", { hasText: "Approve?" }).filter({ hasText: name });
  await tab.first().waitFor({ state: "visible" });
  const diff = page.locator(".editor-group-container.active .monaco-diff-editor").first();
  await diff.waitFor({ state: "visible" });
  return diff;
}

/** A decision on the active editor's title bar. */
function titleAction(page, name) {
  return page.locator(`.editor-group-container.active .editor-actions [aria-label^="${name}"]`).first();
}

/** The Deny reason box: type the reason (possibly none) and press Enter. */
async function denyReason(page, reason) {
  await page.locator(".quick-input-widget .quick-input-title", { hasText: "Deny" }).waitFor({ state: "visible" });
  await page.locator(".quick-input-widget input").fill(reason);
  await page.keyboard.press("Enter");
}

/** Approval editors still open (a decision closes its editor). */
async function approvalTabs(page) {
  return page.locator(".tab", { hasText: "Approve?" }).count();
}

/** What the user sees around the pending decision: dialogs, the title-bar actions, the tab. */
async function approvalState(page) {
  return {
    tab: await page.locator(".tab.active").first().innerText(),
    dialogs: await page.locator(".monaco-dialog-box").count(),
    actions: await page.locator(".editor-group-container.active .editor-actions .action-label").evaluateAll((els) =>
      els.map((el) => ({ label: el.getAttribute("aria-label") ?? "", text: el.textContent ?? "" })),
    ),
    status: await page.locator(".statusbar-item", { hasText: "Toolhost:" }).allInnerTexts(),
  };
}

/**
 * Scrolls the diff editor with the mouse wheel, as a reader would, and records every changed
 * line that was on screen and not covered by anything (the element at its centre belongs to
 * the diff editor). Stops once the last changed line was seen.
 */
async function scrollThroughDiff(page, diff, texts) {
  const box = await diff.boundingBox();
  await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2);
  const seen = new Set();
  for (let step = 0; step < 60 && !seen.has(texts[texts.length - 1]); step++) {
    const visible = await diff.evaluate((root, wanted) => {
      const found = [];
      const frame = root.getBoundingClientRect();
      for (const line of root.querySelectorAll(".editor.modified .view-line")) {
        const text = line.textContent.replace(/\u00a0/g, " ");
        const rect = line.getBoundingClientRect();
        const y = rect.top + rect.height / 2;
        const x = rect.left + Math.min(rect.width, 40) / 2;
        const onScreen = y > frame.top && y < frame.bottom && y < window.innerHeight;
        const top = document.elementFromPoint(x, y);
        if (wanted.includes(text) && onScreen && top !== null && root.contains(top)) {
          found.push(text);
        }
      }
      return found;
    }, texts);
    visible.forEach((text) => seen.add(text));
    await page.mouse.wheel(0, 240);
    // The next frames render the scrolled lines.
    await diff.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  }
  return [...seen];
}

/** Every notification (toasts and the notification centre) that names toolhost, with its severity. */
async function toolhostNotifications(page) {
  await runCommand(page, "Notifications: Show Notifications");
  await page.locator(".notifications-center").waitFor({ state: "visible" });
  await page.screenshot({ path: join(config.artifacts, "notifications.png") });
  const items = await page.locator(".notification-list-item").evaluateAll((els) =>
    els.map((el) => ({
      text: el.textContent ?? "",
      severity: ["warning", "error", "info"].find((s) => el.querySelector(`.codicon-${s}`) !== null) ?? "?",
    })),
  );
  await page.keyboard.press("Escape");
  return items.filter((item) => /toolhost/i.test(item.text));
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
    await runCommand(page, "Toolhost E2E: Ask Language Servers");
    // The first answer waits for VS Code's TypeScript server to load the project.
    const check = await waitFor("the lsp_* answers", (o) => o.kind === "lspCheck", 300_000);
    await page.screenshot({ path: join(config.artifacts, "lsp-proxy.png") });
    note("lsp answers", { results: check.results, diagnostics: check.diagnostics, processes: check.processes, extensionHostPid: check.extensionHostPid, before: check.before, after: check.after });
  });
}

/** The package with its bundled server, on a machine without toolhost: the status bar names
 * the bundled server, grep (ripgrep from the bundle) and an approved edit work. */
async function bundledScenario(page) {
  await section(page, "bundled", async () => {
    const item = page.locator(".statusbar-item", { hasText: "Toolhost" }).first();
    await item.waitFor({ state: "visible" });
    note("status bar", { text: await item.innerText() });
    await runTool(page, "grep", { pattern: "hello" });
    const grep = await waitFor("grep result", runToolResult("grep"));
    note("run tool grep", { result: grep.event.result });
    await runTool(page, "edit_file", { path: "hello.txt", old_string: "hello world", new_string: "hello from the bundled server" });
    await approvalEditor(page, "hello.txt");
    await titleAction(page, "Allow once").waitFor({ state: "visible" });
    await page.screenshot({ path: join(config.artifacts, "bundled-approval.png") });
    note("bundled approval shown", await approvalState(page));
    await titleAction(page, "Allow once").click();
    const allowed = await waitFor("edit_file allowed", runToolResult("edit_file"));
    note("bundled edit", { result: allowed.event.result, onDisk: onDisk() });
    await runCommand(page, "Toolhost E2E: Server Process");
    const server = await waitFor("the server process", (o) => o.kind === "serverProcess");
    note("server process", server);
  });
}

/** toolhost.server.warm: what /proc says of the server while it runs. */
async function warmScenario(page) {
  await section(page, "warm", async () => {
    await runCommand(page, "Toolhost E2E: Server Channels");
    const seen = await waitFor("the server's channels", (o) => o.kind === "serverChannels");
    note("server channels", seen);
  });
}

function toolhostEvents(kind) {
  return observations().filter((o) => o.kind === "toolhost" && o.event.kind === kind);
}

/** The probe's settings check; the command it runs asks (it writes outside the workspace),
 * and the user denies it. */
async function settingsCheck(page, name) {
  const seen = observations().filter((o) => o.kind === "settingsCheck").length;
  await runCommand(page, "Toolhost E2E: Settings Check");
  const box = await dialog(page);
  note(`${name}: bash approval`, { message: await box.locator(".dialog-message-text").innerText() });
  await box.getByRole("button", { name: "Deny...", exact: true }).click();
  await denyReason(page, "");
  const checks = () => observations().filter((o) => o.kind === "settingsCheck");
  await waitFor("the settings check", () => checks().length > seen);
  note(name, checks()[seen]);
}

/** A workspace whose .vscode/settings.json (as an agent would write it) turns the sandbox
 * off, bypasses approvals and allows Bash, and whose .toolhost.toml says bypass: the
 * settings are ignored (and said once), the user's own setting applies, writing the file
 * again mid-session restarts nothing, and the .toolhost.toml applies only once reviewed and
 * trusted from its notification. */
async function workspaceSettingsScenario(page) {
  await section(page, "ignored at start", async () => {
    const ignored = await waitFor("the ignored workspace settings", (o) => o.kind === "toolhost" && o.event.kind === "ignoredSettings");
    const toast = page.locator(".notification-toast", { hasText: "Toolhost ignored toolhost." }).first();
    await toast.waitFor({ state: "visible" });
    await page.screenshot({ path: join(config.artifacts, "ignored-settings.png") });
    note("ignored at start", { keys: ignored.event.keys, toast: await toast.innerText() });
  });
  await section(page, "settings check", () => settingsCheck(page, "settings check"));
  await section(page, "written mid-session", async () => {
    const states = toolhostEvents("state").length;
    const attack = JSON.parse(readFileSync(join(config.workspace, ".vscode", "settings.json"), "utf8"));
    // What a second write adds: one more loosening key, and a client-only one VS Code
    // surely reports as changed.
    writeFileSync(
      join(config.workspace, ".vscode", "settings.json"),
      JSON.stringify({ ...attack, "toolhost.web.allowLoopback": true, "toolhost.trace.server": "messages" }, null, 2),
    );
    const ignored = await waitFor("the newly ignored key", (o) => o.kind === "toolhost" && o.event.kind === "ignoredSettings" && o.event.keys.includes("toolhost.web.allowLoopback"));
    note("written mid-session", { keys: ignored.event.keys });
  });
  await section(page, "settings check after the write", async () => {
    await settingsCheck(page, "settings check after the write");
    note("server states", { states: toolhostEvents("state").map((o) => o.event.state) });
  });
  await section(page, "trust", async () => {
    const notice = await waitFor("toolhost/configUntrusted", (o) => o.kind === "toolhost" && o.event.kind === "configUntrusted");
    const toast = page.locator(".notification-toast", { hasText: "until you review it" }).first();
    await toast.waitFor({ state: "visible" });
    const buttons = await toast.locator(".monaco-button").allInnerTexts();
    note("trust notice", { params: notice.event.params, toast: await toast.innerText(), buttons });
    await toast.getByRole("button", { name: "Review", exact: true }).click();
    const tab = page.locator(".tab.active", { hasText: "(under review)" });
    await tab.first().waitFor({ state: "visible" });
    const shown = await page.locator(".editor-group-container.active .view-lines").first().innerText();
    await page.screenshot({ path: join(config.artifacts, "trust-review.png") });
    const ask = page.locator(".notification-toast", { hasText: "Trust this content of" }).first();
    await ask.waitFor({ state: "visible" });
    note("trust review", { tab: await tab.first().innerText(), shown, ask: await ask.innerText() });
    await ask.getByRole("button", { name: "Trust this content", exact: true }).click();
    const trusted = await waitFor("toolhost/trustConfig", (o) => o.kind === "toolhost" && o.event.kind === "trustConfig");
    await runCommand(page, "Toolhost E2E: Status");
    const status = await waitFor("the status after trust", (o) => o.kind === "status");
    note("trusted", { params: trusted.event.params, result: trusted.event.result, workspaceConfig: status.status.workspaceConfig });
  });
}

/** No usable Python on the machine: the server cannot start; one notification names the
 * fix and the status bar says the server failed. */
async function noPythonScenario(page, started) {
  await section(page, "nopython", async () => {
    const item = page.locator(".statusbar-item", { hasText: "Toolhost" }).first();
    await item.waitFor({ state: "visible" });
    note("no python", { serverState: started.serverState, status: await item.innerText() });
    note("no python notifications", { items: await toolhostNotifications(page) });
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
    if (config.scenario === "nopython") {
      await noPythonScenario(page, started);
      return;
    }
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
    if (config.scenario === "bundled") {
      await bundledScenario(page);
      return;
    }
    if (config.scenario === "lspproxy") {
      await lspProxyScenario(page);
      return;
    }
    if (config.scenario === "warm") {
      await warmScenario(page);
      return;
    }
    if (config.scenario === "workspaceSettings") {
      await workspaceSettingsScenario(page);
      return;
    }
    if (config.scenario === "secret") {
      const { secretScenario } = await import("./secret_scenario.mjs");
      const helpers = { page, runTool, waitFor, dialog, note, section, runToolResult, observations };
      await secretScenario({ ...helpers, artifacts: config.artifacts });
      return;
    }

    // 2. A change of 60 diff lines: it opens in the diff editor with the decisions on the
    //    editor's title bar; every changed line can be scrolled to and is not covered.
    await section(page, "allow", async () => {
      await runTool(page, "read_file", { path: "long.txt" });
      await waitFor("read_file long.txt", runToolResult("read_file", (e) => e.arguments.path === "long.txt"));
      await runTool(page, "write_file", { path: "long.txt", content: LONG_NEW });
      const diff = await approvalEditor(page, "long.txt");
      await page.screenshot({ path: join(config.artifacts, "approval-diff.png") });
      const seen = await scrollThroughDiff(page, diff, CHANGED_LINES);
      await page.screenshot({ path: join(config.artifacts, "approval-diff-last-hunk.png") });
      note("approval diff shown", { ...(await approvalState(page)), seen });
      await titleAction(page, "Allow once").click();
      const allowed = await waitFor("write_file allowed", runToolResult("write_file"));
      note("allow once", { result: allowed.event.result, onDisk: onDisk("long.txt"), tabsLeft: await approvalTabs(page) });
    });

    // 3. A command: no diff, so a modal that shows command, folder, foreground/timeout, sandbox.
    await section(page, "bash", async () => {
      // In the sandbox a command runs without asking; outside it, it asks.
      await runTool(page, "bash", { command: "touch made-by-bash.txt", description: "create a marker file", sandbox: "off" });
      const box = await dialog(page);
      const detail = await box.locator(".dialog-message-detail").innerText();
      const buttons = await box.locator(".monaco-button").allInnerTexts();
      await page.screenshot({ path: join(config.artifacts, "approval-bash.png") });
      note("bash approval shown", { message: await box.locator(".dialog-message-text").innerText(), detail, buttons });
      await box.getByRole("button", { name: "Deny...", exact: true }).click();
      await denyReason(page, "");
      const denied = await waitFor("bash denied", runToolResult("bash"));
      note("bash denied", { result: denied.event.result, created: existsSync(join(config.workspace, "made-by-bash.txt")) });
    });

    // 4. Denied from the diff's title bar with a reason.
    await section(page, "deny", async () => {
      await page.locator(".tab", { hasText: "Approve?" }).first().waitFor({ state: "detached" });
      await runTool(page, "edit_file", { path: "hello.txt", old_string: "hello", new_string: "DENIED" });
      await approvalEditor(page, "hello.txt");
      await titleAction(page, "Deny...").click();
      await page.screenshot({ path: join(config.artifacts, "approval-deny-reason.png") });
      await denyReason(page, "not in this test");
      const denied = await waitFor("edit_file denied", runToolResult("edit_file", (e) => e.arguments.new_string === "DENIED"));
      note("deny", { result: denied.event.result, onDisk: onDisk() });
    });

    // 5. Closing the approval editor is a dismissal.
    await section(page, "dismiss", async () => {
      await page.locator(".tab", { hasText: "Approve?" }).first().waitFor({ state: "detached" });
      await runTool(page, "edit_file", { path: "hello.txt", old_string: "hello", new_string: "DISMISSED" });
      await approvalEditor(page, "hello.txt");
      await page.locator(".tab.active", { hasText: "Approve?" }).locator(".tab-actions .action-label").first().click();
      const dismissed = await waitFor("edit_file dismissed", runToolResult("edit_file", (e) => e.arguments.new_string === "DISMISSED"));
      note("dismiss", { result: dismissed.event.result, onDisk: onDisk() });
    });

    // 6. Always allow: the rule box shows the server's first suggested rule; the edited rule is sent.
    await section(page, "always", async () => {
      await page.locator(".tab", { hasText: "Approve?" }).first().waitFor({ state: "detached" });
      await runTool(page, "edit_file", { path: "hello.txt", old_string: "hello", new_string: "HI" });
      await approvalEditor(page, "hello.txt");
      await titleAction(page, "Always allow...").click();
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

    // 7. Language-model tools: listed by vscode.lm.tools, invoked with vscode.lm.invokeTool.
    await section(page, "lm-tools", async () => {
      await runCommand(page, "Toolhost E2E: LM Check");
      const listed = await waitFor("vscode.lm.tools", (o) => o.kind === "lmTools");
      const lmRead = await waitFor("invokeTool read_file", (o) => o.kind === "lmInvoke" && o.tool === "toolhost_read_file");
      await waitFor("invokeTool read_file notes.md", (o) => o.kind === "lmInvoke" && o.input.path === "notes.md");
      note("lm tools", { names: listed.names, read: lmRead });
    });

    // 8. A writer through invokeTool: VS Code's own confirmation shows the previewed diff,
    //    then no second (toolhost) prompt.
    await section(page, "lm-edit", async () => {
      await runCommand(page, "Toolhost E2E: LM Edit");
      const box = await dialog(page);
      const confirmation = {
        message: await box.locator(".dialog-message-text").innerText(),
        text: await box.innerText(),
        buttons: await box.locator(".monaco-button").allInnerTexts(),
      };
      await page.screenshot({ path: join(config.artifacts, "lm-tool-confirmation.png") });
      const yes = confirmation.buttons.map((b) => b.trim()).find((b) => /^(Yes|Continue|Allow)$/.test(b)) ?? "Yes";
      await box.getByRole("button", { name: yes, exact: true }).click();
      const lmEdit = await waitFor("invokeTool edit_file", (o) => o.kind === "lmInvoke" && o.tool === "toolhost_edit_file");
      note("lm edit", { confirmation, result: lmEdit, onDisk: onDisk("notes.md") });
    });

    // 9. Show Activity: a row opens its call's result as a Markdown document.
    await section(page, "activity", async () => {
      await runCommand(page, "Toolhost: Show Activity");
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "read_file" }).first();
      await row.waitFor({ state: "visible" });
      await row.click();
      const lines = page.locator(".editor-group-container.active .monaco-editor .view-lines");
      await lines.filter({ hasText: "# toolhost read_file" }).first().waitFor({ state: "visible" });
      await page.screenshot({ path: join(config.artifacts, "activity-result.png") });
      note("activity result", {
        tab: await page.locator(".tab.active").first().innerText(),
        language: await page.locator(".statusbar-item[id='status.editor.mode']").first().innerText().catch(() => ""),
        text: await lines.first().innerText(),
      });
    });

    // 10. Revert a Call...: the newest checkpoint is the LM edit of notes.md; the modal says
    //     what will change, and confirming puts the file back.
    await section(page, "revert", async () => {
      const edited = onDisk("notes.md");
      await runCommand(page, "Toolhost: Revert a Call...");
      const row = page.locator(".quick-input-list .monaco-list-row").first();
      await row.waitFor({ state: "visible" });
      const picked = await row.innerText();
      await page.screenshot({ path: join(config.artifacts, "revert-pick.png") });
      await page.keyboard.press("Enter");
      const box = await dialog(page);
      const confirmation = { text: await box.innerText(), buttons: await box.locator(".monaco-button").allInnerTexts() };
      await page.screenshot({ path: join(config.artifacts, "revert-confirm.png") });
      await box.getByRole("button", { name: "Revert this call", exact: true }).click();
      const deadline = Date.now() + STEP_TIMEOUT;
      while (onDisk("notes.md") === edited && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const tab = page.locator(".tab.active", { hasText: "revert-" }).first();
      await tab.waitFor({ state: "visible" });
      const shown = await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText();
      await page.screenshot({ path: join(config.artifacts, "revert-result.png") });
      note("revert", { picked, confirmation, edited, onDisk: onDisk("notes.md"), shown });
    });

    // 10b. An agent's changes: the sessions listed with their agents; the LM tools' session
    //     reviewed as one diff; then all of the "vscode" session's calls (the revert above)
    //     reverted, which puts the LM edit of notes.md back.
    await section(page, "agent changes", async () => {
      await runCommand(page, "Toolhost: Review an Agent's Changes...");
      const rows = page.locator(".quick-input-list .monaco-list-row");
      await rows.first().waitFor({ state: "visible" });
      const listed = await rows.allInnerTexts();
      await page.screenshot({ path: join(config.artifacts, "agent-pick.png") });
      await rows.filter({ hasText: /session vscode-lm ·/ }).first().click();
      await page.locator(".tab.active", { hasText: "changes-" }).first().waitFor({ state: "visible" });
      const review = await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText();
      await page.screenshot({ path: join(config.artifacts, "agent-review.png") });
      note("agent review", { listed, review });

      const before = onDisk("notes.md");
      await runCommand(page, "Toolhost: Revert All of an Agent's Changes...");
      const row = page.locator(".quick-input-list .monaco-list-row", { hasText: /session vscode ·/ }).first();
      await row.waitFor({ state: "visible" });
      await row.click();
      const box = await dialog(page);
      const confirmation = await box.innerText();
      await page.screenshot({ path: join(config.artifacts, "agent-revert-confirm.png") });
      await box.getByRole("button", { name: "Revert all of them", exact: true }).click();
      const deadline = Date.now() + STEP_TIMEOUT;
      while (onDisk("notes.md") === before && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await page.locator(".tab.active", { hasText: "revert-vscode" }).first().waitFor({ state: "visible" });
      const shown = await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText();
      await page.screenshot({ path: join(config.artifacts, "agent-revert-result.png") });
      note("agent revert", { confirmation, before, onDisk: onDisk("notes.md"), shown });
    });

    // 11. No toolhost warning or error notification since the start (default settings).
    await section(page, "notifications", async () => {
      note("notifications", { toolhost: await toolhostNotifications(page) });
    });

    // 12. The status bar item, then Restart Server: the server stops and comes back.
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
