import assert from "node:assert/strict";
import { test } from "node:test";

import { REVIEW, reviewAndTrust, sha256Hex, TRUST, type TrustUi, untrustedFromStatus, untrustedNotice } from "../common/configTrust";
import type { TrustConfigParams } from "../common/protocol";

const CONTENT = '[shell]\nsandbox = "off"\n';
const PATH = "/ws/.toolhost.toml";
const notice = { path: PATH, sha256: sha256Hex(new TextEncoder().encode(CONTENT)), reason: "new file, not yet approved", ignored: ["shell.sandbox"] };

class ScriptedTrustUi implements TrustUi {
  readonly notices: { message: string; actions: string[] }[] = [];
  readonly shown: string[] = [];
  readonly infos: string[] = [];
  constructor(
    private readonly answers: (string | undefined)[],
    private readonly disk: string | undefined,
  ) {}
  async notify(message: string, ...actions: string[]): Promise<string | undefined> {
    this.notices.push({ message, actions });
    return this.answers.shift();
  }
  async showContent(_title: string, text: string): Promise<void> {
    this.shown.push(text);
  }
  async readBytes(): Promise<Uint8Array | undefined> {
    return this.disk === undefined ? undefined : new TextEncoder().encode(this.disk);
  }
  info(message: string): void {
    this.infos.push(message);
  }
}

test("the notice names the file and what it ignored, and offers Review and Trust", async () => {
  const ui = new ScriptedTrustUi([undefined], CONTENT);
  const sent: TrustConfigParams[] = [];
  const result = await reviewAndTrust(ui, notice, async (p) => (sent.push(p), { trusted: true, message: "" }));
  assert.equal(result, undefined);
  assert.deepEqual(sent, [], "dismissing the notice trusts nothing");
  assert.deepEqual(ui.notices[0].actions, [REVIEW, TRUST]);
  assert.match(untrustedNotice(notice), /ignored \.toolhost\.toml's shell\.sandbox until you review it/);
});

test("Review shows exactly the hashed content, then Trust sends the sha256 that was shown", async () => {
  const ui = new ScriptedTrustUi([REVIEW, TRUST], CONTENT);
  const sent: TrustConfigParams[] = [];
  const result = await reviewAndTrust(ui, notice, async (p) => (sent.push(p), { trusted: true, message: "trusted; applied" }));
  assert.deepEqual(ui.shown, [CONTENT]);
  assert.deepEqual(sent, [{ path: PATH, sha256: notice.sha256 }]);
  assert.equal(result?.trusted, true);
  assert.deepEqual(ui.infos, ["Toolhost: trusted; applied"]);
});

test("a file that changed after the notice is not shown and nothing is trusted", async () => {
  // The agent rewrote the file between the notice and the review.
  const ui = new ScriptedTrustUi([REVIEW, TRUST], CONTENT + 'mode = "bypass"\n');
  const sent: TrustConfigParams[] = [];
  await reviewAndTrust(ui, notice, async (p) => (sent.push(p), { trusted: true, message: "" }));
  assert.deepEqual(ui.shown, []);
  assert.deepEqual(sent, []);
  assert.match(ui.infos[0], /changed since toolhost read it/);
});

test("the command starts at Review; the status lists the untrusted files", async () => {
  const ui = new ScriptedTrustUi([undefined], CONTENT);
  await reviewAndTrust(ui, notice, async () => ({ trusted: true, message: "" }), false);
  assert.deepEqual(ui.shown, [CONTENT], "no first notice: the content is shown at once");
  const status = {
    workspaceConfig: [
      { path: PATH, sha256: "ab", state: "untrusted", reason: "changed since you approved it", ignored: ["policy.mode"] },
      { path: "/other/.toolhost.toml", sha256: "cd", state: "trusted", reason: "" },
      "junk",
    ],
  };
  assert.deepEqual(untrustedFromStatus(status), [{ path: PATH, sha256: "ab", reason: "changed since you approved it", ignored: ["policy.mode"] }]);
  assert.deepEqual(untrustedFromStatus({}), []);
});
