// The "secret" scenario of driver.mjs: `git clone` of a loopback smart-HTTP server with
// basic auth, run from the command palette. The approval modal is allowed, then the
// extension's toolhost/secret handler asks in VS Code's input boxes: the user name, then
// the password in a box with `password: true` (an input of type password), typed here as a
// person would. A second clone is cancelled with Escape at the password box.
// TOOLHOST_E2E_GIT_URL, _USER and _PASSWORD come from the test.

const url = process.env.TOOLHOST_E2E_GIT_URL;
const user = process.env.TOOLHOST_E2E_USER;
const password = process.env.TOOLHOST_E2E_PASSWORD;

function secretEvents(observations) {
  return observations().filter((o) => o.kind === "toolhost" && o.event.kind === "secret").map((o) => o.event);
}

async function typeInto(page, selector, text) {
  const input = page.locator(selector);
  await input.waitFor({ state: "visible" });
  await input.fill(text);
  await page.keyboard.press("Enter");
}

export async function secretScenario({ page, runTool, waitFor, dialog, note, section, runToolResult, observations, artifacts }) {
  await section(page, "secret", async () => {
    await runTool(page, "bash", { command: `git clone ${url} first` });
    const box = await dialog(page);
    await box.getByRole("button", { name: "Allow once", exact: true }).click();
    await typeInto(page, ".quick-input-widget input:not([type=password])", user);
    const hidden = page.locator(".quick-input-widget input[type=password]");
    await hidden.waitFor({ state: "visible" });
    const title = await page.locator(".quick-input-widget .quick-input-title").innerText();
    await page.screenshot({ path: `${artifacts}/secret-prompt.png` });
    await hidden.fill(password);
    await page.keyboard.press("Enter");
    const cloned = await waitFor("the first clone", runToolResult("bash", (e) => e.arguments.command.endsWith(" first")), 120_000);
    note("secret answered", { result: cloned.event.result, title, events: secretEvents(observations) });
  });
  await section(page, "secret cancelled", async () => {
    await runTool(page, "bash", { command: `git clone ${url} second` });
    const box = await dialog(page);
    await box.getByRole("button", { name: "Allow once", exact: true }).click();
    await typeInto(page, ".quick-input-widget input:not([type=password])", user);
    await page.locator(".quick-input-widget input[type=password]").waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    const cancelled = await waitFor("the second clone", runToolResult("bash", (e) => e.arguments.command.endsWith(" second")), 120_000);
    note("secret cancelled", { result: cancelled.event.result, events: secretEvents(observations) });
  });
}
